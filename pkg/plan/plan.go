// Package plan computes what apply must do: a pure diff between the desired
// topology (the file) and the current one (the broker), as typed change
// records with before/after values, in the plan's three forms (the text
// view, the public JSON plan of pkg/planjson, the saved plan). The order
// apply carries them out in is pkg/apply's (apply.Order).
package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// FormatVersion is the format_version of the public JSON plan ("mqctl plan
// -o json", WriteJSON, docs/plan-json.md). It changes only when a field
// changes meaning or disappears; new fields may be added. Version 2: the
// broker fingerprint left the JSON plan (it lives in the saved plan only),
// "pos" is omitted when unknown instead of "{}", and the messages and
// consumers at stake are always present on a change that can lose messages.
// The saved plan ("mqctl plan --out") has its own kind and version
// (SavedKind, SavedVersion).
const FormatVersion = planjson.FormatVersion

// Action is what a change does to one object.
type Action string

const (
	Create  Action = "create"
	Update  Action = "update"  // in place: policies, vhost metadata
	Replace Action = "replace" // delete and re-declare: queues and exchanges are immutable
	Delete  Action = "delete"
)

// Kind is the kind of object a change is about (pkg/kind holds what
// every stage knows about each).
type Kind = kind.Kind

// Object is one object's full state in a change: a *VhostMeta, the
// object itself for every kind with a type of its own held by name (a
// topology.Named: *topology.Exchange, *Queue, *Policy; kind_defined.go),
// a BindingObject or an ItemObject (every kind carried as topology.Item),
// each in the file of its kinds (kind_*.go) with its objectType
// (objects.go): the kinds it carries, where a vhost holds them, how it is
// read back from the saved and the JSON plan. Where the file declares it
// is its ObjectPos (zero when read from the broker). A typed kind's
// object is held as the pointer it is: a wrapper of two words cost an
// allocation for each object put in an Object (the 50,002-object replace
// plan took 6.2 s of CPU with one, 5.2 s without).
type Object interface {
	ObjectPos() topology.Pos
}

// objectMethods answer what the plan's stages ask of a kind: the fields
// an object differs by from the broker's, its settings in the text view,
// its public JSON, its normalised form read back, the kinds it carries.
// Plan's own types of Object have them; a typed kind's object gets them
// from its topology.Typed (kind_defined.go), through the functions of
// object.go (objFields, objHeadline, …), which ask each the right one.
type objectMethods interface {
	Object
	// fieldsFrom returns the fields by which the object differs from have
	// (of the same kind k), compared as the diff compares them.
	fieldsFrom(k Kind, have Object) []FieldChange
	// headline is the few words after the object's name in the text view
	// (an exchange's type), "" for none.
	headline() string
	// describe lists its settings, for a create in the text view.
	describe() []string
	// json is the object in the public JSON plan.
	json() *planjson.Object
	// normalize puts the values read from JSON back into the types the
	// diff makes.
	normalize()
	// carries reports whether objects of kind k are of the object's type.
	carries(k Kind) bool
}

// FieldChange is one field that differs, as before → after. A nil side
// means the field is absent there.
type FieldChange struct {
	Field  string `json:"field"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	// Forces is true when this field cannot change in place and forces a
	// replace of the object.
	Forces bool `json:"forces_replace,omitempty"`
	// Masked is true when Before and After are shown masked (the field
	// holds a secret): two values that read alike may differ.
	Masked bool `json:"masked,omitempty"`
}

// Change is one action on one object.
type Change struct {
	Action Action        `json:"action"`
	Kind   Kind          `json:"kind"`
	Vhost  string        `json:"vhost"`
	Name   string        `json:"name"`
	Before Object        `json:"-"`
	After  Object        `json:"-"`
	Fields []FieldChange `json:"fields,omitempty"`
	// Reason explains a replace: which fields forced it, and how to avoid it.
	Reason string `json:"reason,omitempty"`
	// Bindings a replace takes down with the object and puts back after
	// it; for a delete, the bindings that go with the object for good.
	Bindings []*topology.Binding `json:"bindings,omitempty"`
	// Messages and Consumers at stake: the queue's contents and consumers
	// when it is deleted or replaced.
	Messages  int64 `json:"messages,omitempty"`
	Consumers int64 `json:"consumers,omitempty"`
	// MessagesAtLeast: Messages is a lower bound (a stream, whose depth
	// could not be counted exactly at that moment).
	MessagesAtLeast bool `json:"messages_at_least,omitempty"`
	// Delayed of the Messages wait for a delayed retry (RabbitMQ 4.3+
	// quorum queues), as the queue's statistics counted them: a passive
	// declare does not see them (rmqversion PassiveDeclareHidesDelayed).
	Delayed int64 `json:"-"`
	// DeadLettering of the Messages wait in the queue until its
	// dead-letter exchange takes them (a quorum queue's at-least-once
	// dead-lettering), as its statistics counted them: a passive declare
	// does not see them either.
	DeadLettering int64 `json:"-"`
	// Pos is where the desired object is declared (empty for deletes).
	Pos topology.Pos `json:"pos,omitempty"`
	// Print is the print of the object as apply leaves it (for a create,
	// update or replace; NoPrint when only the broker can tell: apply
	// reads it back), which the ownership record keeps.
	Print Print `json:"-"`
	// BindingPrints are, for a replace, the prints of Bindings as apply
	// puts them back (their ends' prints change with the replace).
	BindingPrints []Print `json:"-"`
}

// ObjectRef names an object.
type ObjectRef struct {
	Kind  Kind   `json:"kind"`
	Vhost string `json:"vhost"`
	Name  string `json:"name"`
}

// Plan is the full answer of `mqctl plan`.
type Plan struct {
	FormatVersion string `json:"format_version"`
	// Vhosts are the vhosts the plan was made for (the broker is read for
	// these when a saved plan is applied).
	Vhosts []string `json:"vhosts,omitempty"`
	// Owner is the file's "owner:" ("" without one): whose ownership
	// records the plan reads and apply writes.
	Owner string `json:"owner,omitempty"`
	// TakeOver, when set, takes over another owner's ownership records:
	// what they list counts as Owner's, and apply merges them into
	// Owner's records and deletes them (a team that adds owner: to its
	// file, or renames its owner: mqctl plan --take-over-from).
	TakeOver *TakeOver `json:"-"`
	Changes  []Change  `json:"changes"`
	// Unmanaged are objects on the broker that the file does not name and
	// mqctl does not manage: listed, counted, and left alone.
	Unmanaged []ObjectRef `json:"unmanaged,omitempty"`
	// Fingerprint of the broker state the plan was made against; a saved
	// plan is refused when the broker's fingerprint no longer matches.
	Fingerprint string `json:"fingerprint,omitempty"`
	// ObjectPrints are a print of each object of the broker as read, for
	// a saved plan (the objects the fingerprint covers): apply compares
	// them with the broker's to name what changed when the fingerprint
	// differs (StaleObjects).
	ObjectPrints []ObjectPrint `json:"-"`
	// Broker is the broker a saved plan was made against (nil for a plan
	// not saved, or saved by an mqctl that did not record it): apply
	// refuses it on another (SavedFor).
	Broker *Broker `json:"-"`
	// Adopt are objects the file names that already exist on the broker
	// exactly as declared but are not recorded as managed yet: apply
	// records them without touching them.
	Adopt []ObjectRef `json:"adopt,omitempty"`
	// Preexisting are the broker-level objects of SPEC §9 (users, user
	// limits, permissions and topic permissions; vhost limits, shovels,
	// federation upstreams and upstream sets: kind.Kind.Adoptable) the
	// file names that were on the broker before mqctl and that no
	// ownership record lists (an applied export names them all: guest,
	// the user mqctl logs in as, other teams' users, an operator's
	// shovels and limits). mqctl keeps them as the file says, in place,
	// but never adopts them, as a vhost that was there before: a file
	// that drops one leaves it alone. A vhost's limits are one object:
	// set on the vhost before mqctl, they stay the vhost's, the keys the
	// file adds included.
	Preexisting []ObjectRef `json:"preexisting,omitempty"`
	// QueuesDeletedFirst are the vhosts whose queue deletes run before
	// the apply's writes, not after them (kind.Spec.DeleteLate): their
	// max-queues has room for the queues the apply declares only once
	// those it deletes are gone. The engine decides it from the limits it
	// read, again when a saved plan is applied.
	QueuesDeletedFirst []string `json:"-"`
	// Kept, when KeptChanged, is the list of objects the owner's records
	// list as kept after apply (Preexisting, and those the records list
	// as kept of kinds the plan does not cover): not mqctl's, never
	// deleted, but seen by other owners' plans, which leave them alone or
	// share them and are refused a change to them, as to what this owner
	// manages.
	Kept        []ObjectRef `json:"-"`
	KeptChanged bool        `json:"-"`
	// Unread are the kinds of object the broker would not let mqctl read
	// in a vhost. Their absence from the state read means "unknown", not
	// "none": the plan changes nothing of those kinds there (it neither
	// creates what the file declares nor deletes what mqctl recorded), and
	// keeps a vhost that left the file.
	Unread []Unread `json:"unread,omitempty"`
	// ChangedOutside are objects the file does not name that mqctl's
	// record lists but that are no longer the ones mqctl wrote: declared
	// again by hand under the same name, or changed by hand, since (or
	// recorded by an older mqctl, which kept no print to tell). They are
	// not deleted (unless the plan was made with DeleteChanged), and apply
	// drops them from the record: they are someone else's now.
	ChangedOutside []Outside `json:"changed_outside,omitempty"`
	// Stale are objects mqctl's record lists that no longer exist: apply
	// drops them from the record, a no-op apply included.
	Stale []ObjectRef `json:"stale,omitempty"`
	// Others are the objects on the broker that other owners' records
	// list (the files of other teams, each with its "owner:"): left alone
	// when the file does not name them (and dropped from this owner's
	// record if it listed them), shared when the file names them as they
	// are.
	Others []OtherOwned `json:"other_owners,omitempty"`
	// Conflicts are the changes the file would make to objects other
	// owners manage: the plan is refused (ConflictError), nothing changes.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Refusals are what the plan refuses before anything changes (a
	// refused plan, RefusedError's, has no changes): the JSON plan's, as
	// the error says them to a person.
	Refusals []Refused `json:"-"`
	// OutdatedRecords are the vhosts ("" the broker's users) whose
	// ownership record is in an older format: apply rewrites them, a
	// no-op apply included.
	OutdatedRecords []string `json:"-"`
	// UnfinishedRecords are the vhosts whose ownership record an apply
	// stopped while rewriting it left as several exchanges: apply writes
	// it as one again, a no-op apply included.
	UnfinishedRecords []string `json:"-"`
	// Restores are the restore lists (internal exchanges mqctl.restore.<n>)
	// left by applies stopped during a replace: apply puts back the
	// bindings they list and deletes them, a no-op apply included.
	Restores []Restore `json:"-"`
	// Prints are the record entries apply sets besides those of the
	// changes it makes: the objects the file names that are left as they
	// are (adopted, or recorded without a print or with another one).
	Prints map[ObjectRef]Print `json:"-"`
	// Preflight is the broker's answer to the plan, when it was asked
	// (apply always asks unless told not to; plan --preflight).
	Preflight *Preflight `json:"preflight,omitempty"`
	// Held are the changes the diff found that mqctl holds back, each
	// with why (HoldBack): apply makes none of them, and the next plan
	// finds them again.
	Held []Held `json:"held,omitempty"`
	// Notes are what mqctl told the user while it made the plan (on
	// stderr beside the text view), for the JSON plan.
	Notes []string `json:"notes,omitempty"`
	// Env are the values the file took from the environment
	// (topology.Topology.Env): a saved plan keeps those its changes hold
	// anyway, so that applying it shows none of them (HideText).
	Env topology.EnvValues `json:"-"`
	// Flows is what the plan does to messages (pkg/flow): before is the
	// broker as read, after the broker as apply leaves it (Project). nil
	// when it was not computed.
	Flows *flow.Diff `json:"flows,omitempty"`
	// FlowsUnknown are the vhosts whose flows mqctl could not tell, and
	// why: it could not read all that routes messages there.
	FlowsUnknown []FlowUnknown `json:"flows_unknown,omitempty"`
}

// FlowUnknown is a vhost whose message flows mqctl could not tell.
type FlowUnknown struct {
	Vhost  string `json:"vhost"`
	Reason string `json:"reason"`
}

// Why mqctl holds a change back (Held.Cause): stable codes, in the JSON
// plan.
const (
	// HeldOwnUser: the change deletes or changes the user mqctl is
	// connected as, or its access, which would lock this apply and every
	// later one out.
	HeldOwnUser = "own_user"
	// HeldInternalOwner: the queue is owned by a plugin (internal_owner),
	// and the broker refuses its deletion by clients.
	HeldInternalOwner = "internal_owner"
	// HeldProtectedUser: the user is tagged protected, and the broker
	// refuses to change or delete it through the management API.
	HeldProtectedUser = "protected_user"
	// HeldNodeDown: the queue lives on a node that is down (or without a
	// majority of its members online): its messages cannot be counted.
	HeldNodeDown = "node_down"
	// HeldUnseenVhost: the broker did not show the vhost to the user (it
	// does not exist, or the user has no permissions on it).
	HeldUnseenVhost = "unseen_vhost"
	// HeldFinished: a shovel mqctl created that deleted itself once done
	// (src-delete-after), declared as mqctl created it: created again it
	// would move its messages again.
	HeldFinished = "finished"
)

// Held is a change the plan holds back, and why.
type Held struct {
	ObjectRef
	Action Action `json:"action"`
	// Cause says why, as a stable code (HeldOwnUser, …).
	Cause string `json:"cause"`
	// Reason says why in words, and what the user can do.
	Reason string `json:"reason"`
}

// HoldBack moves out of the plan's changes, into Held, every change for
// which hold gives a cause (and says why); the others keep their order.
func (p *Plan) HoldBack(hold func(c *Change) (cause, reason string)) {
	kept := p.Changes[:0]
	for i := range p.Changes {
		// hold is given the change in place: a copy handed to it went to
		// the heap, one for every change at every call (14 MB a call for
		// a plan deleting 50,002 objects). kept only ever writes over
		// changes already looked at.
		c := &p.Changes[i]
		if cause, reason := hold(c); cause != "" {
			p.Held = append(p.Held, Held{ObjectRef: c.Ref(), Action: c.Action, Cause: cause, Reason: reason})
			continue
		}
		kept = append(kept, *c)
	}
	clear(p.Changes[len(kept):])
	p.Changes = kept
}

// Restore is what apply does with the restore lists of one vhost, left by
// applies stopped during a replace (engine's putBack): it declares again
// the bindings they list that the broker lacks (Missing, as
// source -> destination_type destination [key]) and deletes the lists.
type Restore struct {
	Vhost   string   `json:"vhost"`
	Lists   []string `json:"lists"`
	Missing []string `json:"missing,omitempty"`
}

// TakeOver is a plan's take-over of another owner's records.
type TakeOver struct {
	// From is the owner taken over from ("" the owner of the files
	// without owner:).
	From string `json:"from"`
	// Objects is how many objects its records in the plan's scope list.
	Objects int `json:"objects"`
	// Kept is how many of Objects its records list as kept only (on the
	// broker before mqctl, named by its file: ownership.Record.Kept): the
	// file's owner keeps them after the take-over, never manages them.
	Kept int `json:"kept,omitempty"`
	// Users: its record of the broker's users is taken over too (the file
	// has a users section).
	Users bool `json:"users"`
}

// OtherOwned is an object other owners' records list.
type OtherOwned struct {
	ObjectRef
	// Owners are the other owners ("" for files without "owner:").
	Owners []string `json:"owners"`
	// Shared: the file names it too, as it is; apply records it for this
	// owner as well. Otherwise the file does not name it, and it is left
	// alone.
	Shared bool `json:"shared"`
	// Recorded: this owner's record lists it too: when not Shared (it
	// was shared), apply drops it from there; when Shared, it is shared
	// already, and apply records nothing (otherwise it adopts it).
	Recorded bool `json:"-"`
}

// OwnerName names an owner for humans ("" is the owner of the files
// without "owner:").
func OwnerName(owner string) string {
	if owner == "" {
		return "the default owner"
	}
	return fmt.Sprintf("%q", owner)
}

// ownerPhrase is "owner \"x\"", or "the default owner".
func ownerPhrase(owner string) string {
	if owner == "" {
		return OwnerName(owner)
	}
	return "owner " + OwnerName(owner)
}

// OwnerNames names owners for humans.
func OwnerNames(owners []string) string {
	names := make([]string, len(owners))
	for i, o := range owners {
		names[i] = OwnerName(o)
	}
	return strings.Join(names, ", ")
}

// Conflict is a change the file would make to an object other owners
// manage.
type Conflict struct {
	ObjectRef
	// Owners are the other owners whose records list it.
	Owners []string `json:"owners"`
	// Owner is the file's own owner.
	Owner string `json:"owner"`
	// Fields are what the file would change.
	Fields []FieldChange `json:"fields,omitempty"`
	// Pos is where the file declares it.
	Pos topology.Pos `json:"pos,omitempty"`
	// Deleted: the file no longer declares it, and deleting it would
	// delete Bindings, which the other owners' records list (the broker
	// drops an exchange's or queue's bindings with it).
	Deleted  bool     `json:"deleted,omitempty"`
	Bindings []string `json:"bindings,omitempty"`
	// Referrers: the file no longer declares the exchange, and the other
	// owners' objects named here send messages to it (a queue's
	// dead-letter exchange, an exchange's alternate exchange, a policy's).
	Referrers []string `json:"referrers,omitempty"`
	// Shared: the file's own owner's record lists it too (both files
	// declared it alike), so neither file may change it while the other
	// still declares it.
	Shared bool `json:"shared,omitempty"`
	// Kept: the other owners' records list it only as kept (it was on
	// the broker before mqctl, and their files name it: Current.OthersKeep),
	// not as managed.
	Kept bool `json:"kept,omitempty"`
}

// ConflictError is the refusal of a plan with conflicts: each object, the
// file's place, what differs, both owners and the fix. nil when there is
// none.
func (p *Plan) ConflictError() error {
	if len(p.Conflicts) == 0 {
		return nil
	}
	var sb strings.Builder
	kept := 0
	for i, c := range p.Conflicts {
		if i > 0 {
			sb.WriteString("\n")
		}
		reason, fix := c.text()
		sb.WriteString(reason + ". " + fix)
		if c.Kept {
			kept++
		}
	}
	// What the other owners' records list: objects they manage, objects
	// they only keep (on the broker before mqctl, named by their file).
	what := "manages"
	switch kept {
	case 0:
	case len(p.Conflicts):
		what = "keeps"
	default:
		what = "manages or keeps"
	}
	return fmt.Errorf("plan refused, nothing was changed: %d %s of the file would change or delete what another owner %s:\n%s",
		len(p.Conflicts), plural("change", len(p.Conflicts)), what, sb.String())
}

// text is conflict c in words: what the file would do to what another
// owner manages (after the file's place, when known), and the fix, which
// ends with the take-over for an owner that is the file's own past.
func (c Conflict) text() (reason, fix string) {
	where := ""
	if c.Pos.Line > 0 {
		where = c.Pos.String() + ": "
	}
	vh := ""
	if c.Vhost != "" {
		vh = fmt.Sprintf(" in vhost %q", c.Vhost)
	}
	them := OwnerNames(c.Owners)
	if c.Deleted && len(c.Referrers) > 0 {
		return fmt.Sprintf("%s %s%s: this file (%s) no longer declares it, and %s manages %s: once it is deleted, the messages sent there are dropped. "+
				"mqctl breaks nothing another owner's file manages",
				c.Kind, shownName(c.Kind, c.Name), vh, ownerPhrase(c.Owner), them, strings.Join(c.Referrers, "; ")),
			fmt.Sprintf("Declare the %s here again, or have %s stop sending there in their file first (or declare the %s in their file: apply shares it, and it stays while they declare it). %s", c.Kind, them, c.Kind, takeOverHint(c.Owners))
	}
	if c.Deleted {
		return fmt.Sprintf("%s %s%s: this file (%s) no longer declares it, and deleting it would delete %s %s, which %s manages (the broker deletes the bindings of an exchange or queue with it). "+
				"mqctl deletes nothing another owner's file manages",
				c.Kind, shownName(c.Kind, c.Name), vh, ownerPhrase(c.Owner), plural("binding", len(c.Bindings)), strings.Join(c.Bindings, ", "), them),
			fmt.Sprintf("Declare the %s here again, or have %s take %s out of their file first. %s", c.Kind, them, plural2("it", "them", len(c.Bindings)), takeOverHint(c.Owners))
	}
	var diffs []string
	for _, f := range c.Fields {
		if f.Masked && show(f.Before) == show(f.After) {
			// A secret shows as *** on both sides: say that it differs.
			diffs = append(diffs, fmt.Sprintf("%s: the broker holds another secret than this file's (masked)", f.Field))
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s: %s on the broker, %s in this file", f.Field, show(f.Before), show(f.After)))
	}
	if c.Kind.Container() {
		// mqctl never adopts a vhost it did not create: it stays its
		// creator's, and cannot be shared or handed over.
		return fmt.Sprintf("%svhost %q was created by %s's file, and this file (%s) declares it otherwise: %s. "+
				"mqctl changes nothing another owner's file manages, and a vhost stays the owner's that created it",
				where, c.Name, them, ownerPhrase(c.Owner), strings.Join(diffs, "; ")),
			fmt.Sprintf("Declare these settings here as the broker holds them (or leave them out), or have %s change them in their file. %s", them, takeOverHint(c.Owners))
	}
	if c.Shared {
		// Both records list it: have the other owner change it, and their
		// plan is refused as this one is; declaring it here as it is
		// changes nothing. One file must let it go first.
		both, verb := fmt.Sprintf("this file's owner (%s) and %s both manage it", OwnerName(c.Owner), them), "manages"
		if c.Kept {
			both, verb = fmt.Sprintf("%s keeps it (it was on the broker before mqctl, and their file names it), and this file's owner (%s) lists it too", them, OwnerName(c.Owner)), "keeps"
		}
		return fmt.Sprintf("%s%s %s%s is shared: %s, and this file declares it otherwise: %s. "+
				"mqctl changes nothing another owner's file %s, and while both files declare it, neither may change it",
				where, c.Kind, shownName(c.Kind, c.Name), vh, both, strings.Join(diffs, "; "), verb),
			fmt.Sprintf("Declare it here as the broker holds it; to change it, have %s take it out of their file first (their apply then leaves it to this one), then change it here, "+
				"or take it out of this file and apply, then have %s change it in theirs. %s",
				them, them, takeOverHint(c.Owners))
	}
	if c.Kept {
		return fmt.Sprintf("%s%s %s%s is kept by %s (it was on the broker before mqctl, and their file names it), and this file (%s) declares it otherwise: %s. "+
				"mqctl changes nothing another owner's file keeps",
				where, c.Kind, shownName(c.Kind, c.Name), vh, them, ownerPhrase(c.Owner), strings.Join(diffs, "; ")),
			fmt.Sprintf("Declare it here as the broker holds it, or have %s change it in their file; "+
				"to hand it over to this file, declare it here as it is (apply keeps it for this file too), then take it out of %s's file (their apply then leaves it to this one), then change it here. %s",
				them, them, takeOverHint(c.Owners))
	}
	return fmt.Sprintf("%s%s %s%s is managed by %s, and this file (%s) declares it otherwise: %s. "+
			"mqctl changes nothing another owner's file manages",
			where, c.Kind, shownName(c.Kind, c.Name), vh, them, ownerPhrase(c.Owner), strings.Join(diffs, "; ")),
		fmt.Sprintf("Declare it here as the broker holds it, or have %s change it in their file; "+
			"to hand it over to this file, declare it here as it is (apply shares it), then take it out of %s's file (their apply then leaves it to this one), then change it here. %s",
			them, them, takeOverHint(c.Owners))
}

// takeOverHint says what to do when owners (other owners of objects the
// file would change) are the file's own past: owner: added or renamed
// since it was applied.
func takeOverHint(owners []string) string {
	var past []string
	for _, o := range owners {
		if o = topology.OwnerArg(o); !slices.Contains(past, o) {
			past = append(past, o)
		}
	}
	slices.Sort(past)
	for i, o := range past {
		past[i] = "--take-over-from " + o
	}
	return fmt.Sprintf("If that owner is this file's before its owner: was added or renamed, plan and apply once with %s: the file's owner then takes over its records.",
		strings.Join(past, " or "))
}

// Outside is an object mqctl managed once that was changed outside mqctl.
type Outside struct {
	ObjectRef
	// Reason says what changed, and what the user can do about it.
	Reason string `json:"reason"`
	// Deleted is true when the plan deletes it all the same, because the
	// user asked for exactly that (--delete-changed).
	Deleted bool `json:"deleted"`
}

// Unread is one kind of object not read in one vhost (topology.Unread).
type Unread = topology.Unread

// Ref is the object c changes.
func (c *Change) Ref() ObjectRef { return ObjectRef{Kind: c.Kind, Vhost: c.Vhost, Name: c.Name} }

// RisksMessages reports whether carrying out c can lose the messages its
// object holds: it deletes or replaces an object of a kind that holds
// messages (kind.Spec.HoldsMessages: queues). The plan reads what is at
// stake in such an object, and apply checks it again when it deletes it.
func (c *Change) RisksMessages() bool {
	return c.Kind.HoldsMessages() && (c.Action == Delete || c.Action == Replace)
}

// MessagesText renders the messages at stake: "3 messages", "at least 1
// message", "messages unknown (…)" for a lower bound of none, "5 messages (2 waiting for a delayed retry, 1 waiting to be
// dead-lettered)".
func (c *Change) MessagesText() string {
	s := fmt.Sprintf("%d %s", c.Messages, plural("message", int(c.Messages)))
	switch {
	case c.MessagesAtLeast && c.Messages == 0:
		s = "messages unknown (the stream's statistics count none, but they lag by seconds; apply reads the stream before it deletes it)"
	case c.MessagesAtLeast:
		s = "at least " + s
	}
	var held []string
	if c.Delayed > 0 {
		held = append(held, fmt.Sprintf("%d waiting for a delayed retry", c.Delayed))
	}
	if c.DeadLettering > 0 {
		held = append(held, fmt.Sprintf("%d waiting to be dead-lettered", c.DeadLettering))
	}
	if len(held) > 0 {
		s += " (" + strings.Join(held, ", ") + ")"
	}
	return s
}

// Summary counts changes per action.
type Summary struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
}

// Line is the summary line of the text view: "Plan: 1 to create, …", or
// for a comparison of files (mqctl diff) "Diff: 1 to create, …".
func (s Summary) Line(files bool) string {
	word := "Plan"
	if files {
		word = "Diff"
	}
	return fmt.Sprintf("%s: %d to create, %d to update, %d to replace, %d to delete.", word, s.Create, s.Update, s.Replace, s.Delete)
}

// Summary counts the plan's changes.
func (p *Plan) Summary() Summary {
	var s Summary
	for _, c := range p.Changes {
		switch c.Action {
		case Create:
			s.Create++
		case Update:
			s.Update++
		case Replace:
			s.Replace++
		case Delete:
			s.Delete++
		}
	}
	return s
}

// Empty reports whether applying the plan would change nothing.
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// Differs reports whether the broker differs from the file as far as the
// plan tells: apply would change an object (Changes) or only mqctl's
// ownership record (Records, the restore lists of PutsBack among them),
// or the diff found changes mqctl holds back (Held: an object in a vhost
// the user is not shown, a queue on a node that is down, mqctl's own
// user). plan --detailed-exitcode exits 2 when it does, 0 when it does
// not: a held change is a difference apply will not make, and a CI job
// must not read it as a broker that matches the file.
func (p *Plan) Differs() bool { return !p.Empty() || p.Records() || len(p.Held) > 0 }

// Records reports whether applying the plan rewrites mqctl's ownership
// record even when it changes nothing: objects to adopt, entries to set
// or to drop, a record to take over or in an older format
// (RecordChanges).
func (p *Plan) Records() bool { return len(p.RecordChanges()) > 0 }

// PutsBack reports whether applying the plan puts back bindings or
// deletes restore lists (Restores): changes on the broker besides the
// record's, which the text view does not call record changes only.
func (p *Plan) PutsBack() bool { return len(p.Restores) > 0 }

// What apply does to mqctl's ownership record besides recording its
// changes (RecordChange.Cause): stable codes, in the JSON plan.
const (
	RecordAdopt          = "adopt"
	RecordPrints         = "prints"
	RecordStale          = "stale"
	RecordChangedOutside = "changed_outside"
	RecordDroppedShared  = "dropped_shared"
	RecordTakeOver       = "take_over"
	RecordFormat         = "format"
	RecordUnfinished     = "unfinished"
	RecordRestore        = "restore"
	RecordKept           = "kept"
)

// RecordChange is one thing apply does to mqctl's ownership record
// besides recording the plan's changes: what (Cause), of how many objects
// (or records, for RecordFormat), and Reason, as the text view says it.
type RecordChange struct {
	Cause   string
	Objects int
	Reason  string
}

// RecordChanges are what apply does to mqctl's ownership record besides
// recording the plan's changes, which it does even when the plan changes
// no object: the text view says each, and so does the JSON plan.
func (p *Plan) RecordChanges() []RecordChange {
	var out []RecordChange
	if n := len(p.Adopt); n > 0 {
		out = append(out, RecordChange{RecordAdopt, n, fmt.Sprintf("%d existing %s already %s the file and will be recorded as managed.", n, plural("object", n), plural2("matches", "match", n))})
	}
	adopted := map[ObjectRef]bool{}
	for _, r := range p.Adopt {
		adopted[r] = true
	}
	for i := range p.Changes {
		adopted[p.Changes[i].Ref()] = true // recorded with its change
	}
	prints := 0
	for ref := range p.Prints {
		if !adopted[ref] {
			prints++
		}
	}
	if prints > 0 {
		out = append(out, RecordChange{RecordPrints, prints, fmt.Sprintf("mqctl's ownership record lists %d %s of the file, as the broker holds %s, without the print of %s this mqctl keeps, or with another one: apply records %s as %s.",
			prints, plural("object", prints), plural2("it", "them", prints), plural2("it", "them", prints), plural2("it", "them", prints), plural2("it is", "they are", prints))})
	}
	if n := len(p.Stale); n > 0 {
		out = append(out, RecordChange{RecordStale, n, fmt.Sprintf("mqctl's ownership record lists %d %s that no longer %s: apply drops %s from the record.", n, plural("object", n), plural2("exists", "exist", n), plural2("it", "them", n))})
	}
	kept := 0
	for _, o := range p.ChangedOutside {
		if !o.Deleted {
			kept++
		}
	}
	if kept > 0 {
		out = append(out, RecordChange{RecordChangedOutside, kept, fmt.Sprintf("mqctl's ownership record lists %d %s changed outside mqctl that the plan does not delete: apply forgets %s (drops %s from the record).", kept, plural("object", kept), plural2("it", "them", kept), plural2("it", "them", kept))})
	}
	dropped := 0
	for _, o := range p.Others {
		if o.Recorded && !o.Shared {
			dropped++
		}
	}
	if dropped > 0 {
		out = append(out, RecordChange{RecordDroppedShared, dropped, fmt.Sprintf("mqctl's ownership record lists %d %s that the file no longer names and other owners manage: apply drops %s from the record, and leaves %s to them.", dropped, plural("object", dropped), plural2("it", "them", dropped), plural2("it", "them", dropped))})
	}
	if p.KeptChanged {
		n := len(p.Kept)
		if n > 0 {
			out = append(out, RecordChange{RecordKept, n, fmt.Sprintf("mqctl's ownership records will list %d %s of the file that %s on the broker before mqctl as kept by %s (never mqctl's, never deleted by it): other owners' plans see that this file declares %s, leave %s alone when their files drop %s, and are refused a change to %s.",
				n, plural("object", n), plural2("was", "were", n), OwnerName(p.Owner), plural2("it", "them", n), plural2("it", "them", n), plural2("it", "them", n), plural2("it", "them", n))})
		} else {
			out = append(out, RecordChange{RecordKept, 0, fmt.Sprintf("mqctl's ownership records list objects as kept by %s that the file no longer names: apply drops them from the records, and leaves them on the broker.", OwnerName(p.Owner))})
		}
	}
	if t := p.TakeOver; t != nil && t.Objects > 0 {
		out = append(out, RecordChange{RecordTakeOver, t.Objects, takeOverLine(p, func(_, s string) string { return s })})
	}
	if n := len(p.OutdatedRecords); n > 0 {
		var which []string
		for _, vh := range p.OutdatedRecords {
			if vh == "" {
				which = append(which, "the broker's users")
			} else {
				which = append(which, fmt.Sprintf("vhost %q", vh))
			}
		}
		out = append(out, RecordChange{RecordFormat, n, fmt.Sprintf("mqctl's ownership %s of %s %s in an older format: apply rewrites %s in this mqctl's.", plural("record", n), strings.Join(which, ", "), plural2("is", "are", n), plural2("it", "them", n))})
	}
	if n := len(p.UnfinishedRecords); n > 0 {
		var which []string
		for _, vh := range p.UnfinishedRecords {
			which = append(which, fmt.Sprintf("vhost %q", vh))
		}
		out = append(out, RecordChange{RecordUnfinished, n, fmt.Sprintf("mqctl's ownership %s of %s %s left as several exchanges by an apply stopped while rewriting %s: apply writes %s as one exchange again and deletes the others.", plural("record", n), strings.Join(which, ", "), plural2("is", "are", n), plural2("it", "them", n), plural2("it", "each", n))})
	}
	for _, r := range p.Restores {
		n := len(r.Missing)
		lists := strings.Join(r.Lists, ", ")
		if n == 0 {
			out = append(out, RecordChange{RecordRestore, 0, fmt.Sprintf("vhost %q holds the restore %s %s of an apply stopped during a replace, whose bindings are all back: apply deletes %s.", r.Vhost, plural("list", len(r.Lists)), lists, plural2("it", "them", len(r.Lists)))})
			continue
		}
		out = append(out, RecordChange{RecordRestore, n, fmt.Sprintf("vhost %q: an apply stopped during a replace took down %d %s that the file does not declare (restore %s %s): apply declares %s again, once %s ends exist, and deletes the %s: %s.", r.Vhost, n, plural("binding", n), plural("list", len(r.Lists)), lists, plural2("it", "them", n), plural2("its", "their", n), plural("list", len(r.Lists)), strings.Join(r.Missing, "; "))})
	}
	return out
}
