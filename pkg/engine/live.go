package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kinds"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Live is the broker's side of a plan: the state of some vhosts, with
// mqctl's ownership records split off it.
type Live struct {
	scope   []string // the vhosts asked for, sorted
	info    *broker.Live
	records map[string]*ownership.Record
	current plan.Current
}

// State is the state read, mqctl's ownership records split off: every
// kind mqctl manages, the generic ones (pkg/kinds) included.
func (l *Live) State() *topology.Topology { return l.current.State }

// Unread is, per vhost, the kinds the broker would not let mqctl read, and
// why.
func (l *Live) Unread() map[string][]broker.Unread { return l.info.Unread }

// Server is the management API the state was read from.
func (l *Live) Server() string { return l.info.Server }

// ReadLive reads the vhosts of scope (sorted; those that do not exist are
// absent) and splits mqctl's ownership records off the topology. A read
// begun before the desired state is complete (loader.Options.Declared
// names its vhosts before its objects are built) is given to Plan
// (PlanOptions.Live), which then does not read again.
func (e *Engine) ReadLive(ctx context.Context, scope []string) (*Live, error) {
	scope = slices.Clone(scope)
	if len(scope) == 0 {
		// To the broker client no vhosts means every vhost: a file that
		// declares none must read (and so plan deletes in) none.
		info := &broker.Live{Server: e.c.Server(), Version: e.c.Version(), Vhosts: map[string]broker.VhostInfo{},
			Queues: map[string]map[string]broker.QueueStats{}, PropertiesKeys: map[string]map[string]string{}, Unread: map[string][]broker.Unread{}}
		return &Live{info: info, records: map[string]*ownership.Record{}, current: plan.Current{State: topology.New()}}, nil
	}
	state, info, err := e.c.ReadTopology(ctx, scope)
	if err != nil {
		return nil, err
	}
	recs, err := ownership.Extract(state)
	if err != nil {
		return nil, err
	}
	if err := e.readItems(ctx, state, info); err != nil {
		return nil, err
	}
	stats := map[plan.ObjectRef]plan.QueueStats{}
	for vh, qs := range info.Queues {
		for q, st := range qs {
			stats[plan.ObjectRef{Kind: plan.KindQueue, Vhost: vh, Name: q}] = plan.QueueStats{Messages: st.Messages, Consumers: st.Consumers}
		}
	}
	var unread []plan.Unread
	for vh, kinds := range info.Unread {
		for _, u := range kinds {
			unread = append(unread, plan.Unread{Vhost: vh, Kind: u.Kind, Reason: u.Reason})
		}
	}
	info.Fingerprint = itemsFingerprint(info.Fingerprint, state)
	return &Live{
		scope:   scope,
		info:    info,
		records: recs,
		current: plan.Current{State: state, Managed: ownership.Merge(recs), Stats: stats, Fingerprint: info.Fingerprint, Unread: unread},
	}, nil
}

// readItems reads the generic kinds' objects (pkg/kinds) of every vhost of
// state into it, concurrently (a few requests at a time). A kind the broker
// will not let the user read is recorded in info.Unread, not as empty.
func (e *Engine) readItems(ctx context.Context, state *topology.Topology, info *broker.Live) error {
	type job struct {
		vhost string
		h     kinds.Handler
		items []*topology.Item
		err   error
	}
	var jobs []*job
	for _, vh := range state.VhostNames() {
		for _, h := range kinds.All() {
			jobs = append(jobs, &job{vhost: vh, h: h})
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
			j.items, j.err = j.h.Read(ctx, e.c, j.vhost)
		}()
	}
	wg.Wait()
	var errs []error
	for _, j := range jobs {
		k := j.h.Spec().Kind
		switch {
		case errors.Is(j.err, broker.ErrForbidden):
			info.Unread[j.vhost] = append(info.Unread[j.vhost], broker.Unread{Kind: k, Reason: j.err.Error()})
		case errors.Is(j.err, broker.ErrVhostNotFound):
			// Deleted since it was read: its items went with it.
		case j.err != nil:
			errs = append(errs, j.err)
		default:
			v := state.Vhosts[j.vhost]
			secret := kinds.SecretFields(j.h)
			for _, it := range j.items {
				it.Secret = secret
				v.Items.Put(it)
			}
		}
	}
	return errors.Join(errs...)
}

// itemsFingerprint adds the generic kinds' objects to the fingerprint of
// the rest of the state, so that a saved plan goes stale when they change.
func itemsFingerprint(base string, state *topology.Topology) string {
	h := sha256.New()
	io.WriteString(h, base)
	enc := json.NewEncoder(h)
	for _, vh := range state.VhostNames() {
		v := state.Vhosts[vh]
		for _, hd := range kinds.All() {
			k := hd.Spec().Kind
			for _, n := range v.Items.Names(k) {
				// The settings themselves, secrets included: a changed
				// password must change the fingerprint. Only their hash
				// leaves the process.
				_ = enc.Encode(v.Items.Get(k, n).Settings) // normalised Args: always encodable
			}
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
