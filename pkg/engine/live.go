package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
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
	scope []string // the vhosts asked for, sorted
	// records are the ownership records of owner (useOwner), per vhost
	// ("" for the broker's own objects); all are every owner's.
	records map[string]*ownership.Record
	all     map[string]map[string]*ownership.Record
	owner   string
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

// has reports whether the object ref, of any kind a vhost holds, is in the
// state read.
func (l *Live) has(ref plan.ObjectRef) bool {
	return plan.ObjectIn(l.current.State.Vhosts[ref.Vhost], ref.Kind, ref.Name) != nil
}

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

// ManagedUsers are the users mqctl's record of the broker's users lists
// for a file without "owner:": a plan of such a file that has a users
// section deletes those of them it does not name.
func (l *Live) ManagedUsers() map[string]bool {
	out := map[string]bool{}
	if r := l.all[""][""]; r != nil {
		for ref := range r.Managed {
			if ref.Kind == kind.User {
				out[ref.Name] = true
			}
		}
	}
	return out
}

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
	// The ownership records are decoded as soon as the exchange listing
	// gives them, while the rest of the vhost is still on its way
	// (ownership.Predecoded).
	var pre ownership.Predecoded
	read, err := e.c.InspectState(broker.WithListedExchanges(ctx, ownership.IsRecord, pre.Add), scope)
	if err != nil {
		record()
		return nil, err
	}
	// The fingerprints hash the state as it was read, records included:
	// from a copy of what splitting the records changes, when asked.
	printed := newFingerprinter(read)
	all, err := ownership.ExtractAllWith(read.State, &pre)
	if err != nil {
		record()
		return nil, err
	}
	if err := record().into(all, read); err != nil {
		return nil, err
	}
	l := &Live{scope: scope, all: all, printed: printed, current: plan.Current{Live: *read}}
	l.useOwner("", nil)
	return l, nil
}

// droppedQueues returns a function that finds the vhosts of l's scope
// where the file's owner's record (useOwner) lists a queue the broker
// holds and desired no longer declares: a plan there deletes it (unless
// it holds the delete back) and reads its messages exactly first. It
// takes what it reads from l now, so that it may run beside the diff and
// the steps after it (forgetRecords).
func (l *Live) droppedQueues(desired *topology.Topology) func() []string {
	scope, records, state := l.scope, l.records, l.current.State
	return func() []string {
		var out []string
		for _, vh := range scope {
			rec, v := records[vh], state.Vhosts[vh]
			if rec == nil || v == nil {
				continue
			}
			dv := desired.Vhosts[vh]
			// The broker's queues that the file drops, looked up in the
			// record: its other entries (bindings, exchanges) are not
			// walked for nothing (at 50,002 objects, 50,000 entries and
			// 17 ms of CPU beside the diff for a no-op plan).
			for name, q := range v.Queues {
				if q == nil || (dv != nil && dv.Queues[name] != nil) {
					continue
				}
				if _, ok := rec.Managed[plan.ObjectRef{Kind: kind.Queue, Vhost: vh, Name: name}]; ok {
					out = append(out, vh)
					break
				}
			}
		}
		return out
	}
}

// useOwner makes the records of owner (a file's "owner:") the ones the
// diff reads as mqctl's and apply writes; the other owners' records list
// the objects the diff leaves to them (plan.Current.Others). With take,
// the records of owner take.From in these vhosts are taken over: merged
// into owner's, and deleted by apply once owner's are written (a team
// that adds owner: to its file, or renames its owner); the record of the
// broker's own objects only with take.Users (the file has a users
// section). take.Objects is set to how many objects they list.
func (l *Live) useOwner(owner string, take *plan.TakeOver) {
	if l.all == nil {
		return
	}
	l.owner = owner
	l.records = make(map[string]*ownership.Record, len(l.all))
	var others map[plan.ObjectRef][]string
	managedByOthers, keptByOthers := map[plan.ObjectRef]bool{}, map[plan.ObjectRef]bool{}
	if take != nil {
		take.Objects, take.Kept = 0, 0
	}
	for vh, byOwner := range l.all {
		rec := byOwner[owner]
		if rec == nil {
			rec = &ownership.Record{Vhost: vh, Owner: owner, Managed: map[plan.ObjectRef]plan.Print{}}
			if d := byOwner[""]; d != nil {
				// The vhost's restore lists (ExtractAll) go with every record.
				rec.RestoreLists, rec.Restore = d.RestoreLists, d.Restore
			}
		}
		takes := take != nil && take.From != owner && (vh != "" || take.Users)
		if takes && byOwner[take.From] != nil {
			r := byOwner[take.From]
			rec = rec.TakeOver(r)
			// What it keeps counts: a record listing kept objects alone
			// (a file naming only what was on the broker before mqctl)
			// was "nothing to take over", and stayed the other owner's.
			kept := keptOnly(r)
			take.Objects += len(r.Managed) + kept
			take.Kept += kept
		}
		l.records[vh] = rec
		for o, r := range byOwner {
			if o == owner || (takes && o == take.From) {
				continue
			}
			for ref := range r.Managed {
				if others == nil {
					others = map[plan.ObjectRef][]string{}
				}
				others[ref] = append(others[ref], o)
				managedByOthers[ref] = true
			}
			// The users that other owners' files keep (on the broker
			// before mqctl): theirs to declare, as what they manage.
			for ref, k := range r.Kept {
				if _, both := r.Managed[ref]; !k || both {
					continue
				}
				if others == nil {
					others = map[plan.ObjectRef][]string{}
				}
				others[ref] = append(others[ref], o)
				keptByOthers[ref] = true
			}
		}
	}
	var othersKeep map[plan.ObjectRef]bool
	for ref := range others {
		slices.Sort(others[ref])
		if keptByOthers[ref] && !managedByOthers[ref] {
			if othersKeep == nil {
				othersKeep = map[plan.ObjectRef]bool{}
			}
			othersKeep[ref] = true
		}
	}
	l.current.Managed, l.current.Owner, l.current.Others = ownership.Merge(l.records), owner, others
	l.current.Created, l.current.Kept, l.current.OthersKeep = nil, nil, othersKeep
	for _, r := range l.records {
		for ref, c := range r.Created {
			if l.current.Created == nil {
				l.current.Created = map[plan.ObjectRef]bool{}
			}
			l.current.Created[ref] = c
		}
		for ref, k := range r.Kept {
			if l.current.Kept == nil {
				l.current.Kept = map[plan.ObjectRef]bool{}
			}
			l.current.Kept[ref] = k
		}
	}
	l.current.TakeOver = take
}

// keptOnly counts the objects record r lists as kept and not as managed.
func keptOnly(r *ownership.Record) int {
	n := 0
	for ref, k := range r.Kept {
		if _, both := r.Managed[ref]; k && !both {
			n++
		}
	}
	return n
}

// forgetRecords lets go of mqctl's ownership records, which only the diff
// needs: a plan holds the rest of the read through its stakes and flows,
// and the records of 50,002 objects are 5 MB of its peak.
func (l *Live) forgetRecords() {
	l.records, l.all = nil, nil
	l.current.Managed, l.current.Others, l.current.OthersKeep = nil, nil, nil
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
	})
	return f.all, f.vhostsPrint
}

// sums are the objects the fingerprints hash, each with the sum of its
// own print (broker.ObjectSums). The exchanges of mqctl's ownership
// records, whose names change with each apply, are one object a vhost
// (recordRef), whose sum is theirs.
func (f *fingerprinter) sums() []plan.ObjectSum {
	objs := broker.ObjectSums(f.snap, f.vhosts)
	out := make([]plan.ObjectSum, 0, len(objs))
	records := map[string]int{} // the index of a vhost's record in out
	for _, o := range objs {
		ref := plan.ObjectRef{Kind: o.Kind, Vhost: o.Vhost, Name: o.Name}
		if o.Binding != nil {
			ref = plan.BindingRef(o.Vhost, o.Binding)
		}
		if o.Kind == kind.Exchange && ownership.IsRecord(o.Name) {
			i, ok := records[o.Vhost]
			if !ok {
				i = len(out)
				records[o.Vhost] = i
				out = append(out, plan.ObjectSum{ObjectRef: recordRef(o.Vhost)})
			}
			// In name order: the sum of the names and sums so far.
			h := sha256.Sum256(fmt.Appendf(nil, "%d %q %d", out[i].Sum, o.Name, o.Sum))
			out[i].Sum = binary.BigEndian.Uint64(h[:8])
			continue
		}
		out = append(out, plan.ObjectSum{ObjectRef: ref, Access: o.Access, Sum: o.Sum})
	}
	return out
}

// recordRef stands for the exchanges of mqctl's ownership records in
// vhost among the objects whose prints a saved plan keeps.
func recordRef(vhost string) plan.ObjectRef {
	return plan.ObjectRef{Kind: kind.Exchange, Vhost: vhost, Name: ownership.Prefix}
}

// fingerprints are l's fingerprints (broker.Live.Fingerprint and
// VhostsFingerprint), computed on the first call.
func (l *Live) fingerprints() (all, vhosts string) {
	if l.printed != nil {
		l.current.Fingerprint, l.current.VhostsFingerprint = l.printed.wait()
	}
	return l.current.Fingerprint, l.current.VhostsFingerprint
}

// objectSums are the objects of l's read with the sums of their prints
// (fingerprinter.sums), nil once forgetPrints let go of the read's copy.
func (l *Live) objectSums() []plan.ObjectSum {
	if l.printed == nil {
		return nil
	}
	return l.printed.sums()
}

// forgetPrints lets go of the copy of the read the prints are made of.
func (l *Live) forgetPrints() { l.printed = nil }

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

// staleObjects says what changed on the broker since saved was made, its
// fingerprint differing from l's (plan.StaleObjects): the objects saved
// names, and those mqctl's records list, name the ones deleted since. The
// kinds the broker would not let the user read are unread, not deleted,
// and so are, for a user who is not an administrator (admin false), the
// vhosts of the scope the broker did not show it (keepUnseenVhosts).
func (l *Live) staleObjects(saved *plan.Plan, admin bool) plan.Stale {
	unread := l.current.Unread
	if !admin {
		unread = maps.Clone(unread)
		if unread == nil {
			unread = map[string][]topology.Unread{}
		}
		for _, vh := range l.scope {
			if l.State().Vhosts[vh] == nil {
				unread[vh] = append(slices.Clip(unread[vh]), topology.Unread{Vhost: vh, Kind: kind.Vhost})
			}
		}
	}
	known := saved.KnownRefs()
	for _, r := range l.records {
		if r != nil {
			for ref := range r.Managed {
				known = append(known, ref)
			}
		}
	}
	for _, vh := range l.scope {
		known = append(known, recordRef(vh))
	}
	access := !strings.HasPrefix(saved.Fingerprint, broker.VhostsPrefix)
	s := plan.StaleObjects(saved.ObjectPrints, l.objectSums(), access, known, unread)
	for i, o := range s.Objects {
		s.Objects[i].Record = o.ObjectRef == recordRef(o.Vhost)
	}
	return s
}

// ReadBrokerRecord reads mqctl's ownership record of the broker's own
// objects (ownership.GlobalParameter) of the owner "": an empty record
// where there is none yet. The error wraps broker.ErrForbidden when the
// user may not read it.
func ReadBrokerRecord(ctx context.Context, c *broker.Client) (*ownership.Record, error) {
	recs, err := ReadBrokerRecords(ctx, c)
	if err != nil {
		return nil, err
	}
	return recs[""], nil
}

// ReadBrokerRecords reads every owner's ownership record of the broker's
// own objects (ownership.GlobalParameterOf), by owner; the owner "" has
// one, empty where there is none yet.
func ReadBrokerRecords(ctx context.Context, c *broker.Client) (map[string]*ownership.Record, error) {
	var list []struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
	}
	if err := c.GetJSON(ctx, &list, "read mqctl's ownership records of the broker's users", "", "global-parameters"); err != nil {
		return nil, err
	}
	out := map[string]*ownership.Record{}
	for _, p := range list {
		owner, ok := ownership.GlobalOwner(p.Name)
		if !ok {
			continue
		}
		var value map[string]any
		dec := json.NewDecoder(bytes.NewReader(p.Value))
		dec.UseNumber()
		if err := dec.Decode(&value); err != nil {
			return nil, ownership.UnreadableGlobal(p.Name, owner, err.Error())
		}
		rec, err := ownership.DecodeGlobal(value, owner)
		if err != nil {
			return nil, err
		}
		rec.Owner = owner
		out[owner] = rec
	}
	if out[""] == nil {
		out[""], _ = ownership.DecodeGlobal(nil, "")
	}
	return out, nil
}

// brokerRecord is a read of the ownership records of the broker's own
// objects (ReadBrokerRecords).
type brokerRecord struct {
	recs map[string]*ownership.Record
	err  error
}

// startBrokerRecord starts reading the broker-level record beside the
// rest of the state; the function it returns waits for it.
func (e *Engine) startBrokerRecord(ctx context.Context) func() brokerRecord {
	done := make(chan brokerRecord, 1)
	go func() {
		recs, err := ReadBrokerRecords(ctx, e.c)
		done <- brokerRecord{recs: recs, err: err}
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

// into puts the records into all[""]. A broker that will not let the user
// read them makes the broker's kinds unread: without the record, what mqctl
// made there is unknown.
func (r brokerRecord) into(all map[string]map[string]*ownership.Record, info *broker.Live) error {
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
	all[""] = r.recs
	return nil
}

func unread(info *broker.Live, vhost string, k kind.Kind) bool {
	_, ok := info.UnreadKind(vhost, k)
	return ok
}
