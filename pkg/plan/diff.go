package plan

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// QueueStats is what is at stake in a queue (topology.QueueStats).
type QueueStats = topology.QueueStats

// Current is the broker's side of a diff.
type Current struct {
	// Live is the broker's state as read (topology.Live): its topology
	// (State), the queues' statistics (Queues), the kinds the broker would
	// not let mqctl read (Unread; State holds none of them there, which
	// means "unknown", not "none") and the fingerprint of the read.
	topology.Live
	// Managed is the ownership records: the objects mqctl created or
	// adopted, each with its print as mqctl wrote or adopted it (NoPrint:
	// recorded by an older mqctl).
	Managed Managed
	// Created are the objects of SPEC §9 (users and their access, vhost
	// limits, shovels, federation upstreams and sets) that Managed lists
	// and mqctl's records show it created. One recorded
	// without, by an mqctl that also recorded the users a file named that
	// were on the broker before it (an applied export: guest, the user
	// mqctl logs in as), may not be mqctl's: a file that drops it, or its
	// user, does not delete it or the user's access unless asked
	// (Options.DeleteChanged).
	Created map[ObjectRef]bool
	// Kept are the objects this owner's records list as kept: named by
	// its file, on the broker before mqctl, never mqctl's
	// (Plan.Preexisting, Plan.Kept).
	Kept map[ObjectRef]bool
	// OthersKeep are the objects of Others that the other owners' records
	// list only as kept (on the broker before mqctl; none lists it as
	// managed): a file that names one as it is keeps it too, never
	// adopting it, and one that would change it is a conflict.
	OthersKeep map[ObjectRef]bool
	// Owner is the file's owner (its "owner:", "" without one): Managed
	// is that owner's records.
	Owner string
	// Others are the objects other owners' records list (each with
	// those owners' names, sorted; "" is the owner of files without
	// "owner:"): their files manage them, so this plan neither deletes nor
	// changes them. A file that names one as it is shares it (adopts it
	// too); one that would change it is a conflict (Plan.Conflicts).
	Others map[ObjectRef][]string
	// TakeOver, when set, is the take-over of another owner's records
	// that Managed includes (Plan.TakeOver).
	TakeOver *TakeOver
	// AllMine: every object of State is mqctl's, recorded as State holds
	// it, and Managed is not read: the old side of "mqctl diff", a file
	// taken as mqctl applied it. A plan then deletes what the new side
	// drops, as it would on a broker where mqctl applied the old side.
	AllMine bool
	// Env are the values the files took from the environment
	// (topology.Topology.Env), for the flows (SetFlows): their words show
	// what the files wrote for them (flow.Options.Env).
	Env topology.EnvValues
	// Here is where the broker listens, as its shovels' URIs name it
	// (flow.Options.Here), for the flows (SetFlows); nil where it is not
	// known (mqctl diff, or a user the broker does not show it).
	Here *flow.Here
}

// OldSide is the broker's side of "mqctl diff": old as a broker where
// mqctl applied it holds it (AllMine), read as plan reads a broker for
// desired: only the vhosts desired names. A vhost desired drops
// altogether is not read, so the diff leaves it alone, as plan does
// (several files or teams can share one broker); the broker's own objects
// (users) are old's, as plan reads them whatever the vhosts. old itself is
// not changed. When the two name different owners ("owner:"), old is the
// other owner's (Current.Others), as a plan of desired would find it.
func OldSide(old, desired *topology.Topology) Current {
	if old == nil {
		old = topology.New()
	}
	scoped := *old
	scoped.Vhosts = make(map[string]*topology.Vhost, len(desired.Vhosts))
	for name := range desired.Vhosts {
		if v, ok := old.Vhosts[name]; ok {
			scoped.Vhosts[name] = v
		}
	}
	if old.Owner != desired.Owner {
		// Another owner's file: what old declares is that owner's, as
		// plan finds it on a broker where old was applied, and the new
		// owner's record is empty. Nothing is deleted or changed but what
		// the new side shares, leaves alone or is refused (Conflicts).
		others := map[ObjectRef][]string{}
		for ref := range Recorded(&scoped) {
			others[ref] = []string{old.Owner}
		}
		return Current{Live: topology.Live{State: &scoped}, Owner: desired.Owner, Managed: Managed{}, Others: others}
	}
	return Current{Live: topology.Live{State: &scoped}, AllMine: true}
}

// Managed is what mqctl's ownership records list, per vhost ("" for the
// broker's own objects: users and their access), each object with its
// print: every ObjectRef in the set of vhost v has Vhost v. Each vhost's
// set is its record's own, looked up where it is instead of copied into
// one map with the others (3.7 MB at 50,000 objects).
type Managed map[string]map[ObjectRef]Print

// ManagedOf groups a set of managed objects by vhost.
func ManagedOf(set map[ObjectRef]Print) Managed {
	out := Managed{}
	for ref, p := range set {
		if out[ref.Vhost] == nil {
			out[ref.Vhost] = map[ObjectRef]Print{}
		}
		out[ref.Vhost][ref] = p
	}
	return out
}

// Get returns the print recorded for ref, and whether mqctl manages it.
func (m Managed) Get(ref ObjectRef) (Print, bool) {
	p, ok := m[ref.Vhost][ref]
	return p, ok
}

// All yields every managed object with its print, in no order.
func (m Managed) All() iter.Seq2[ObjectRef, Print] {
	return func(yield func(ObjectRef, Print) bool) {
		for _, set := range m {
			for ref, p := range set {
				if !yield(ref, p) {
					return
				}
			}
		}
	}
}

// BindingEnds are the objects binding b of vhost binds: its source
// exchange and its destination, a queue or an exchange.
func BindingEnds(vhost string, b *topology.Binding) (source, destination ObjectRef) {
	return ObjectRef{Kind: kind.Exchange, Vhost: vhost, Name: b.Source}, ObjectRef{Kind: b.DestinationKind(), Vhost: vhost, Name: b.Destination}
}

// BindingName renders a binding's identity for humans and for ObjectRef.Name.
func BindingName(b *topology.Binding) string {
	src := b.Source
	if src == "" {
		src = "(default)"
	}
	name := appendBindingName(make([]byte, 0, len(src)+len(b.DestinationType)+len(b.Destination)+len(b.RoutingKey)+8), b)
	// As strings.Builder does: name is never written again.
	return unsafe.String(unsafe.SliceData(name), len(name))
}

// appendBindingName appends BindingName(b) to dst.
func appendBindingName(dst []byte, b *topology.Binding) []byte {
	src := b.Source
	if src == "" {
		src = "(default)"
	}
	// "%s -> %s %s [%s]", written out: every binding of a plan is named.
	dst = append(dst, src...)
	dst = append(dst, " -> "...)
	dst = append(dst, b.DestinationType...)
	dst = append(dst, ' ')
	dst = append(dst, b.Destination...)
	dst = append(dst, " ["...)
	dst = append(dst, b.RoutingKey...)
	dst = append(dst, ']')
	if len(b.Arguments) > 0 {
		dst = append(dst, ' ')
		dst = append(dst, b.Arguments.Canonical()...)
	}
	return dst
}

// Ref returns the ObjectRef of a binding.
func BindingRef(vhost string, b *topology.Binding) ObjectRef {
	return ObjectRef{Kind: kind.Binding, Vhost: vhost, Name: BindingName(b)}
}

// Diff computes the plan that turns cur into desired. It is a pure
// function: the same inputs always give the same plan, in a stable order.
//
// Scope: every vhost of desired, plus every vhost holding objects that the
// ownership record lists (so dropping a whole vhost from the file deletes
// what mqctl made there).
func Diff(desired *topology.Topology, cur Current) *Plan {
	return diffWith(desired, cur, Options{}).p
}

// Options change what Diff plans.
type Options struct {
	// DeleteChanged deletes the objects the file dropped that mqctl
	// managed once and that were changed outside mqctl since
	// (Plan.ChangedOutside), which are otherwise left alone: the user asked
	// for exactly that.
	DeleteChanged bool
	// Version is the RabbitMQ version the plan is for (the zero Version:
	// the default): which policy applies to a queue, for the advice of a
	// replace, follows its rules.
	Version rmqversion.Version
	// sequential diffs without prefetch: the tests' reference.
	sequential bool
}

// DiffWith is Diff with options.
func DiffWith(desired *topology.Topology, cur Current, opts Options) *Plan {
	return diffWith(desired, cur, opts).p
}

func diffWith(desired *topology.Topology, cur Current, opts Options) *differ {
	if desired == nil {
		desired = topology.New()
	}
	curState := cur.State
	if curState == nil {
		curState = topology.New()
	}
	d := &differ{cur: cur, desired: desired, opts: opts, curState: curState, found: map[string]int{},
		p: &Plan{FormatVersion: FormatVersion, Fingerprint: cur.Fingerprint, Owner: cur.Owner, TakeOver: cur.TakeOver, Changes: []Change{}}}

	scope := map[string]bool{}
	for name := range desired.Vhosts {
		scope[name] = true
	}
	for vh, set := range cur.Managed {
		if _, ok := curState.Vhosts[vh]; ok && len(set) > 0 {
			scope[vh] = true
		}
	}
	if cur.AllMine {
		for vh := range curState.Vhosts {
			scope[vh] = true
		}
	}
	names := make([]string, 0, len(scope))
	for n := range scope {
		names = append(names, n)
	}
	sort.Strings(names)
	// The broker's own objects (users): first, so that the vhosts'
	// permissions of a user follow the user in the plan.
	for _, spec := range kind.Access() {
		if spec.Broker && desired.Declares(spec.Kind) {
			d.named("", sidesOf(spec, itemKind(spec.Kind), itemSide(desired.Items, spec.Kind), itemSide(curState.Items, spec.Kind)), nil)
		}
	}
	for _, name := range names {
		d.vhost(name, desired.Vhosts[name], curState.Vhosts[name])
	}
	d.stale()
	sortRefs(d.p.Unmanaged)
	sortRefs(d.p.Stale)
	sort.Slice(d.p.ChangedOutside, func(i, j int) bool {
		return refLess(d.p.ChangedOutside[i].ObjectRef, d.p.ChangedOutside[j].ObjectRef)
	})
	sortRefs(d.p.Adopt)
	sortRefs(d.p.Preexisting)
	d.kept()
	sort.Slice(d.p.Others, func(i, j int) bool { return refLess(d.p.Others[i].ObjectRef, d.p.Others[j].ObjectRef) })
	sort.Slice(d.p.Conflicts, func(i, j int) bool { return refLess(d.p.Conflicts[i].ObjectRef, d.p.Conflicts[j].ObjectRef) })
	sort.Slice(d.p.Unread, func(i, j int) bool {
		a, b := d.p.Unread[i], d.p.Unread[j]
		if a.Vhost != b.Vhost {
			return a.Vhost < b.Vhost
		}
		return a.Kind < b.Kind
	})
	return d
}

type differ struct {
	cur      Current
	curState *topology.Topology
	desired  *topology.Topology
	opts     Options
	p        *Plan
	// diffed are the kinds of object, per vhost, that the plan diffed:
	// what the records list as kept of the others stays kept (kept).
	diffed map[diffedKey]bool
	// found counts, per vhost ("" for the broker's own objects), the
	// record's entries whose object the diff met on the broker: when it
	// is the number of entries, none is stale.
	found map[string]int
	// ends holds the prints of binding ends met in the vhost being
	// diffed: the file's (after apply) and the broker's.
	ends *endPrints
	// visits counts the steps of takenDown (bindings indexed, changes
	// examined, bindings listed): the tests check that it grows linearly.
	visits int
	// reasons holds each replace reason once: a plan that replaces
	// thousands of queues for the same change says the same thing of each
	// (4.5 MB of copies for 12,500 queues otherwise).
	reasons map[string]string
	// matchers tell, per vhost of the desired state, which policy applies
	// to a queue: made when a replace reason first needs one.
	matchers map[string]*route.PolicyMatcher
	// policyQs are the queues each policy applies to (policyQueues), by
	// vhost and policy.
	policyQs map[string][]string
	// nameBuf is claimBinding's buffer.
	nameBuf []byte
}

// replaceReason is replaceReason for want's fields, shared between the
// changes that give the same one.
func (d *differ) replaceReason(k Kind, vhost string, want Object, fields []FieldChange) string {
	qtype := QueueType(want)
	fromVhost, policy := false, ""
	var others policyOthers
	if q, ok := As[topology.Queue](want); ok {
		fromVhost = q.TypeFromVhost
		policy = d.queuePolicy(vhost, q)
		if policy != "" {
			others.n, others.named = d.policyQueues(vhost, policy, q.Name)
		}
	}
	key := fmt.Sprintf("%s\x00%s\x00%v\x00%s\x00%d\x00%q", k, qtype, fromVhost, policy, others.n, others.named)
	for _, f := range fields {
		key += fmt.Sprintf("\x00%s\x00%v\x00%v", f.Field, f.Before, f.After)
	}
	if r, ok := d.reasons[key]; ok {
		return r
	}
	if d.reasons == nil {
		d.reasons = map[string]string{}
	}
	r := replaceReason(k, qtype, fromVhost, policy, others, fields) + redeclareNote(d.opts.Version, k, qtype, fields)
	d.reasons[key] = r
	return r
}

// policyQueues returns how many queues of the desired vhost other than
// queue policy applies to, and the first three of them by name: they take
// what is set in it too.
func (d *differ) policyQueues(vhost, policy, queue string) (int, []string) {
	if d.policyQs == nil {
		d.policyQs = map[string][]string{}
	}
	at := vhost + "\x00" + policy
	all, ok := d.policyQs[at]
	if !ok {
		v := d.desired.Vhosts[vhost]
		for _, n := range slices.Sorted(maps.Keys(v.Queues)) {
			if q := v.Queues[n]; q != nil && d.queuePolicy(vhost, q) == policy {
				all = append(all, n)
			}
		}
		d.policyQs[at] = all
	}
	n := len(all)
	var named []string
	for _, o := range all {
		if o == queue {
			n--
		} else if len(named) < 3 {
			named = append(named, o)
		}
	}
	return n, named
}

// queuePolicy names the policy that applies to queue q of the desired
// vhost, "" for none.
func (d *differ) queuePolicy(vhost string, q *topology.Queue) string {
	v := d.desired.Vhosts[vhost]
	if v == nil || len(v.Policies) == 0 {
		return ""
	}
	m, ok := d.matchers[vhost]
	if !ok {
		if d.matchers == nil {
			d.matchers = map[string]*route.PolicyMatcher{}
		}
		m = route.NewPolicyMatcher(v, d.opts.Version)
		d.matchers[vhost] = m
	}
	if p := m.QueuePolicy(q); p != nil {
		return p.Name
	}
	return ""
}

// managed reports whether mqctl's record lists ref, an object the broker
// holds.
func (d *differ) managed(ref ObjectRef) bool {
	_, ok := d.record(ref, NoPrint)
	return ok
}

// record is the print mqctl's record holds for ref, an object the broker
// holds with print live, and whether the record lists it: of a state that
// is all mqctl's (Current.AllMine), live itself.
func (d *differ) record(ref ObjectRef, live Print) (Print, bool) {
	if d.cur.AllMine {
		return live, true
	}
	return d.cur.Managed.Get(ref)
}

// others are the other owners whose records list ref (sorted), nil for
// none.
func (d *differ) others(ref ObjectRef) []string {
	if d.cur.AllMine {
		return nil
	}
	return d.cur.Others[ref]
}

// conflict notes that the file would change ref, which other owners'
// records list (c: the change it would make): apply would change what
// their files declare. The plan is refused.
func (d *differ) conflict(c Change, owners []string) bool {
	if len(owners) == 0 {
		return false
	}
	ref := c.Ref()
	_, shared := d.record(ref, NoPrint)
	shared = shared || d.cur.Kept[ref] // kept by this owner's file too
	d.p.Conflicts = append(d.p.Conflicts, Conflict{ObjectRef: ref, Owners: owners, Owner: d.cur.Owner, Fields: c.Fields, Pos: c.Pos, Shared: shared, Kept: d.cur.OthersKeep[ref]})
	// Neither shared nor adopted (claim said so before the change was known).
	d.p.Others = slices.DeleteFunc(d.p.Others, func(o OtherOwned) bool { return o.ObjectRef == ref })
	d.p.Adopt = slices.DeleteFunc(d.p.Adopt, func(r ObjectRef) bool { return r == ref })
	delete(d.p.Prints, ref)
	return true
}

func (d *differ) stats(vhost, queue string) QueueStats {
	st, _ := d.cur.Queue(vhost, queue)
	return st
}

func (d *differ) add(c Change) { d.p.Changes = append(d.p.Changes, c) }

// claim notes that the file names an existing object, of print live on
// the broker: when it is not yet in the ownership record, apply adopts it;
// when the record holds another print (or none), apply records this one.
// A change the plan makes to the object records the print it leaves.
func (d *differ) claim(ref ObjectRef, live Print) {
	rec, ok := d.record(ref, live)
	owners := d.others(ref)
	if len(owners) > 0 {
		// Recorded: this owner's record lists it already, as managed, or
		// as kept (on the broker before mqctl).
		d.p.Others = append(d.p.Others, OtherOwned{ObjectRef: ref, Owners: owners, Shared: true, Recorded: ok || d.cur.Kept[ref]})
	}
	if !ok && (len(owners) == 0 || d.cur.OthersKeep[ref]) && !d.adoptable(ref) {
		// A user, a user's limits or access, a vhost's limits, a shovel
		// or a federation upstream (set) that was on the broker before
		// mqctl (an export applied names guest, the user mqctl logs in
		// as, other teams' users, an operator's shovels): kept as the
		// file says, never adopted, so never deleted when the file drops
		// it, as a vhost that was there before (Plan.Preexisting).
		d.p.Preexisting = append(d.p.Preexisting, ref)
		return
	}
	if !ok {
		d.p.Adopt = append(d.p.Adopt, ref)
	} else {
		d.found[ref.Vhost]++
	}
	if !ok || rec != live {
		d.setPrint(ref, live)
	}
}

// claimBinding is claim for binding w of vhost, which the broker holds
// with print live. The binding that mqctl's record lists with that print
// and no other owner's does (every binding of a no-op plan) only counts as
// found: its name, which nothing keeps then, is looked up from a buffer
// the next binding reuses, instead of made for each (25,000 strings at
// 50,002 objects, the garbage that made the no-op plan's diff collect).
func (d *differ) claimBinding(vhost string, w *topology.Binding, live Print) {
	d.nameBuf = appendBindingName(d.nameBuf[:0], w)
	// Only looked up with, never kept: the record and the other owners'
	// maps keep their own keys.
	ref := ObjectRef{Kind: kind.Binding, Vhost: vhost, Name: unsafe.String(unsafe.SliceData(d.nameBuf), len(d.nameBuf))}
	if rec, ok := d.record(ref, live); ok && rec == live && len(d.others(ref)) == 0 {
		d.found[vhost]++
		return
	}
	d.claim(BindingRef(vhost, w), live)
}

// kept sets the plan's list of the objects the file keeps (Plan.Kept:
// Plan.Preexisting, and what this owner's records list as kept of the
// kinds and vhosts the plan did not diff) when it is not the one this
// owner's records hold: apply writes it, so that other owners' plans see
// what this file declares.
func (d *differ) kept() {
	if d.cur.AllMine {
		return
	}
	keep := slices.Clone(d.p.Preexisting)
	for r, k := range d.cur.Kept {
		if k && !d.diffed[diffedKey{r.Vhost, r.Kind}] {
			keep = append(keep, r)
		}
	}
	sortRefs(keep)
	keep = slices.Compact(keep)
	n := 0
	for _, k := range d.cur.Kept {
		if k {
			n++
		}
	}
	same := len(keep) == n
	for _, r := range keep {
		same = same && d.cur.Kept[r]
	}
	if !same {
		d.p.Kept, d.p.KeptChanged = keep, true
	}
}

// diffedKey is a kind of object in a vhost ("" the broker's own objects)
// that the plan diffed (differ.diffed).
type diffedKey struct {
	vhost string
	kind  Kind
}

// adoptable reports whether claim adopts ref, an object the file names
// that the broker holds and no record lists: kind.Kind.Adoptable, but for
// a shovel that deletes itself once done (kind.DeletesItself), whoever
// made it. Its record entry is what keeps a later apply, once it is gone,
// from creating it again and moving its messages again (engine's
// keepFinishedShovels, plan.HeldFinished); kept unrecorded, the next plan
// after it finished would create it.
func (d *differ) adoptable(ref ObjectRef) bool {
	if ref.Kind.Adoptable() {
		return true
	}
	if ref.Kind != kind.Shovel {
		return false
	}
	v := d.curState.Vhosts[ref.Vhost]
	if v == nil {
		return false
	}
	it := v.Items.Get(kind.Shovel, ref.Name)
	if it == nil {
		return false
	}
	key, _ := kind.DeletesItself(it.Settings)
	return key != ""
}

// setPrint records that apply sets ref's print in the record.
func (d *differ) setPrint(ref ObjectRef, p Print) {
	if d.p.Prints == nil {
		d.p.Prints = map[ObjectRef]Print{}
	}
	d.p.Prints[ref] = p
}

// leave handles an object on the broker, of print live, that the file
// does not name: it is deleted only when mqctl's record lists it with
// that print, and its user (for a permission, topic permission or user
// limit) is not one changed outside mqctl either. One the record lists
// with another print, or none, was changed outside mqctl: it is left
// alone, and named (unless the options ask to delete it all the same).
func (d *differ) leave(ref ObjectRef, live Print, del func()) {
	rec, ok := d.record(ref, live)
	if owners := d.others(ref); len(owners) > 0 {
		// Another owner's file manages it: never deleted, whatever the
		// options; apply drops it from this owner's record if it was there.
		if ok {
			d.found[ref.Vhost]++
		}
		d.p.Others = append(d.p.Others, OtherOwned{ObjectRef: ref, Owners: owners, Recorded: ok})
		return
	}
	if !ok {
		d.p.Unmanaged = append(d.p.Unmanaged, ref)
		return
	}
	d.found[ref.Vhost]++
	why := ""
	switch {
	case rec == NoPrint:
		why = fmt.Sprintf("an older mqctl recorded this %s without a fingerprint of what it wrote, so mqctl cannot tell whether it is still the one it made or one declared again by hand under the same name", ref.Kind.Label())
	case rec != live && ref.Kind.NamedByEnds():
		why = "its source or destination is no longer the one mqctl bound: declared again, by hand, since"
	case rec != live:
		why = fmt.Sprintf("it is no longer the %s mqctl wrote: declared again under the same name, or changed, by hand since", ref.Kind.Label())
	case ref.Vhost == "" && !d.cur.AllMine && !d.cur.Created[ref]:
		why = fmt.Sprintf("an older mqctl recorded this %s, and recorded alike the users a file named that were on the broker before it (an applied export names guest and the user mqctl logs in as), so mqctl cannot tell whether it created it", ref.Kind.Label())
	case ref.Vhost != "" && !ref.Kind.Adoptable() && !ownedByUser(ref.Kind) && !d.cur.AllMine && !d.cur.Created[ref]:
		// A vhost's limits, a shovel, a federation upstream or set (a
		// user's access goes by its user, below).
		why = fmt.Sprintf("mqctl's record does not say that mqctl created this %s: an older mqctl recorded alike those a file named that were on the broker before it (an applied export names an operator's shovels and limits), and this one records so a shovel that deletes itself once done that was there before it, so as not to run it again", ref.Kind.Label())
	case ownedByUser(ref.Kind):
		user := ObjectRef{Kind: kind.User, Name: ref.Name}
		u := d.curState.Items.Get(kind.User, ref.Name)
		urec, ok := d.cur.Managed.Get(user)
		if d.cur.AllMine && u != nil {
			urec, ok = ItemPrint(u), true
		}
		if ok {
			switch {
			case u == nil || urec == NoPrint || urec != ItemPrint(u):
				why = fmt.Sprintf("its user %q is no longer the one mqctl made: declared again, or changed, by hand since", ref.Name)
			case !d.cur.AllMine && !d.cur.Created[user]:
				why = fmt.Sprintf("an older mqctl recorded its user %q, and recorded alike the users a file named that were on the broker before it (an applied export names guest and the user mqctl logs in as), so mqctl cannot tell whether it created the user and its access", ref.Name)
			}
		}
	}
	if why == "" {
		del()
		return
	}
	d.p.ChangedOutside = append(d.p.ChangedOutside, Outside{ObjectRef: ref, Reason: why, Deleted: d.opts.DeleteChanged})
	if d.opts.DeleteChanged {
		del()
	}
}

// endPrints are the prints of the exchanges and queues (the binding ends)
// of the vhost being diffed, on the file's side (after) or the broker's,
// each side and kind by name: a key of the name alone is hashed and
// compared faster than one of side, kind and name, 50,000 times in a
// no-op plan of 50,002 objects, and takes half the room.
type endPrints [2][2]map[string]Print // [after][exchange, queue]

// newEndPrints is an empty endPrints, its broker's side sized for the
// broker's exchanges and queues, whose prints are all kept (a no-op
// plan's, the most common): grown from empty, the map of 50,000 queues
// made 3.5 MB of garbage as it doubled.
func newEndPrints(exchanges, queues int) *endPrints {
	return &endPrints{
		{make(map[string]Print, exchanges), make(map[string]Print, queues)},
		{map[string]Print{}, map[string]Print{}},
	}
}

// of is the map of side after and kind k; nil for a kind that is no
// binding end, whose prints are not kept, or when e is nil (the broker's
// own objects).
func (e *endPrints) of(after bool, k Kind) map[string]Print {
	if e == nil {
		return nil
	}
	side := 0
	if after {
		side = 1
	}
	switch k {
	case kind.Exchange:
		return e[side][0]
	case kind.Queue:
		return e[side][1]
	}
	return nil
}

// end is the print of a binding end in the vhost being diffed: as the
// broker holds it (have), or as apply leaves it (after: the file's object
// when the file declares it, the broker's otherwise).
func (d *differ) end(after bool, want, have *topology.Vhost, k Kind, name string) Print {
	// An exchange is the source of many bindings, and a queue's print is
	// also its own change's: each is made once.
	m := d.ends.of(after, k)
	if p, ok := m[name]; ok {
		return p
	}
	v := have
	if after && ObjectIn(want, k, name) != nil {
		v = want
	}
	p := EndPrint(v, k, name)
	if m != nil {
		m[name] = p
	}
	return p
}

// bindingPrint is the print of b in the vhost being diffed, before or
// after apply.
func (d *differ) bindingPrint(after bool, want, have *topology.Vhost, b *topology.Binding) Print {
	return BindingPrint(b, d.end(after, want, have, kind.Exchange, b.Source), d.end(after, want, have, b.DestinationKind(), b.Destination))
}

func (d *differ) vhost(name string, want, have *topology.Vhost) {
	empty := topology.NewVhost(name)
	switch {
	case want != nil && have == nil:
		d.add(Change{Action: Create, Kind: kind.Vhost, Vhost: name, Name: name, After: vhostMeta(want), Pos: want.Pos, Print: vhostPrint})
		have = empty
	case want != nil:
		if fields := vhostFields(want, have); len(fields) > 0 {
			after := vhostMeta(want)
			// A PUT replaces the description: one the file leaves out
			// is the broker's, kept (as its tags are, by apply).
			if after.Description == "" {
				after.Description = have.Description
			}
			c := Change{Action: Update, Kind: kind.Vhost, Vhost: name, Name: name,
				Before: vhostMeta(have), After: after, Fields: fields, Pos: want.Pos, Print: vhostPrint}
			if !d.conflict(c, d.others(c.Ref())) {
				d.add(c)
			}
		}
		// An existing vhost is never adopted: mqctl deletes only vhosts it
		// created itself, never one that was there before (such as "/").
	case have != nil:
		want = empty
	default:
		return
	}

	ref := ObjectRef{Kind: kind.Vhost, Vhost: name, Name: name}
	first := len(d.p.Changes) // this vhost's changes start here
	d.ends = newEndPrints(len(have.Exchanges), len(have.Queues))
	if rec, ok := d.record(ref, vhostPrint); ok {
		d.found[name]++ // a vhost's own entry: its record goes with it
		if rec != vhostPrint && want != nil {
			d.setPrint(ref, vhostPrint)
		}
	}
	// gone are the exchanges and queues deleted for good: a replace cannot
	// put back a binding on one of them.
	gone := map[ObjectRef]bool{}
	bk := orderBindings(want, have)
	// The ends of bindings first, then the bindings (whose ends' prints
	// they share), then the kinds that refer to others by name: policies,
	// operator policies, and the generic kinds (kind.Spec.Item), those
	// about access when the file has their section. The ends' names are
	// gathered first: they tell reserve how many are on one side only.
	ends := make([]sides, 0, len(kind.BindingEnds()))
	oneSided := 0
	for _, k := range kind.BindingEnds() {
		s := sidesIn(k, want, have)
		ends = append(ends, s)
		oneSided += s.oneSided
	}
	d.reserve(want, have, bk, oneSided)
	for _, s := range ends {
		d.named(name, s, gone)
	}
	deleted := d.bindings(name, bk)
	d.takenDown(name, have, deleted, gone, d.p.Changes[first:])
	d.othersTakenDown(name, first)
	d.othersReferTo(name, have, first)
	d.deletedWith(name, first)
	d.restored(want, have, d.p.Changes[first:])
	for _, k := range referringKinds {
		d.namedIn(name, k, want, have, gone)
	}
	for _, spec := range kind.Items() {
		if !spec.Broker && d.desired.Declares(spec.Kind) {
			d.namedIn(name, spec.Kind, want, have, gone)
		}
	}

	switch {
	case want != empty:
	case d.managed(ref) && name != "/":
		d.vhostLeft(name, have)
	default:
		d.p.Unmanaged = append(d.p.Unmanaged, ref)
	}
}

// referringKinds are the kinds with a type of their own (topology.Typed)
// that are no binding end, in the registry's order: the kinds of policy,
// which refer to the others by name, and the diff meets after them.
var referringKinds = func() []Kind {
	var out []Kind
	for _, s := range kind.VhostKinds() {
		if _, ok := topology.TypedOf(s.Kind); ok && !s.BindingEnd {
			out = append(out, s.Kind)
		}
	}
	return out
}()

// named diffs the objects of one kind that vhost holds by name (vk; ""
// for the broker's own objects): a create for each only the file has; for
// each on both sides that differs, an update when the broker changes the
// kind in place and a replace otherwise; for each only the broker has, a
// delete or nothing (leave). The replace or delete of a kind that holds
// messages carries what is at stake in it. gone gets those deleted for
// good. A kind the broker would not let mqctl read there plans nothing
// (unread).
//
// The names are met in the order of s.names; the kind's changes are put in
// the order of their names at the end (sortByName), so that a kind whose
// names are not sorted (kept in a map) is sorted only where it changes:
// a no-op plan of 50,002 objects sorted 50,000 names for nothing.
func (d *differ) named(vhost string, s sides, gone map[ObjectRef]bool) {
	spec, vk, want, have, names := s.spec, s.vk, s.want, s.have, s.names
	k := spec.Kind
	if d.unread(vhost, k, want.n) {
		return
	}
	if d.diffed == nil {
		d.diffed = map[diffedKey]bool{}
	}
	d.diffed[diffedKey{vhost, k}] = true
	if !s.sorted {
		first := len(d.p.Changes)
		defer func() { sortByName(d.p.Changes[first:]) }()
	}
	var pre []prefetched
	if !d.opts.sequential {
		pre = d.prefetch(vhost, vk, k, want, have, names)
	}
	ends := d.ends.of(false, k) // the broker's prints, for the bindings
	for i, n := range names {
		var (
			w, h   Object
			fields []FieldChange
		)
		ref := ObjectRef{Kind: k, Vhost: vhost, Name: n}
		if pre != nil {
			w, h, fields = pre[i].w, pre[i].h, pre[i].fields
			if h != nil && ends != nil {
				ends[n] = pre[i].print
			}
		} else {
			w, h = want.get(n), have.get(n)
			if w != nil && h != nil {
				fields = objFields(k, h, w)
			}
		}
		switch {
		case h == nil:
			d.add(Change{Action: Create, Kind: k, Vhost: vhost, Name: n, After: w, Pos: w.ObjectPos(), Print: d.print(vk, true, ref, w)})
		case w != nil:
			switch {
			case pre != nil && pre[i].plain:
				d.found[vhost]++ // claim's whole work for it
			case pre != nil:
				d.claim(ref, pre[i].print)
			default:
				d.claim(ref, d.print(vk, false, ref, h))
			}
			if len(fields) == 0 {
				continue
			}
			c := Change{Action: Update, Kind: k, Vhost: vhost, Name: n, Before: h, After: w, Fields: fields, Pos: w.ObjectPos()}
			if vk.printOver != nil {
				c.Print = vk.printOver(h, w)
			} else {
				c.Print = d.print(vk, true, ref, w)
			}
			if !spec.InPlace {
				c.Action, c.Reason = Replace, d.replaceReason(k, vhost, w, fields)
			}
			if d.conflict(c, d.others(ref)) {
				continue
			}
			d.atStake(spec, &c)
			d.add(c)
		default:
			live := NoPrint
			if pre != nil {
				live = pre[i].print
			} else {
				live = d.print(vk, false, ref, h)
			}
			d.leave(ref, live, func() {
				if gone != nil {
					gone[ref] = true
				}
				c := Change{Action: Delete, Kind: k, Vhost: vhost, Name: n, Before: h}
				d.atStake(spec, &c)
				d.add(c)
			})
		}
	}
}

// prefetched is what named needs of one name, computed beforehand: the
// objects on each side, the broker's one's print, and the fields in which
// the file's differs from it; plain, that the file and the broker both
// hold it and mqctl's record lists it with that print and no other
// owner's does (claim has nothing to do but count it found).
type prefetched struct {
	w, h   Object
	print  Print
	plain  bool
	fields []FieldChange
}

// prefetchFrom is how many names a kind must have for prefetch to work
// them out on every core: each costs a few microseconds (a hash, a
// comparison), and the plan of a 10,002-object vhost waits for some 10,000
// of them after its read.
const prefetchFrom = 1024

// prefetch works out, for each of names (of kind k in vhost), what named
// needs that depends on that name's objects alone, on every core at once;
// nil below prefetchFrom names. The print and the comparison are pure
// functions of the two objects, and the record's and the other owners'
// entries are only read, which nothing changes meanwhile.
func (d *differ) prefetch(vhost string, vk vhostKind, k Kind, want, have side, names []string) []prefetched {
	if len(names) < prefetchFrom {
		return nil
	}
	out := make([]prefetched, len(names))
	workers := min(runtime.GOMAXPROCS(0), 8)
	chunk := (len(names) + workers - 1) / workers
	var wg sync.WaitGroup
	for from := 0; from < len(names); from += chunk {
		to := min(from+chunk, len(names))
		wg.Go(func() {
			for i := from; i < to; i++ {
				f := &out[i]
				f.w, f.h = want.get(names[i]), have.get(names[i])
				if f.h == nil {
					continue
				}
				f.print = vk.print(f.h)
				if f.w != nil {
					f.fields = objFields(k, f.h, f.w)
					ref := ObjectRef{Kind: k, Vhost: vhost, Name: names[i]}
					rec, ok := d.record(ref, f.print)
					f.plain = ok && rec == f.print && len(d.others(ref)) == 0
				}
			}
		})
	}
	wg.Wait()
	return out
}

// namedIn diffs the objects of kind k in vhost name (named).
func (d *differ) namedIn(name string, k Kind, want, have *topology.Vhost, gone map[ObjectRef]bool) {
	d.named(name, sidesIn(k, want, have), gone)
}

// side is one side of the diff of one kind: the names of its objects,
// sorted (names), or for a kind kept in a map as the map yields them
// (each, and has: whether the side holds a name); how many there are; and
// each object by name (nil for none).
type side struct {
	names []string
	each  iter.Seq[string]
	has   func(name string) bool
	n     int
	get   func(name string) Object
}

// sideOf is the side of vk's kind that v holds: for a kind kept in a map,
// its names unsorted (vhostKind.keys).
func sideOf(vk vhostKind, v *topology.Vhost) side {
	get := func(n string) Object { return vk.get(v, n) }
	if vk.keys != nil {
		each, n := vk.keys(v)
		return side{each: each, n: n, get: get, has: func(n string) bool { return vk.has(v, n) }}
	}
	names := vk.names(v)
	return side{names: names, n: len(names), get: get}
}

// itemSide is the side of kind k that the broker-level items s hold.
func itemSide(s topology.Items, k Kind) side {
	names := s.Names(k)
	return side{names: names, n: len(names), get: func(n string) Object { return itemIn(s, k, n) }}
}

// sides are the two sides of the diff of one kind (named): the names of
// both, each once (sorted when both sides' are), and how many of them
// only one side holds.
type sides struct {
	spec       kind.Spec
	vk         vhostKind
	want, have side
	names      []string
	sorted     bool
	oneSided   int
}

// sidesIn are the sides of kind k in the file's vhost want and the
// broker's have.
func sidesIn(k Kind, want, have *topology.Vhost) sides {
	spec, _ := kind.Of(k)
	vk, _ := vhostKindOf(k)
	return sidesOf(spec, vk, sideOf(vk, want), sideOf(vk, have))
}

// sidesOf joins the names of want and have: merged when both are
// sorted, else want's followed by those only have holds, in no order
// (the two sides of a kind are both kept in maps, or both sorted).
func sidesOf(spec kind.Spec, vk vhostKind, want, have side) sides {
	s := sides{spec: spec, vk: vk, want: want, have: have}
	if want.each == nil {
		s.names, s.sorted = union(want.names, have.names), true
	} else {
		s.names = make([]string, 0, max(want.n, have.n))
		for n := range want.each {
			s.names = append(s.names, n)
		}
		for n := range have.each {
			if !want.has(n) {
				s.names = append(s.names, n)
			}
		}
	}
	// Each name is on both sides or on one: the union counts the ones
	// on both once.
	s.oneSided = 2*len(s.names) - want.n - have.n
	return s
}

// sortByName puts cs, the changes of one kind (named), in the order of
// their names, each of which they hold once. The changes are moved once
// each, along the cycles of their order: a plan that replaces thousands
// of queues would otherwise swap its large Change values over and over,
// or copy them all.
func sortByName(cs []Change) {
	if slices.IsSortedFunc(cs, func(a, b Change) int { return strings.Compare(a.Name, b.Name) }) {
		return
	}
	order := make([]int, len(cs)) // order[i]: the change that goes to i
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(cs[a].Name, cs[b].Name) })
	for i := range order {
		if order[i] < 0 || order[i] == i {
			continue
		}
		tmp, j := cs[i], i
		for {
			k := order[j]
			order[j] = -1
			if k == i {
				cs[j] = tmp
				break
			}
			cs[j], j = cs[k], k
		}
	}
}

// print is o's print (of kind vk, named by ref) on the file's side
// (after) or the broker's. An exchange's or queue's is kept for the vhost
// being diffed: it is the end of many bindings (end).
func (d *differ) print(vk vhostKind, after bool, ref ObjectRef, o Object) Print {
	m := d.ends.of(after, ref.Kind)
	if p, ok := m[ref.Name]; ok {
		return p
	}
	p := vk.print(o)
	if m != nil {
		m[ref.Name] = p
	}
	return p
}

// atStake puts into c, the replace or delete of an object of a kind that
// holds messages (a queue), the messages and consumers at stake in it.
func (d *differ) atStake(spec kind.Spec, c *Change) {
	if spec.HoldsMessages {
		st := d.stats(c.Vhost, c.Name)
		c.Messages, c.Consumers = st.Messages, st.Consumers
	}
}

// boundKeys are the bindings of a vhost's two sides in the order of
// their keys (topology.CompareBindings), which the diff walks side by side
// (pairs): the bindings the broker and the file list are nearly always in
// that order already (both are sorted as they are read), and then nothing
// is built. Keying them by Binding.Key in two maps built 50,000 strings
// and two maps of 25,000 entries for a 50,002-object vhost, some 5 MB of
// garbage that a no-op plan made under its memory limit.
type boundKeys struct {
	want, have *topology.Vhost
	// wantAt and haveAt are the indexes of the bindings in key order
	// (stable: duplicates keep their order), nil where the list is in
	// that order already.
	wantAt, haveAt []int
	// wantTwice and haveTwice say that the side lists a key twice: only
	// then does the walk look for runs of one key (a comparison more per
	// binding, each a cache miss or two at 25,000 bindings).
	wantTwice, haveTwice bool
}

func orderBindings(want, have *topology.Vhost) boundKeys {
	bk := boundKeys{want: want, have: have}
	bk.wantAt, bk.wantTwice = keyOrder(want.Bindings)
	bk.haveAt, bk.haveTwice = keyOrder(have.Bindings)
	return bk
}

// keyOrder is nil where bs are in key order, else the indexes of bs in
// that order (stable); twice says that bs list a key more than once.
func keyOrder(bs []*topology.Binding) (order []int, twice bool) {
	sorted := true
	for i := 1; i < len(bs); i++ {
		switch c := topology.CompareBindings(bs[i-1], bs[i]); {
		case c > 0:
			sorted = false
		case c == 0:
			twice = true
		}
	}
	if sorted {
		return nil, twice
	}
	order = make([]int, len(bs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return topology.CompareBindings(bs[i], bs[j]) })
	twice = false
	for i := 1; i < len(order); i++ {
		if topology.CompareBindings(bs[order[i-1]], bs[order[i]]) == 0 {
			twice = true
			break
		}
	}
	return order, twice
}

// pairs calls f for each key of the two sides' bindings, in key order,
// once: w and h are the file's and the broker's binding of that key (nil
// where the side has none; the last listed where a side lists the key
// twice), and have.Bindings[i] for each i in haveIdx are the broker's of
// that key (haveIdx is only valid during the call).
func (bk boundKeys) pairs(f func(w, h *topology.Binding, haveIdx []int)) {
	wb, hb := bk.want.Bindings, bk.have.Bindings
	at := func(bs []*topology.Binding, order []int, i int) (*topology.Binding, int) {
		if order != nil {
			i = order[i]
		}
		return bs[i], i
	}
	var idx []int
	i, j := 0, 0
	for i < len(wb) || j < len(hb) {
		var c int
		switch {
		case j == len(hb):
			c = -1
		case i == len(wb):
			c = 1
		default:
			w, _ := at(wb, bk.wantAt, i)
			h, _ := at(hb, bk.haveAt, j)
			c = topology.CompareBindings(w, h)
		}
		var w, h *topology.Binding
		if c <= 0 {
			w, _ = at(wb, bk.wantAt, i)
			for i++; bk.wantTwice && i < len(wb); i++ {
				next, _ := at(wb, bk.wantAt, i)
				if topology.CompareBindings(next, w) != 0 {
					break
				}
				w = next
			}
		}
		idx = idx[:0]
		if c >= 0 {
			var k int
			h, k = at(hb, bk.haveAt, j)
			idx = append(idx, k)
			for j++; bk.haveTwice && j < len(hb); j++ {
				next, k := at(hb, bk.haveAt, j)
				if topology.CompareBindings(next, h) != 0 {
					break
				}
				h = next
				idx = append(idx, k)
			}
		}
		f(w, h, idx)
	}
}

// reserve makes room in the plan for the changes of a vhost that are
// certain to be made or asked about: an object on one side only is
// created or deleted (or left, when it is not mqctl's). Growing the
// changes by appending alone would, at 50k objects, hold the old and the
// new array at once: 20 MB where the changes need 12. ends are how many
// exchanges and queues are on one side only (sides.oneSided).
func (d *differ) reserve(want, have *topology.Vhost, bk boundKeys, ends int) {
	n := ends
	bk.pairs(func(w, h *topology.Binding, _ []int) {
		if w == nil || h == nil {
			n++
		}
	})
	for _, k := range kind.PolicyKinds() {
		n += oneSided(want.PoliciesOf(k), have.PoliciesOf(k))
	}
	d.p.Changes = slices.Grow(d.p.Changes, n)
}

// oneSided counts the keys in exactly one of a and b.
func oneSided[V any](a, b map[string]V) int {
	n := 0
	for k := range a {
		if _, ok := b[k]; !ok {
			n++
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			n++
		}
	}
	return n
}

// bindings diffs the bindings of vhost name (a binding is its identity:
// it is created or deleted, never changed). It returns which of the
// broker's (by index in its Bindings) it deletes, nil for none.
func (d *differ) bindings(name string, bk boundKeys) (deleted []bool) {
	want, have := bk.want, bk.have
	bk.pairs(func(w, h *topology.Binding, haveIdx []int) {
		switch {
		case w != nil && h == nil:
			d.add(Change{Action: Create, Kind: kind.Binding, Vhost: name, Name: BindingName(w), After: BindingObject{w}, Pos: w.Pos,
				Print: d.bindingPrint(true, want, have, w)})
		case w != nil:
			d.claimBinding(name, w, d.bindingPrint(false, want, have, h))
		default:
			d.leave(BindingRef(name, h), d.bindingPrint(false, want, have, h), func() {
				if deleted == nil {
					deleted = make([]bool, len(have.Bindings))
				}
				for _, i := range haveIdx {
					deleted[i] = true
				}
				d.add(Change{Action: Delete, Kind: kind.Binding, Vhost: name, Name: BindingName(h), Before: BindingObject{h}})
			})
		}
	})
	return deleted
}

// restored gives each replace among changes the prints of the bindings
// it puts back: they hang on the object as the file declares it, and
// their prints change with it.
func (d *differ) restored(want, have *topology.Vhost, changes []Change) {
	for i := range changes {
		c := &changes[i]
		if c.Action != Replace {
			continue
		}
		for _, b := range c.Bindings {
			c.BindingPrints = append(c.BindingPrints, d.bindingPrint(true, want, have, b))
		}
	}
}

// vhostLeft deletes vhost name, which mqctl manages and the file no
// longer declares, only when nothing in it is someone else's: unmanaged
// objects keep it alive, and so do kinds that could not be read (they
// may hold such objects).
func (d *differ) vhostLeft(name string, have *topology.Vhost) {
	for _, u := range d.p.Unmanaged {
		if u.Vhost == name {
			return
		}
	}
	for _, u := range d.p.ChangedOutside {
		if u.Vhost == name && !u.Deleted {
			return
		}
	}
	for _, o := range d.p.Others {
		if o.Vhost == name {
			return
		}
	}
	if len(d.cur.Unread[name]) > 0 {
		return
	}
	var msgs, cons int64
	for _, st := range d.cur.Queues[name] {
		msgs += st.Messages
		cons += st.Consumers
	}
	d.add(Change{Action: Delete, Kind: kind.Vhost, Vhost: name, Name: name, Before: vhostMeta(have), Messages: msgs, Consumers: cons})
}

// takenDown fills in the bindings that each replace or delete of an
// exchange or queue among changes (those of vhost name) takes down: for a
// replace, every current binding on the object that is not itself being
// deleted and whose other end is not deleted for good (a replace puts them
// back); for a delete, every current binding on it that is not deleted on
// its own (bindings mqctl does not manage: the broker drops them with the
// object, for good). Bindings keep the order of have.Bindings.
//
// The current bindings are indexed once by source and by destination, and
// what each one allows (deleted on its own, an end gone) is decided once:
// the work is linear in the changes plus the bindings. Changes that
// replace or delete no exchange or queue (a no-op plan's, most plans')
// take nothing down, and nothing is indexed: at 50,002 objects the index
// was 1.8 MB of garbage the no-op plan made under its memory limit.
func (d *differ) takenDown(name string, have *topology.Vhost, deleted []bool, gone map[ObjectRef]bool, changes []Change) {
	if !slices.ContainsFunc(changes, takesDown) {
		return
	}
	type end struct {
		kind Kind
		name string
	}
	bySource := map[string][]int{}              // exchange name -> indexes into have.Bindings
	byDest := map[end][]int{}                   // destination -> indexes into have.Bindings
	skip := make([]bool, len(have.Bindings))    // deleted on its own: never listed
	endGone := make([]bool, len(have.Bindings)) // an end is deleted for good: no replace puts it back
	for i, b := range have.Bindings {
		d.visits++
		source, dest := BindingEnds(name, b)
		skip[i] = deleted != nil && deleted[i]
		endGone[i] = gone[source] || gone[dest]
		if skip[i] {
			continue
		}
		bySource[b.Source] = append(bySource[b.Source], i)
		if b.DestinationType == topology.DestQueue || b.DestinationType == topology.DestExchange {
			byDest[end{dest.Kind, b.Destination}] = append(byDest[end{dest.Kind, b.Destination}], i)
		}
	}
	for i := range changes {
		d.visits++
		c := &changes[i]
		if !takesDown(*c) {
			continue
		}
		var src []int // the bindings out of an exchange
		if c.Kind == kind.Exchange {
			src = bySource[c.Name]
		}
		dst := byDest[end{c.Kind, c.Name}]
		// The two ascending lists merged, in have.Bindings order; a
		// binding from an exchange to itself is in both, and listed once.
		for _, j := range mergeSorted(src, dst) {
			d.visits++
			if c.Action == Replace && endGone[j] {
				continue
			}
			c.Bindings = append(c.Bindings, have.Bindings[j])
		}
	}
}

// takesDown reports whether c takes bindings down with it: the replace or
// delete of an exchange or a queue.
func takesDown(c Change) bool {
	return (c.Action == Replace || c.Action == Delete) && c.Kind.BindingEnd()
}

// othersTakenDown refuses the delete of an exchange or queue (among the
// changes of vhost name, from first) that would take down a binding
// another owner's record lists: the broker deletes the bindings of an
// exchange or queue with it, and what another owner's file manages is
// never deleted. The plan is refused (a conflict naming the bindings and
// their owners).
func (d *differ) othersTakenDown(name string, first int) {
	if len(d.cur.Others) == 0 || d.cur.AllMine {
		return
	}
	d.refuseDeletes(first, kind.BindingEnds(),
		func(c *Change, held func(what string, owners []string)) {
			for _, b := range c.Bindings {
				if os := d.others(BindingRef(name, b)); len(os) > 0 {
					held(BindingName(b), os)
				}
			}
		},
		func(cf *Conflict, bindings []string) { cf.Bindings = bindings })
}

// othersReferTo refuses the delete of an exchange (among the changes of
// vhost name, from first) that an object another owner's record lists
// names as where its messages go: a queue's dead-letter exchange
// (x-dead-letter-exchange), an exchange's alternate exchange, a policy's
// or operator policy's dead-letter-exchange or alternate-exchange. The
// broker deletes the exchange all the same, and from then on what the
// other owner's object sends there is dropped: team-a's file dropping its
// exchange dlx deleted it while team-b's queue b.work dead-lettered to it
// (4.3.6), and apply refused only while b.work held messages with a TTL.
// The plan is refused (a conflict naming those objects and their owners).
func (d *differ) othersReferTo(name string, have *topology.Vhost, first int) {
	if len(d.cur.Others) == 0 || d.cur.AllMine || have == nil {
		return
	}
	refs := Senders(name, have)
	d.refuseDeletes(first, []Kind{kind.Exchange},
		func(c *Change, held func(what string, owners []string)) {
			for _, r := range refs {
				if os := d.others(r.Ref); r.To == c.Name && len(os) > 0 {
					held(r.String(), os)
				}
			}
		},
		func(cf *Conflict, referrers []string) { cf.Referrers = referrers })
}

// refuseDeletes refuses each delete of an object of kinds among the plan's
// changes from first that heldBy finds held by other owners' objects
// (heldBy calls held with each such object, in words, and its owners):
// the delete leaves the plan, and a conflict takes its place, naming the
// owners, and the objects through name.
func (d *differ) refuseDeletes(first int, kinds []Kind, heldBy func(c *Change, held func(what string, owners []string)), name func(cf *Conflict, what []string)) {
	refused := false
	for i := first; i < len(d.p.Changes); i++ {
		c := &d.p.Changes[i]
		if c.Action != Delete || !slices.Contains(kinds, c.Kind) {
			continue
		}
		var owners, what []string
		heldBy(c, func(w string, os []string) {
			what = append(what, w)
			for _, o := range os {
				if !slices.Contains(owners, o) {
					owners = append(owners, o)
				}
			}
		})
		if len(what) == 0 {
			continue
		}
		slices.Sort(owners)
		cf := Conflict{ObjectRef: c.Ref(), Owners: owners, Owner: d.cur.Owner, Deleted: true}
		name(&cf, what)
		d.p.Conflicts = append(d.p.Conflicts, cf)
		c.Kind = "" // dropped below
		refused = true
	}
	if refused {
		d.p.Changes = slices.DeleteFunc(d.p.Changes, func(c Change) bool { return c.Kind == "" })
	}
}

// Sender is an object of a vhost that sends messages to an exchange it
// names: a queue's dead-letter exchange (x-dead-letter-exchange), an
// exchange's alternate exchange, a policy's or operator policy's
// dead-letter-exchange or alternate-exchange.
type Sender struct {
	Ref ObjectRef
	// What the exchange is to it, in words.
	What string
	// To is the exchange's name.
	To string
}

// String names s and what the exchange is to it.
func (s Sender) String() string {
	return fmt.Sprintf("%s %s, %s", s.Ref.Kind, shownName(s.Ref.Kind, s.Ref.Name), s.What)
}

// Senders are the objects of vhost v (named name) that send messages to
// an exchange they name, sorted by kind and name.
func Senders(name string, v *topology.Vhost) []Sender {
	var out []Sender
	for _, qn := range sortedKeys(v.Queues) {
		if to, ok := v.Queues[qn].Arguments.String("x-dead-letter-exchange"); ok {
			out = append(out, Sender{ObjectRef{Kind: kind.Queue, Vhost: name, Name: qn}, "whose dead-letter exchange it is", to})
		}
	}
	for _, xn := range sortedKeys(v.Exchanges) {
		if to, ok := v.Exchanges[xn].Arguments.String("alternate-exchange"); ok {
			out = append(out, Sender{ObjectRef{Kind: kind.Exchange, Vhost: name, Name: xn}, "whose alternate exchange it is", to})
		}
	}
	for _, k := range kind.PolicyKinds() {
		ps := v.PoliciesOf(k)
		for _, pn := range sortedKeys(ps) {
			for _, key := range []string{"dead-letter-exchange", "alternate-exchange"} {
				if to, ok := ps[pn].Definition.String(key); ok {
					out = append(out, Sender{ObjectRef{Kind: k, Vhost: name, Name: pn}, "whose " + key + " it is", to})
				}
			}
		}
	}
	return out
}

// deletedWith takes out of the unmanaged objects (left alone) the
// bindings that a delete among the changes of vhost name, from first,
// takes down with its exchange or queue: the broker deletes them with it,
// so they are not left alone. The change lists them (its Bindings), and
// apply refuses to delete one out of an exchange without AllowDataLoss
// (BindingsDeletedWith).
func (d *differ) deletedWith(name string, first int) {
	gone := map[string]bool{}
	for _, c := range d.p.Changes[first:] {
		if c.Action != Delete {
			continue
		}
		for _, b := range c.Bindings {
			gone[BindingName(b)] = true
		}
	}
	if len(gone) == 0 {
		return
	}
	d.p.Unmanaged = slices.DeleteFunc(d.p.Unmanaged, func(r ObjectRef) bool {
		return r.Kind == kind.Binding && r.Vhost == name && gone[r.Name]
	})
}

// BindingsDeletedWith is, for each exchange p deletes (by its index in
// p.Changes), the bindings out of it that its delete takes down for good
// to a destination the plan keeps: bindings no file of any owner declares
// (made by hand or by an application, or changed outside mqctl), which the
// broker deletes with the exchange, so that what they matched no longer
// reaches their queue or exchange. Bindings to what the plan deletes too
// are not counted: that loss is the other delete's.
func (p *Plan) BindingsDeletedWith() map[int][]*topology.Binding {
	deleted := map[ObjectRef]bool{}
	for _, c := range p.Changes {
		if c.Action == Delete && c.Kind.BindingEnd() {
			deleted[c.Ref()] = true
		}
	}
	out := map[int][]*topology.Binding{}
	for i, c := range p.Changes {
		if c.Action != Delete || c.Kind != kind.Exchange {
			continue
		}
		for _, b := range c.Bindings {
			if _, dest := BindingEnds(c.Vhost, b); b.Source == c.Name && !deleted[dest] {
				out[i] = append(out[i], b)
			}
		}
	}
	return out
}

// unread reports whether kind could not be read in vhost; if so, it lists
// it in the plan with the number of objects of that kind the file declares
// there, which the plan leaves out.
//
// It is listed only when it matters: the file declares objects of that
// kind there, or mqctl's record says it made some (which a plan would
// otherwise delete). A kind nobody uses there (the shovels of a vhost
// whose file has none, for a user who may not list them) plans nothing,
// silently.
func (d *differ) unread(vhost string, kind Kind, declared int) bool {
	u, ok := d.cur.UnreadKind(vhost, kind)
	if ok && (declared > 0 || d.manages(vhost, kind)) {
		u.Declared = declared
		d.p.Unread = append(d.p.Unread, u)
	}
	return ok
}

// manages reports whether the ownership record holds an object of kind in
// vhost.
func (d *differ) manages(vhost string, kind Kind) bool {
	if d.cur.AllMine {
		return true
	}
	for ref := range d.cur.Managed[vhost] {
		if ref.Kind == kind {
			return true
		}
	}
	return false
}

// itemFields are the settings of an item of kind spec that differ between
// have and want, as the kind compares them (a password against the stored
// hash): secrets are shown as changed, never with either value.
func itemFields(spec kind.Spec, have, want *topology.Item) []FieldChange {
	hs, ws := have.Settings, want.Settings
	if spec.Item != nil && spec.Item.Compare != nil {
		hs, ws = spec.Item.Compare(have.Settings, want.Settings)
	}
	var out []FieldChange
	for _, f := range argFields(hs, ws, "", "settings", nil, !spec.InPlace) {
		if key := strings.TrimPrefix(f.Field, "settings."); want.IsSecret(key) || have.IsSecret(key) {
			f.Before, f.After, f.Masked = maskedOrNil(f.Before), maskedOrNil(f.After), true
		}
		out = append(out, f)
	}
	return out
}

// afterPrint is the print of item want written over have: a user whose
// plaintext password the broker holds already keeps its hash (the
// kind's Write sends it back), so its print is known before the write.
func afterPrint(have, want *topology.Item) Print {
	p := ItemPrint(want)
	if p == NoPrint && want.Kind == kind.User && kind.PasswordMatches(want.Settings, have.Settings) {
		kept := &topology.Item{Kind: kind.User, Name: want.Name, Settings: topology.Args{
			kind.UserTags: want.Settings[kind.UserTags], kind.UserPasswordHash: have.Settings[kind.UserPasswordHash]}}
		return ItemPrint(kept)
	}
	return p
}

func maskedOrNil(v any) any {
	if v == nil {
		return nil
	}
	return topology.MaskSecret(v)
}

// touches reports whether binding b hangs on the exchange or queue name.
func touches(b *topology.Binding, k Kind, name string) bool {
	switch k {
	case kind.Queue:
		return b.DestinationType == topology.DestQueue && b.Destination == name
	case kind.Exchange:
		return b.Source == name || (b.DestinationType == topology.DestExchange && b.Destination == name)
	}
	return false
}

func vhostMeta(v *topology.Vhost) *VhostMeta {
	return &VhostMeta{Name: v.Name, Description: v.Description, DefaultQueueType: v.DefaultQueueType, Tags: v.Tags}
}

// tagsValue is a vhost's tags as a change shows them: nil for none.
func tagsValue(tags []string) any {
	if len(tags) == 0 {
		return nil
	}
	return tags
}

func vhostFields(want, have *topology.Vhost) []FieldChange {
	var out []FieldChange
	// An empty description in the file means "leave the broker's".
	if want.Description != "" && want.Description != have.Description {
		out = append(out, FieldChange{Field: "description", Before: have.Description, After: want.Description})
	}
	// An unset default_queue_type in the file means "leave the broker's".
	if want.DefaultQueueType != "" && want.DefaultQueueType != topology.QueueTypeOrClassic(have.DefaultQueueType) {
		out = append(out, FieldChange{Field: "default_queue_type", Before: nilIfEmpty(have.DefaultQueueType), After: want.DefaultQueueType})
	}
	// Tags the file does not declare (nil) are the broker's to keep; the
	// broker keeps them as a set (order and repeats do not count).
	if want.Tags != nil && !topology.SameTags(want.Tags, have.Tags) {
		out = append(out, FieldChange{Field: "tags", Before: tagsValue(have.Tags), After: tagsValue(want.Tags)})
	}
	return out
}

// definitionFields are the fields by which want differs from have, as
// def describes them: its settings, then its arguments; forces is true
// for a kind that cannot change them in place (kind.Spec.InPlace).
func definitionFields[T any](def topology.Definition[T], have, want T, forces bool) []FieldChange {
	var out []FieldChange
	for _, s := range def.Settings {
		if b, a := s.Value(have), s.Value(want); b != a {
			out = append(out, FieldChange{Field: s.Key, Before: b, After: a, Forces: forces})
		}
	}
	return append(out, argFields(def.Args(have), def.Args(want), def.Skip, def.ArgsKey, def.Forms, forces)...)
}

// argFields lists the arguments that differ between have and want, as
// forms compares them, in the order of their names, leaving skip out
// (when it is not ""). A change shows the values as written.
func argFields(have, want topology.Args, skip, prefix string, forms topology.ArgForms, forces bool) []FieldChange {
	if sameArgs(have, want, skip, forms) {
		return nil // most objects of a plan: no names sorted, nothing made
	}
	var out []FieldChange
	for _, k := range union(have.Keys(), want.Keys()) {
		if k == skip && skip != "" {
			continue
		}
		h, hok := have[k]
		w, wok := want[k]
		if hok && wok && forms.Equal(k, h, w) {
			continue
		}
		var before, after any
		if hok {
			before = topology.Normalize(h)
		}
		if wok {
			after = topology.Normalize(w)
		}
		out = append(out, FieldChange{Field: prefix + "." + k, Before: before, After: after, Forces: forces})
	}
	return out
}

// sameArgs reports whether have and want hold the same arguments, skip
// left out, as argFields compares them.
func sameArgs(have, want topology.Args, skip string, forms topology.ArgForms) bool {
	n := 0
	for k, w := range want {
		if k == skip && skip != "" {
			continue
		}
		h, ok := have[k]
		if !ok || !forms.Equal(k, h, w) {
			return false
		}
		n++
	}
	if _, ok := have[skip]; ok && skip != "" {
		n++
	}
	return len(have) == n
}

// replaceReason says which fields force a replace of an object of kind k
// (a queue of type qtype) and how to avoid it. A policy changes in place,
// so where the file can leave the object's arguments as they were and
// apply each new value with a policy, it says which policy keys; where a
// policy cannot give the new value (the argument wins, a smaller value
// wins and the new one is larger, an argument removed), the object must
// be replaced or declared under a new name.
//
// fromVhost says that the queue's type is its vhost's default_queue_type
// (topology.Queue.TypeFromVhost): a new type then comes from a new default,
// and the way to keep the queue is to write the type it has. policy names
// the policy that applies to the queue ("" for none): a queue takes one
// policy, so a setting goes into that one.
//
// others are the other queues policy applies to (policyQueues): a value
// set in it reaches them too, so the way around the replace is then a
// policy for the queue alone.
func replaceReason(k Kind, qtype string, fromVhost bool, policy string, others policyOthers, fields []FieldChange) string {
	names := make([]string, 0, len(fields))
	var inPlace, keys []string
	avoidable, smaller := true, false
	for _, f := range fields {
		names = append(names, f.Field)
		key, how := "", route.ArgumentWins
		if arg, isArg := strings.CutPrefix(f.Field, "arguments."); isArg {
			key, how = route.PolicyOverride(k.Label(), qtype, arg)
		}
		if key == "" {
			avoidable = false
			continue
		}
		keys = append(keys, key)
		switch {
		case f.After == nil: // a policy cannot take an argument away
			avoidable = false
		case f.Before == nil, how == route.PolicyWins:
			// Without an argument the policy's value applies alone,
			// whichever would win over one.
			inPlace = append(inPlace, key+": "+show(f.After))
		case how == route.SmallerWins && f.Before != nil && topology.Less(f.After, f.Before):
			inPlace = append(inPlace, key+": "+show(f.After))
			smaller = true
		default:
			avoidable = false
		}
	}
	why := fmt.Sprintf("%s %s changed; RabbitMQ cannot change %s's %s after it is declared, so it must be deleted and declared again",
		plural("field", len(names)), strings.Join(names, ", "), k.WithArticle(), "properties and arguments")
	for _, f := range fields {
		if f.Field == "type" && fromVhost && f.Before != nil {
			why += fmt.Sprintf("; the file gives the queue no type, so it takes its vhost's default_queue_type, %v: to keep it a %v queue, write type: %v", f.After, f.Before, f.Before)
			if len(fields) == 1 {
				return why
			}
		}
	}
	with := "with a policy"
	switch {
	case policy != "" && others.n > 0:
		q := make([]string, len(others.named))
		for i, o := range others.named {
			q[i] = strconv.Quote(o)
		}
		if more := others.n - len(others.named); more > 0 {
			q = append(q, fmt.Sprintf("and %d more", more))
		}
		with = fmt.Sprintf("in a policy for this queue alone, of a higher priority than policy %q and holding its settings too (%q applies to it and to %d other %s, %s, which would take the value too; a queue takes one policy, so the new one replaces %q for it)",
			policy, policy, others.n, plural("queue", others.n), strings.Join(q, ", "), policy)
	case policy != "":
		with = fmt.Sprintf("in policy %q, which applies to it (a queue takes one policy: another would replace it, with its settings)", policy)
	}
	if avoidable {
		why += fmt.Sprintf("; to avoid the replace, leave the %s's arguments as they were and set %s %s: a policy changes in place", k.Label(), strings.Join(inPlace, ", "), with)
		if smaller {
			why += ", and the smaller of its value and the argument's applies"
		}
		return why
	}
	// What moves to the new name: a queue's consumers; an exchange's
	// publishers, and the bindings from and to it.
	move := " and move consumers over"
	if k == kind.Exchange {
		move = " with the old one's bindings, and move publishers over"
	}
	why += fmt.Sprintf("; to avoid the replace, declare the new settings under a new %s name%s", k.Label(), move)
	if len(keys) == len(fields) {
		why += fmt.Sprintf(" (set %s %s rather than as arguments, and the next change of it is made in place)", strings.Join(keys, ", "), with)
	}
	return why
}

// redeclareNote says, once per replaced queue or exchange (of kind k; a
// queue of type qtype), what the replace for fields does to the
// applications that declare the object themselves, and what to do: "" when
// none of fields is a setting the broker compares on a declaration
// (rmqversion.RedeclareRefuses). Such an application keeps declaring it as
// it was: once the object is declared again with the new settings, the
// broker refuses that declaration with PRECONDITION_FAILED (406,
// "inequivalent arg") and closes the channel, on every supported version;
// one that declares the new settings before the apply is refused by the
// old object alike. A passive declaration compares nothing.
func redeclareNote(v rmqversion.Version, k Kind, qtype string, fields []FieldChange) string {
	var compared []string
	for _, f := range fields {
		if v.RedeclareRefuses(k, qtype, f.Field) {
			compared = append(compared, f.Field)
		}
	}
	if len(compared) == 0 {
		return ""
	}
	return fmt.Sprintf("; once it is replaced, an application that still declares the %s itself with the old %s gets PRECONDITION_FAILED (406, inequivalent arg) and its channel closed (and one that declares the new %s gets the same from the %s as it is, until the replace): before the apply, have the applications declare it passively (or not at all: the file declares it), and give them the new declaration after it",
		k.Label(), strings.Join(compared, ", "), plural2("value", "values", len(compared)), k.Label())
}

// policyOthers are the other queues a queue's policy applies to: how
// many, and the first of them by name.
type policyOthers struct {
	n     int
	named []string
}

func plural(word string, n int) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// union is the values of a and b, sorted, each once. The lists the diff
// meets mostly come sorted (sortedKeys; a vhost's bindings in
// SortBindings order, which is their keys' order) and are merged as they
// are; one out of order is sorted first, in a copy.
func union(a, b []string) []string { return mergeSorted(ascending(a), ascending(b)) }

// ascending is s when it is sorted, else a sorted copy of it.
func ascending(s []string) []string {
	if slices.IsSorted(s) {
		return s
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// mergeSorted is the union of two ascending lists, in one pass, each
// value once (at 50,000 objects, a set and a sort of the union took a
// tenth of the diff).
func mergeSorted[T cmp.Ordered](a, b []T) []T {
	out := make([]T, 0, max(len(a), len(b)))
	for len(a) > 0 || len(b) > 0 {
		var s T
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0] < b[0]):
			s, a = a[0], a[1:]
		case len(a) == 0 || b[0] < a[0]:
			s, b = b[0], b[1:]
		default:
			s, a, b = a[0], a[1:], b[1:]
		}
		if n := len(out); n == 0 || out[n-1] != s {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortRefs(refs []ObjectRef) {
	sort.Slice(refs, func(i, j int) bool { return refLess(refs[i], refs[j]) })
}

func refLess(a, b ObjectRef) bool {
	if a.Vhost != b.Vhost {
		return a.Vhost < b.Vhost
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Name < b.Name
}

// stale lists the record's entries whose object the broker no longer
// holds (Plan.Stale): apply drops them from the record. An entry counts
// only where its kind was read: a kind the broker would not let mqctl
// read is unknown, not empty, and so is every kind of a vhost that the
// broker no longer holds (its record went with it).
func (d *differ) stale() {
	total := map[string]int{}
	for vh, set := range d.cur.Managed {
		total[vh] = len(set)
	}
	type indexKey struct {
		vhost string
		kind  Kind
	}
	var indexes map[indexKey]func(string) Object // per vhost and kind, its index (vhostKind.index)
	for ref := range d.cur.Managed.All() {
		if total[ref.Vhost] == d.found[ref.Vhost] || ref.Kind == kind.Vhost {
			continue // every entry of the vhost was met (the usual case), or the vhost's own
		}
		if d.unreadKind(ref.Vhost, ref.Kind) {
			continue
		}
		var there bool
		if ref.Vhost == "" {
			// The record of the broker's own objects is cleaned by a plan
			// of a file that speaks for them (its users section): only
			// such an apply writes it, under the lock that keeps two of
			// them from losing each other's entries.
			if !d.curState.Declares(ref.Kind) || !d.desired.Declares(ref.Kind) {
				continue
			}
			there = d.curState.Items.Get(ref.Kind, ref.Name) != nil
		} else {
			v := d.curState.Vhosts[ref.Vhost]
			if v == nil {
				continue
			}
			switch a, ok := vhostKindOf(ref.Kind); {
			case !ok || (ref.Kind.Item() != nil && !d.curState.Declares(ref.Kind)):
				continue
			case a.index != nil:
				// A kind kept in a list (bindings) is indexed once per
				// vhost: every one of its entries is looked for.
				key := indexKey{ref.Vhost, ref.Kind}
				look, made := indexes[key]
				if !made {
					if indexes == nil {
						indexes = map[indexKey]func(string) Object{}
					}
					look = a.index(v)
					indexes[key] = look
				}
				there = look(ref.Name) != nil
			default:
				there = a.get(v, ref.Name) != nil
			}
		}
		if !there {
			d.p.Stale = append(d.p.Stale, ref)
		}
	}
}

// unreadKind reports whether kind k could not be read in vhost.
func (d *differ) unreadKind(vhost string, k Kind) bool {
	_, ok := d.cur.UnreadKind(vhost, k)
	return ok
}

// CheckDeletedEnds refuses what desired writes naming an exchange or queue
// that p deletes (rmqversion.Version.CheckDeletedEnds): the broker has it
// while the plan is made, not when apply writes beside the delete. plan
// and diff both ask it, so that a pull request's diff fails as its plan
// will.
func (p *Plan) CheckDeletedEnds(version rmqversion.Version, desired *topology.Topology) error {
	deleted := map[ObjectRef]bool{}
	for _, c := range p.Changes {
		if c.Action == Delete && c.Kind.BindingEnd() {
			deleted[c.Ref()] = true
		}
	}
	if len(deleted) == 0 {
		return nil
	}
	return version.CheckDeletedEnds(desired, func(vhost string, k kind.Kind, name string) bool {
		return deleted[ObjectRef{Kind: k, Vhost: vhost, Name: name}]
	})
}
