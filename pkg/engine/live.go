package engine

import (
	"context"
	"errors"
	"maps"
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
	scope   []string // the vhosts asked for, sorted
	records map[string]*ownership.Record
	// printed computes the fingerprints, which only a saved plan needs;
	// nil once they are in current (fingerprints).
	printed *fingerprinter
	// current is the broker's read (broker.Client.InspectState, its
	// fingerprints once printed), mqctl's ownership records split off its topology into
	// Managed: the read itself, not a copy of it. A plan of a file without
	// a users section depends on none of the kinds about users
	// (VhostsFingerprint).
	current plan.Current
}

// State is the state read, mqctl's ownership records split off: every
// kind mqctl manages, the generic ones (kind.Spec.Item) included.
func (l *Live) State() *topology.Topology { return l.current.State }

// exchangeType is the type of exchange x of vhost in the state read; ""
// when it has none.
func (l *Live) exchangeType(vhost, x string) string {
	if v := l.current.State.Vhosts[vhost]; v != nil && v.Exchanges[x] != nil {
		return v.Exchanges[x].Type
	}
	return ""
}

// Unread is, per vhost, the kinds the broker would not let mqctl read, and
// why.
func (l *Live) Unread() map[string][]broker.Unread { return l.current.Unread }

// Server is the management API the state was read from.
func (l *Live) Server() string { return l.current.Server }

// Source is how the state was read: broker.SourceDefinitions or
// broker.SourceLists ("" when no vhost was read).
func (l *Live) Source() string { return l.current.Source }

// keepOwners records in the state read the owners the placements told of
// queues (downQueues), and reports whether it learnt one it did not know.
func (l *Live) keepOwners(owners map[queueRef]string) bool {
	added := false
	for r, o := range owners {
		if l.current.Owned[r.vhost][r.name] == o {
			continue
		}
		if l.current.Owned == nil {
			l.current.Owned = map[string]map[string]string{}
		}
		if l.current.Owned[r.vhost] == nil {
			l.current.Owned[r.vhost] = map[string]string{}
		}
		l.current.Owned[r.vhost][r.name] = o
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
	// The broker's record of its own objects is read beside the state,
	// and so are the facts the broker reports about itself, which a plan
	// needs next (diff); the client keeps them, and a failure here is
	// left for the plan to read again and report.
	record := e.startBrokerRecord(ctx)
	facts := make(chan struct{})
	go func() {
		defer close(facts)
		_, _ = e.c.ReadFacts(ctx)
	}()
	defer func() { <-facts }()
	read, err := e.c.InspectState(ctx, scope)
	if err != nil {
		record()
		return nil, err
	}
	// The fingerprints hash the state as it was read, records included:
	// from a copy of what splitting the records changes, when asked.
	printed := newFingerprinter(read)
	recs, err := ownership.Extract(read.State)
	if err != nil {
		record()
		return nil, err
	}
	if err := record().into(recs, read); err != nil {
		return nil, err
	}
	return &Live{scope: scope, records: recs, printed: printed, current: plan.Current{Live: *read, Managed: ownership.Merge(recs)}}, nil
}

// forgetRecords lets go of mqctl's ownership records, which only the diff
// needs: a plan holds the rest of the read through its stakes and flows,
// and the records of 50,002 objects are 5 MB of its peak.
func (l *Live) forgetRecords() {
	l.records = nil
	l.current.Managed = nil
}

// fingerprinter computes, on the first call of its wait, the
// fingerprints of a state read (broker.Fingerprints): only a plan to be
// saved and the apply of a saved plan need them, which cost 8 ms of a
// 10,002-object plan's CPU and 54 ms of a 50,002-object one's. It
// reads the state's vhosts' exchanges and bindings from copies of their
// map and list, which ownership.Extract changes, and the rest (which
// nothing changes) where it is; it sorts the bindings first, as the print
// always has, so that the state read keeps their order.
type fingerprinter struct {
	snap             *topology.Topology
	vhosts           map[string]broker.VhostInfo
	once             sync.Once
	all, vhostsPrint string
}

func newFingerprinter(read *broker.Live) *fingerprinter {
	snap := &topology.Topology{Vhosts: make(map[string]*topology.Vhost, len(read.State.Vhosts)), Items: read.State.Items}
	for name, v := range read.State.Vhosts {
		v.SortBindings()
		c := *v
		c.Exchanges = maps.Clone(v.Exchanges)
		c.Bindings = slices.Clone(v.Bindings)
		snap.Vhosts[name] = &c
	}
	return &fingerprinter{snap: snap, vhosts: read.Vhosts}
}

// wait computes the fingerprints once, and returns them.
func (f *fingerprinter) wait() (all, vhosts string) {
	f.once.Do(func() {
		f.all, f.vhostsPrint = broker.Fingerprints(f.snap, f.vhosts)
		f.snap = nil
	})
	return f.all, f.vhostsPrint
}

// fingerprints are l's fingerprints (broker.Live.Fingerprint and
// VhostsFingerprint), computed on the first call.
func (l *Live) fingerprints() (all, vhosts string) {
	if l.printed != nil {
		l.current.Fingerprint, l.current.VhostsFingerprint = l.printed.wait()
		l.printed = nil
	}
	return l.current.Fingerprint, l.current.VhostsFingerprint
}

// fingerprintFor is the fingerprint of l a plan of desired records: with
// the users and their access only when the file has a users section.
func (l *Live) fingerprintFor(desired *topology.Topology) string {
	all, vhosts := l.fingerprints()
	if desired.Declares(kind.User) {
		return all
	}
	return vhosts
}

// fingerprintLike is the fingerprint of l made as the saved one was.
func (l *Live) fingerprintLike(saved string) string {
	all, vhosts := l.fingerprints()
	if strings.HasPrefix(saved, broker.VhostsPrefix) {
		return vhosts
	}
	return all
}

// ReadBrokerRecord reads mqctl's ownership record of the broker's own
// objects (ownership.GlobalParameter): an empty record where there is
// none yet. The error wraps broker.ErrForbidden when the user may not read
// it.
func ReadBrokerRecord(ctx context.Context, c *broker.Client) (*ownership.Record, error) {
	var p struct {
		Value map[string]any `json:"value"`
	}
	err := c.GetJSON(ctx, &p, "read mqctl's ownership record of the broker's users", "", "global-parameters", ownership.GlobalParameter)
	if errors.Is(err, broker.ErrNotFound) {
		p.Value, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ownership.DecodeGlobal(p.Value)
}

// brokerRecord is a read of the ownership record of the broker's own
// objects (ReadBrokerRecord).
type brokerRecord struct {
	rec *ownership.Record
	err error
}

// startBrokerRecord starts reading the broker-level record beside the
// rest of the state; the function it returns waits for it.
func (e *Engine) startBrokerRecord(ctx context.Context) func() brokerRecord {
	done := make(chan brokerRecord, 1)
	go func() {
		rec, err := ReadBrokerRecord(ctx, e.c)
		done <- brokerRecord{rec: rec, err: err}
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
	case errors.Is(r.err, broker.ErrForbidden):
		for _, s := range kind.Access() {
			if s.Broker && !unread(info, "", s.Kind) {
				info.Unread[""] = append(info.Unread[""], broker.Unread{Vhost: "", Kind: s.Kind, Reason: r.err.Error()})
			}
		}
		return nil
	case r.err != nil:
		return r.err
	}
	recs[""] = r.rec
	return nil
}

func unread(info *broker.Live, vhost string, k kind.Kind) bool {
	_, ok := info.UnreadKind(vhost, k)
	return ok
}
