// Package kind is the one registry of the kinds of object mqctl manages:
// for each, everything that is true of it whatever the stage, with no I/O —
// its one spelling, how people read it, where it lives in a definitions
// document, in topology.yaml and in the management API, whether it changes
// in place, where its deletes and writes fall in an apply's order, its
// secrets and required settings and, for a kind carried as topology.Item,
// how the file declares an item, how it is checked and what the diff
// compares (ItemSpec).
//
// Every stage (reading, diff, ordering, writing, visibility, rendering,
// export) takes these facts from here, and asks a kind's capabilities
// (HoldsMessages, BindingEnd, DeletedByKey, NamedByEnds, Policy,
// ReachesOut) rather than naming it; each stage's own code for a kind is
// reached through one table keyed by kind that fails loudly on a kind it
// does not know (pkg/plan's objectTypes, pkg/apply's objects,
// pkg/preflight's tryers, pkg/broker's drivers). pkg/engine's
// TestEveryKindHasEveryStage (no broker) and TestEveryKindThroughEveryStage
// (every supported broker) run every kind of All through every stage, so a
// kind missing one fails a test, not a user. README.md ("Adding a kind")
// lists what adding one takes.
package kind

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is the one spelling of a kind of object: in plans (text, JSON,
// saved), lint findings, ownership records and errors.
type Kind string

// The kinds.
const (
	Vhost          Kind = "vhost"
	Exchange       Kind = "exchange"
	Queue          Kind = "queue"
	Binding        Kind = "binding"
	Policy         Kind = "policy"
	OperatorPolicy Kind = "operator_policy"
	VhostLimits    Kind = "vhost_limits"
	// Shovel, FederationUpstream and FederationUpstreamSet are runtime
	// parameters (/api/parameters/{component}/{vhost}/{name}) of the
	// shovel and federation plugins.
	Shovel                Kind = "shovel"
	FederationUpstream    Kind = "federation_upstream"
	FederationUpstreamSet Kind = "federation_upstream_set"
)

// Tag is a user tag of RabbitMQ's management API, as it authorises a
// write (Spec.WriteTag).
type Tag string

// The tags a write may need.
const (
	// AnyUser: the user's permissions on the vhost suffice
	// (is_authorized_vhost: exchanges, queues, bindings).
	AnyUser Tag = "any"
	// Policymaker: the policymaker or administrator tag
	// (is_authorized_policies: policies, runtime parameters).
	Policymaker Tag = "policymaker"
	// Administrator: the administrator tag (is_authorized_admin: vhosts,
	// operator policies, limits, users and their access).
	Administrator Tag = "administrator"
)

// Spec is what every stage shares about a kind.
type Spec struct {
	Kind Kind
	// Label and Plural name the kind in prose: "operator policy",
	// "operator policies".
	Label, Plural string
	// Section is the key of the kind's list in a definitions document and
	// of its map in a topology.yaml vhost ("" for vhosts, which are the
	// map itself).
	Section string
	// APIPath is the management API's collection of the kind
	// (/api/{APIPath}/{vhost}/{name}).
	APIPath string
	// InPlace is true when the broker changes an object of the kind in
	// place (an update); false when a change means delete and declare
	// again (a replace).
	InPlace bool
	// DeletePhase and WritePhase order an apply: phases run one after the
	// other, deletes first (phase 1 deletes what depends on others first),
	// then writes (creates, updates, the declare half of a replace).
	// Vhosts are created before anything is deleted and deleted after
	// everything in them.
	DeletePhase, WritePhase int
	// DeleteLate: a delete for good of an object of the kind runs after
	// every write (its LateDeletePhase), when what the object hangs on
	// (its vhost; a binding's ends, unless they are deleted late too)
	// stays: make before break. A binding moved from one queue to
	// another, a queue or an exchange renamed, or a policy renamed, is
	// otherwise absent
	// while everything between the delete and the write phases is
	// written, and a message published meanwhile is routed nowhere or
	// expires without its dead-letter exchange (a binding moved with 300
	// queue declarations between the two phases on RabbitMQ 4.3.6: 681 of
	// 14,476 messages unroutable). Meanwhile both are in force: a copy
	// to the old queue and the new, or the old policy or the new one,
	// never neither. A queue is deleted late when its vhost's max-queues
	// has room for it beside the queues the apply declares
	// (plan.Plan.QueuesDeletedFirst).
	DeleteLate bool
	// Broker is true for a kind that lives on the broker, not in a vhost
	// (users): its objects are in topology.Topology.Items, and its
	// changes' Vhost is "".
	Broker bool
	// Secret names the settings of an object of the kind that are secrets
	// (a password, a URI that may hold credentials): every output masks
	// them (topology.Item.Secret), export writes ${VAR} placeholders, and
	// the file should take them from ${VAR}.
	Secret []string
	// Required names the settings without which the broker refuses an
	// object of the kind (rabbit_shovel_parameters and
	// rabbit_federation_parameters validate them): the file reader and the
	// definitions reader both refuse an object without one.
	Required []string
	// Declared is true for a kind a plan covers only when the file
	// declares its section (topology.Topology.Declares): users and their
	// access are often kept in another file than the vhosts they use.
	Declared bool
	// HoldsMessages: deleting or replacing an object of the kind can lose
	// the messages it holds (queues). A plan reads what is at stake in
	// each such object, the JSON plan always carries it, and apply checks
	// it again at the moment of the deletion.
	HoldsMessages bool
	// BindingEnd: an object of the kind can be an end of a binding (an
	// exchange, a queue). The broker deletes the bindings from and to one
	// with it: a replace of one takes them down and puts them back, a
	// delete takes them with it (and a binding another owner's record
	// lists refuses the delete), and a binding whose end the plan deletes
	// is refused. The diff meets these kinds before the bindings, whose
	// prints hold their ends'.
	BindingEnd bool
	// DeletedByKey: the management API deletes an object of the kind by
	// a key the broker derives from it (a binding's properties_key),
	// which apply reads (with the state, in one listing per vhost, or one
	// by one) before the delete.
	DeletedByKey bool
	// NamedByEnds: an object of the kind has no name of its own; a plan
	// names it by its ends (a binding: its source, destination and key,
	// plan.BindingName), shown as it is where other names are quoted, and
	// an object of that name that is not the one mqctl wrote has had an
	// end declared again.
	NamedByEnds bool
	// Container: an object of the kind holds the objects of the other
	// kinds of a vhost (a vhost): named by itself (a change's Vhost is its
	// Name), created before them and deleted after them, and its delete
	// takes them along, queues and their messages included; it is never
	// adopted, and words about it name no vhost beside it.
	Container bool
	// Policy: the kind is a kind of policy (topology.Policy: a pattern,
	// what it applies to, a priority and a definition), kept in a vhost's
	// map of its kind (topology.Vhost.PoliciesOf) and written and read
	// through APIPath in one shape. Every stage that reads or writes
	// policies goes over PolicyKinds, so a kind of policy is named only
	// where it differs: in the definitions mapping, and where it is
	// reasoned about (an operator policy caps what a policy sets).
	Policy bool
	// Item is set for a kind carried as topology.Item through one generic
	// path (vhost limits, shovels, federation objects, users and their
	// access): its file shape, fields, checks and comparison. Vhosts,
	// exchanges, queues, bindings and policies have types of their own.
	Item *ItemSpec
	// WriteTag is the user tag the management API asks for, beyond the
	// user's permissions on the vhost, before it writes an object of the
	// kind (rabbit_mgmt_wm_* is_authorized_*). Every kind says it: a kind
	// without one fails TestEveryKindSaysItsWriteTag.
	WriteTag Tag
	// ReachesOut: an object of the kind acts beyond its vhost. A shovel
	// moves messages between queues and exchanges its URIs name (another
	// vhost, another broker), a federation upstream's links copy or move
	// messages from another broker, and an upstream set starts links to
	// the upstreams it names. Writing one where only a trial is meant (mqctl
	// test --live's throwaway vhost) would move real messages.
	ReachesOut bool
}

var specs = []Spec{
	{Kind: Vhost, WriteTag: Administrator, Label: "vhost", Plural: "vhosts", Section: "vhosts", APIPath: "vhosts", InPlace: true, DeletePhase: 5, WritePhase: 0, Container: true},
	{Kind: Exchange, WriteTag: AnyUser, Label: "exchange", Plural: "exchanges", Section: "exchanges", APIPath: "exchanges", DeletePhase: 4, WritePhase: 6, DeleteLate: true, BindingEnd: true},
	{Kind: Queue, WriteTag: AnyUser, Label: "queue", Plural: "queues", Section: "queues", APIPath: "queues", DeletePhase: 3, WritePhase: 7, DeleteLate: true, HoldsMessages: true, BindingEnd: true},
	{Kind: Binding, WriteTag: AnyUser, Label: "binding", Plural: "bindings", Section: "bindings", APIPath: "bindings", DeletePhase: 2, WritePhase: 8, DeleteLate: true, DeletedByKey: true, NamedByEnds: true},
	{Kind: Policy, WriteTag: Policymaker, Label: "policy", Plural: "policies", Section: "policies", APIPath: "policies", InPlace: true, DeletePhase: 1, WritePhase: 9, DeleteLate: true, Policy: true},
	{Kind: OperatorPolicy, WriteTag: Administrator, Label: "operator policy", Plural: "operator policies", Section: "operator_policies", APIPath: "operator-policies", InPlace: true, DeletePhase: 1, WritePhase: 9, DeleteLate: true, Policy: true},
	{Kind: VhostLimits, WriteTag: Administrator, Label: "vhost limits", Plural: "vhost limits", Section: "limits", APIPath: "vhost-limits", InPlace: true, DeletePhase: 1, WritePhase: 9,
		Item: vhostLimitsItem},
	// An upstream is written before the policies that name it (federation
	// links start when a policy applies) and before the sets that name it,
	// and deleted after them; a shovel is written after the queues,
	// exchanges and bindings it moves messages between, and deleted before
	// them (a running shovel declares its queues again). Upstreams are
	// written in the queues' phase: the bindings' phase holds bindings
	// only (apply.Order restores the bindings of replaced objects there).
	{Kind: FederationUpstream, WriteTag: Policymaker, Label: "federation upstream", Plural: "federation upstreams", Section: "federation_upstreams", APIPath: "parameters/federation-upstream", InPlace: true, DeletePhase: 2, WritePhase: 7,
		Secret: []string{"uri"}, Required: upstreamRequired, Item: upstreamItem, ReachesOut: true},
	{Kind: FederationUpstreamSet, WriteTag: Policymaker, Label: "federation upstream set", Plural: "federation upstream sets", Section: "federation_upstream_sets", APIPath: "parameters/federation-upstream-set", InPlace: true, DeletePhase: 1, WritePhase: 9,
		Item: upstreamSetItem, ReachesOut: true},
	{Kind: Shovel, WriteTag: Policymaker, Label: "shovel", Plural: "shovels", Section: "shovels", APIPath: "parameters/shovel", InPlace: true, DeletePhase: 1, WritePhase: 9,
		Secret: []string{"src-uri", "dest-uri"}, Required: shovelRequired, Item: shovelItem, ReachesOut: true},
}

// All returns the spec of every kind: the vhost's kinds (specs), then the
// kinds about users and their access (accessSpecs, access.go).
func All() []Spec { return append(append([]Spec(nil), specs...), accessSpecs...) }

// Of returns the spec of k; false for a kind mqctl does not know.
func Of(k Kind) (Spec, bool) {
	if s := specOf(k); s != nil {
		return *s, true
	}
	return Spec{}, false
}

// specOf is k's spec in place, nil for an unknown kind: a Spec is large,
// and the questions asked of every change of a plan (Kind.Policy,
// Kind.HoldsMessages) copied one for each spec looked at, 50 ms a pass
// over the changes of a plan deleting 50,002 objects.
func specOf(k Kind) *Spec {
	for _, list := range [...][]Spec{specs, accessSpecs} {
		for i := range list {
			if list[i].Kind == k {
				return &list[i]
			}
		}
	}
	return nil
}

// PolicyKinds returns the kinds of policy (Spec.Policy) in their order:
// policies, then operator policies.
func PolicyKinds() []Kind { return kindsWhere(func(s *Spec) bool { return s.Policy }) }

// kindsWhere returns the kinds of specs whose spec has, in their order.
func kindsWhere(has func(s *Spec) bool) []Kind {
	var out []Kind
	for i := range specs {
		if has(&specs[i]) {
			out = append(out, specs[i].Kind)
		}
	}
	return out
}

// vhostItems are the item kinds a vhost's section of topology.yaml
// declares, in the order the file reader, the diff and export take them
// (shovels before the federation objects, unlike All).
var vhostItems = []Kind{VhostLimits, Shovel, FederationUpstream, FederationUpstreamSet}

// VhostItems returns the spec of every kind carried as topology.Item that
// a vhost's section of topology.yaml declares (Spec.Section there): vhost
// limits, shovels and the federation objects. Access has the others.
func VhostItems() []Spec {
	out := make([]Spec, 0, len(vhostItems))
	for _, k := range vhostItems {
		s, _ := Of(k)
		out = append(out, s)
	}
	return out
}

// VhostKinds returns the spec of every kind a vhost's section of
// topology.yaml declares (Spec.Section there), in the order its sections
// are read and exported: the kinds with a type of their own (exchanges,
// queues, bindings, the kinds of policy) in the registry's order, then
// VhostItems.
func VhostKinds() []Spec {
	var out []Spec
	for _, s := range specs {
		if s.Item == nil && !s.Container && !s.Broker {
			out = append(out, s)
		}
	}
	return append(out, VhostItems()...)
}

// Items returns the spec of every kind carried as topology.Item:
// VhostItems, then Access.
func Items() []Spec { return append(VhostItems(), Access()...) }

// Adoptable reports whether mqctl adopts an object of kind k that was on
// the broker before it and that a file declares as the broker holds it:
// records it as its own, so that a file that drops it later deletes it
// (SPEC §4: exchanges, queues, bindings, policies and operator policies).
// The broker-level objects of SPEC §9, the kinds carried as
// topology.Item (users and their limits, permissions and topic
// permissions; vhost limits, shovels, federation upstreams and upstream
// sets), are not: mqctl deletes only those it created, never one that
// existed before it (an applied export names them all: guest, the user
// mqctl logs in as, an operator's shovel, the limits set on a vhost). Such
// an object is kept as the file says, in place, but left on the broker
// when the file drops it, as a vhost that was there before. A vhost is
// never adopted either (plan.Diff), and false for a kind mqctl does not
// know.
func (k Kind) Adoptable() bool {
	s := specOf(k)
	return s != nil && s.Item == nil && !s.Container
}

// Item is k's ItemSpec; nil for a kind not carried as topology.Item (and
// for a kind mqctl does not know).
func (k Kind) Item() *ItemSpec { s, _ := Of(k); return s.Item }

// Owner is the kind whose items nest k's (ItemSpec.Nested: a user for
// its limits, permissions and topic permissions); false when none does.
// An object of k goes with the owner's item of the same name.
func (k Kind) Owner() (Kind, bool) {
	for _, list := range [...][]Spec{specs, accessSpecs} { // without a copy: the diff asks per object
		for _, s := range list {
			if s.Item != nil && slices.Contains(s.Item.Nested, k) {
				return s.Kind, true
			}
		}
	}
	return "", false
}

// SecretFields names the secret settings of an object of kind k
// (Spec.Secret), a slice of its own: what topology.Item.Secret holds.
func SecretFields(k Kind) []string { s, _ := Of(k); return slices.Clone(s.Secret) }

// Section is Of(k).Section ("" for an unknown kind).
func (k Kind) Section() string { s, _ := Of(k); return s.Section }

// Label is k's name in prose ("operator policy"); an unknown kind is its
// own spelling.
func (k Kind) Label() string {
	if s, ok := Of(k); ok {
		return s.Label
	}
	return string(k)
}

// WithArticle is k's Label after "a" or "an": "an exchange", "a queue".
func (k Kind) WithArticle() string {
	l := k.Label()
	if strings.ContainsAny(l[:1], "aeiou") {
		return "an " + l
	}
	return "a " + l
}

// Plural names objects of the kind in prose ("operator policies").
func (k Kind) Plural() string {
	if s, ok := Of(k); ok {
		return s.Plural
	}
	return string(k) + "s"
}

// Policy is Of(k).Policy (false for an unknown kind): whether k is one of
// PolicyKinds, without the list.
func (k Kind) Policy() bool { s := specOf(k); return s != nil && s.Policy }

// HoldsMessages is Of(k).HoldsMessages (false for an unknown kind).
func (k Kind) HoldsMessages() bool { s := specOf(k); return s != nil && s.HoldsMessages }

// BindingEnd is Of(k).BindingEnd (false for an unknown kind).
func (k Kind) BindingEnd() bool { s := specOf(k); return s != nil && s.BindingEnd }

// BindingEnds returns the kinds whose objects can be a binding's ends
// (Spec.BindingEnd), in the registry's order: exchanges, then queues.
func BindingEnds() []Kind { return kindsWhere(func(s *Spec) bool { return s.BindingEnd }) }

// InVhostByName reports whether an object of kind k is one of many in a
// vhost, told apart by its name (an exchange, a queue, a shovel), so that
// words about it name the vhost too (`queue "q" in vhost "v"`); false for
// a vhost, for what a vhost holds once and is named after it (its limits,
// ItemSpec.Shape Single), for the broker's own kinds (users and theirs)
// and for an unknown kind.
func (k Kind) InVhostByName() bool {
	s := specOf(k)
	return s != nil && !s.Container && !s.Broker && (s.Item == nil || s.Item.Shape != Single)
}

// Container is Of(k).Container (false for an unknown kind).
func (k Kind) Container() bool { s := specOf(k); return s != nil && s.Container }

// DeletedByKey is Of(k).DeletedByKey (false for an unknown kind).
func (k Kind) DeletedByKey() bool { s, _ := Of(k); return s.DeletedByKey }

// NamedByEnds is Of(k).NamedByEnds (false for an unknown kind).
func (k Kind) NamedByEnds() bool { s, _ := Of(k); return s.NamedByEnds }

// InPlace is Of(k).InPlace (false for an unknown kind).
func (k Kind) InPlace() bool { s, _ := Of(k); return s.InPlace }

// WritePhase is Of(k).WritePhase (0 for an unknown kind).
func (k Kind) WritePhase() int { s, _ := Of(k); return s.WritePhase }

// WriteTag is Of(k).WriteTag ("" for an unknown kind).
func (k Kind) WriteTag() Tag { s, _ := Of(k); return s.WriteTag }

// Parameter is the runtime parameter component that holds the kind's
// objects (a shovel's "shovel"), when the broker keeps them as runtime
// parameters (APIPath "parameters/{component}"): in a definitions file they
// are the parameters of that component, and through the management API
// /api/parameters/{component}/{vhost}/{name}.
func (s Spec) Parameter() (component string, ok bool) {
	return strings.CutPrefix(s.APIPath, "parameters/")
}

// FieldNames are the names of the settings the file gives an item of kind
// k (ItemSpec.Fields), in their order: the one list every stage that
// reads or writes those settings goes by (nil for a kind without them).
func (k Kind) FieldNames() []string {
	s, ok := Of(k)
	if !ok || s.Item == nil {
		return nil
	}
	return Names(s.Item.Fields)
}

// LatePhase is the first phase after every write: the deletes for good
// of the kinds that delete late (Spec.DeleteLate), each in its
// LateDeletePhase.
const LatePhase = 10

// LateDeletePhase is the phase of a late delete of an object of the kind
// (Spec.DeleteLate): after every write, in the order of the deletes
// before them (DeletePhase), so that a binding goes before the queue it
// binds, and the queue's last messages have nowhere else to come from.
func (s Spec) LateDeletePhase() int { return LatePhase + s.DeletePhase - 1 }

// Phases is the number of apply phases (DeletePhase, WritePhase and
// LateDeletePhase are below it).
const Phases = LatePhase + 4

// Unknown is the error of a stage given a kind it has no code for.
func Unknown(stage string, k Kind) error {
	return fmt.Errorf("mqctl has no %s for objects of kind %q: this is a bug in mqctl, please report it", stage, k)
}
