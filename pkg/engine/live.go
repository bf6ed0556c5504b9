package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Live is the broker's side of a plan: the state of some vhosts, with
// mqctl's ownership records split off it.
type Live struct {
	scope []string // the vhosts asked for, sorted
	info  *broker.Live
	// vhostsPrint is the fingerprint of the state without the kinds about
	// users and their access: a plan of a file without a users section
	// depends on none of them (info.Fingerprint has them all).
	vhostsPrint string
	records     map[string]*ownership.Record
	current     plan.Current
}

// State is the state read, mqctl's ownership records split off: every
// kind mqctl manages, the generic ones (kind.Spec.Item) included.
func (l *Live) State() *topology.Topology { return l.current.State }

// Unread is, per vhost, the kinds the broker would not let mqctl read, and
// why.
func (l *Live) Unread() map[string][]broker.Unread { return l.info.Unread }

// Server is the management API the state was read from.
func (l *Live) Server() string { return l.info.Server }

// Source is how the state was read: broker.SourceDefinitions or
// broker.SourceLists ("" when no vhost was read).
func (l *Live) Source() string { return l.info.Source }

// keepOwners records in the state read the owners the placements told of
// queues (downQueues), and reports whether it learnt one it did not know.
func (l *Live) keepOwners(owners map[queueRef]string) bool {
	if l.info == nil {
		return false // a test's Live, made without a read
	}
	added := false
	for r, o := range owners {
		if l.info.Owned[r.vhost][r.name] == o {
			continue
		}
		if l.info.Owned == nil {
			l.info.Owned = map[string]map[string]string{}
		}
		if l.info.Owned[r.vhost] == nil {
			l.info.Owned[r.vhost] = map[string]string{}
		}
		l.info.Owned[r.vhost][r.name] = o
		added = true
	}
	return added
}

// ReadLive reads the vhosts of scope (sorted; those that do not exist are
// absent) and splits mqctl's ownership records off the topology. A read
// begun before the desired state is complete (loader.Options.Declared
// names its vhosts before its objects are built) is given to Plan
// (PlanOptions.Live), which then does not read again.
func (e *Engine) ReadLive(ctx context.Context, scope []string) (*Live, error) {
	// To the broker client no vhosts means every vhost: a file that
	// declares none must read (and so plan deletes in) none. The broker's
	// own objects (users) are read either way.
	scope = slices.Clone(scope)
	var (
		state *topology.Topology
		info  *broker.Live
		err   error
	)
	// The generic kinds are read beside the topology: the vhosts asked
	// for are known, and those that turn out not to exist are left out.
	// So are the facts the broker reports about itself, which a plan
	// needs next (diff); the client keeps them, and a failure here is
	// left for the plan to read again and report.
	items := e.startItems(ctx, scope)
	record := e.startBrokerRecord(ctx)
	facts := make(chan struct{})
	go func() {
		defer close(facts)
		_, _ = e.c.ReadFacts(ctx)
	}()
	defer func() { <-facts }()
	if len(scope) == 0 {
		state, info = topology.New(), emptyLive(e.c)
	} else if state, info, err = e.c.ReadTopology(ctx, scope); err != nil {
		items()
		record()
		return nil, err
	}
	recs, err := ownership.Extract(state)
	if err != nil {
		items()
		record()
		return nil, err
	}
	if err := items().into(state, info); err != nil {
		return nil, err
	}
	if err := record().into(recs, info); err != nil {
		return nil, err
	}
	stats := map[plan.ObjectRef]plan.QueueStats{}
	for vh, qs := range info.Queues {
		for q, st := range qs {
			stats[plan.ObjectRef{Kind: plan.KindQueue, Vhost: vh, Name: q}] = st
		}
	}
	var unread []plan.Unread
	for vh, kinds := range info.Unread {
		for _, u := range kinds {
			u.Vhost = vh
			unread = append(unread, u)
		}
	}
	base := info.Fingerprint
	info.Fingerprint = itemsFingerprint(base, state, true)
	return &Live{
		scope:       scope,
		info:        info,
		vhostsPrint: itemsFingerprint(base, state, false),
		records:     recs,
		current:     plan.Current{State: state, Managed: ownership.Merge(recs), Stats: stats, Fingerprint: info.Fingerprint, Unread: unread},
	}, nil
}

// itemJob is one read of one generic kind in one vhost ("" for the
// broker's own kinds).
type itemJob struct {
	vhost string
	spec  kind.Spec
	items []*topology.Item
	err   error
}

type itemJobs []*itemJob

// startItems starts reading the generic kinds' objects of vhosts (and the
// broker's own), a few requests at a time, beside whatever the caller
// reads meanwhile; the function it returns waits for them.
func (e *Engine) startItems(ctx context.Context, vhosts []string) func() itemJobs {
	var jobs itemJobs
	for _, s := range kind.Access() {
		if s.Broker {
			jobs = append(jobs, &itemJob{spec: s})
		}
	}
	for _, vh := range vhosts {
		for _, s := range kind.Items() {
			if !s.Broker {
				jobs = append(jobs, &itemJob{vhost: vh, spec: s})
			}
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			j.items, j.err = e.c.ReadItems(ctx, j.spec.Kind, j.vhost)
		}()
	}
	return func() itemJobs { wg.Wait(); return jobs }
}

// into puts what the jobs read into state (the vhosts state holds; a vhost
// it lacks does not exist), and a kind the broker would not let the user
// read into info.Unread: unknown, not empty.
func (jobs itemJobs) into(state *topology.Topology, info *broker.Live) error {
	var errs []error
	for _, j := range jobs {
		k := j.spec.Kind
		if j.vhost != "" && state.Vhosts[j.vhost] == nil {
			continue // no such vhost (a plan creates it): nothing was there
		}
		switch {
		case errors.Is(j.err, broker.ErrForbidden):
			info.Unread[j.vhost] = append(info.Unread[j.vhost], broker.Unread{Kind: k, Reason: j.err.Error()})
		case errors.Is(j.err, broker.ErrVhostNotFound):
			// Deleted since it was read: its items went with it.
		case j.err != nil:
			errs = append(errs, j.err)
		default:
			items := &state.Items
			if j.vhost != "" {
				items = &state.Vhosts[j.vhost].Items
			}
			state.Declare(k) // read: what is not there is not there
			secret := kind.SecretFields(k)
			for _, it := range j.items {
				it.Secret = secret
				items.Put(it)
			}
		}
	}
	return errors.Join(errs...)
}

// itemsFingerprint adds the generic kinds' objects to the fingerprint of
// the rest of the state, so that a saved plan goes stale when they change;
// without access, the kinds about users and their access are left out
// (another team's new user must not make a plan that manages none stale),
// and the fingerprint says so ("sha256-vhosts:"): fingerprintOf picks the
// one a saved plan was made with.
func itemsFingerprint(base string, state *topology.Topology, access bool) string {
	h := sha256.New()
	io.WriteString(h, base)
	enc := json.NewEncoder(h)
	if access {
		for _, s := range kind.Access() {
			k := s.Kind
			for _, n := range state.Items.Names(k) {
				_ = enc.Encode(state.Items.Get(k, n).Settings)
			}
		}
	}
	specs := kind.VhostItems()
	if access {
		specs = kind.Items()
	}
	for _, vh := range state.VhostNames() {
		v := state.Vhosts[vh]
		for _, s := range specs {
			k := s.Kind
			for _, n := range v.Items.Names(k) {
				// The settings themselves, secrets included: a changed
				// password must change the fingerprint. Only their hash
				// leaves the process.
				_ = enc.Encode(v.Items.Get(k, n).Settings) // normalised Args: always encodable
			}
		}
	}
	if !access {
		return vhostsPrefix + hex.EncodeToString(h.Sum(nil))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// vhostsPrefix starts a fingerprint without the kinds about users.
const vhostsPrefix = "sha256-vhosts:"

// fingerprintFor is the fingerprint of l a plan of desired records: with
// the users and their access only when the file has a users section.
func (l *Live) fingerprintFor(desired *topology.Topology) string {
	if desired.Declares(kind.User) {
		return l.info.Fingerprint
	}
	return l.vhostsPrint
}

// fingerprintLike is the fingerprint of l made as the saved one was.
func (l *Live) fingerprintLike(saved string) string {
	if strings.HasPrefix(saved, vhostsPrefix) {
		return l.vhostsPrint
	}
	return l.info.Fingerprint
}

// emptyLive is what a read of no vhost found.
func emptyLive(c *broker.Client) *broker.Live {
	return &broker.Live{Server: c.Server(), Version: c.Version(), Vhosts: map[string]broker.VhostInfo{},
		Queues: map[string]map[string]broker.QueueStats{}, PropertiesKeys: map[string]map[string]string{}, Unread: map[string][]broker.Unread{}}
}

// brokerRecord is a read of the ownership record of the broker's own
// objects (ownership.GlobalParameter).
type brokerRecord struct {
	value map[string]any
	err   error
}

// startBrokerRecord starts reading the broker-level record beside the
// rest of the state; the function it returns waits for it.
func (e *Engine) startBrokerRecord(ctx context.Context) func() brokerRecord {
	done := make(chan brokerRecord, 1)
	go func() {
		var p struct {
			Value map[string]any `json:"value"`
		}
		err := e.c.GetJSON(ctx, &p, "read mqctl's ownership record of the broker's users", "", "global-parameters", ownership.GlobalParameter)
		done <- brokerRecord{value: p.Value, err: err}
	}()
	var r *brokerRecord
	return func() brokerRecord {
		if r == nil {
			got := <-done
			r = &got
		}
		return *r
	}
}

// into puts the record into recs[""]. A broker that will not let the user
// read it makes the broker's kinds unread: without the record, what mqctl
// made there is unknown.
func (r brokerRecord) into(recs map[string]*ownership.Record, info *broker.Live) error {
	switch {
	case errors.Is(r.err, broker.ErrNotFound):
		r.value = nil
	case errors.Is(r.err, broker.ErrForbidden):
		for _, s := range kind.Access() {
			if s.Broker && !unread(info, "", s.Kind) {
				info.Unread[""] = append(info.Unread[""], broker.Unread{Kind: s.Kind, Reason: r.err.Error()})
			}
		}
		return nil
	case r.err != nil:
		return r.err
	}
	rec, err := ownership.DecodeGlobal(r.value)
	if err != nil {
		return err
	}
	recs[""] = rec
	return nil
}

func unread(info *broker.Live, vhost string, k kind.Kind) bool {
	for _, u := range info.Unread[vhost] {
		if u.Kind == k {
			return true
		}
	}
	return false
}
