// Package planjson owns the public JSON plan ("mqctl plan -o json"): the
// types of the document, which are the versioned contract for CI,
// documented field by field in docs/plan-json.md (a test checks the page
// against them).
//
// The types are this package's own, not the model's: a field renamed in
// pkg/topology or pkg/plan does not change the document. pkg/plan maps a
// plan into them (plan.WriteJSON) and back (plan.ReadJSON). The JSON plan
// is not the saved plan (plan.WriteSaved), which is private to apply: it
// leaves out what only apply needs (the broker fingerprint) and never
// shows an unknown value as absent.
package planjson

// FormatVersion is the document's format_version: it changes only when a
// field changes meaning or disappears (a new field may appear in any
// release without a new version).
const FormatVersion = "3"

// Plan is the document.
type Plan struct {
	FormatVersion  string    `json:"format_version"`
	Vhosts         []string  `json:"vhosts"`
	Changes        []Change  `json:"changes"`
	Unmanaged      []Ref     `json:"unmanaged"`
	Adopt          []Ref     `json:"adopt"`
	Unread         []Unread  `json:"unread"`
	ChangedOutside []Outside `json:"changed_outside"`
	Stale          []Ref     `json:"stale"`
	// Preexisting are the users and access, vhost limits, shovels and
	// federation upstreams (and sets) the file names that were on the
	// broker before mqctl: kept as the file says, never adopted, so never
	// deleted (absent when there are none: older documents had no such
	// field).
	Preexisting []Ref `json:"preexisting,omitempty"`
	// Owner is the file's "owner:" (absent for a file without one).
	Owner string `json:"owner,omitempty"`
	// TakeOver is present when the plan takes over another owner's
	// ownership records (mqctl plan --take-over-from).
	TakeOver *TakeOver `json:"take_over,omitempty"`
	// OtherOwners are the objects other owners' records list (absent
	// when there are none: older documents had no such field).
	OtherOwners []OtherOwned `json:"other_owners,omitempty"`
	Summary     Summary      `json:"summary"`
	// Refusals are what the plan refuses before anything changes (a
	// refused plan has no changes, and mqctl plan exits 1), the
	// preflight's refused objects included; absent when there are none.
	Refusals []Refused `json:"refusals,omitempty"`
	// Records are what apply does to mqctl's ownership record besides
	// recording the changes, even when there are none; absent when
	// nothing.
	Records []RecordChange `json:"records,omitempty"`
	// Preflight is present only when the broker was asked.
	Preflight *Preflight `json:"preflight,omitempty"`
	Held      []Held     `json:"held"`
	Notes     []string   `json:"notes"`
	// Flows is what the plan does to messages; absent when it was not
	// computed (a plan read from a document without it).
	Flows *Flows `json:"flows,omitempty"`
}

// Ref names an object.
type Ref struct {
	Kind  string `json:"kind"`
	Vhost string `json:"vhost"`
	Name  string `json:"name"`
}

// Change is one action on one object.
type Change struct {
	Action   string    `json:"action"`
	Kind     string    `json:"kind"`
	Vhost    string    `json:"vhost"`
	Name     string    `json:"name"`
	Before   *Object   `json:"before,omitempty"`
	After    *Object   `json:"after,omitempty"`
	Fields   []Field   `json:"fields,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Bindings []Binding `json:"bindings,omitempty"`
	// Messages, Consumers and MessagesAtLeast are present exactly when
	// the change can lose messages (a queue deleted or replaced, a vhost
	// deleted), 0 and false included.
	Messages        *int64 `json:"messages,omitempty"`
	Consumers       *int64 `json:"consumers,omitempty"`
	MessagesAtLeast *bool  `json:"messages_at_least,omitempty"`
	// MessagesDelayed, of Messages, wait for a delayed retry (RabbitMQ
	// 4.3+ quorum queues); present when the queue's statistics counted
	// some.
	MessagesDelayed *int64 `json:"messages_delayed,omitempty"`
	// MessagesDlx, of Messages, wait in a quorum queue until its
	// dead-letter exchange takes them (at-least-once dead-lettering);
	// present when the queue's statistics counted some.
	MessagesDlx *int64 `json:"messages_dlx,omitempty"`
	// Successor: for a queue deleted while it holds messages, the queue
	// the plan moves all its bindings onto (a rename in the file, most
	// often), and the way to keep the messages; absent otherwise.
	Successor *Successor `json:"successor,omitempty"`
	Pos       *Position  `json:"pos,omitempty"`
}

// Successor is the queue that takes every binding of a queue a change
// deletes while it holds messages.
type Successor struct {
	Queue   string `json:"queue"`
	Created bool   `json:"created"`
	Advice  string `json:"advice"`
}

// Field is one field that differs; a null side is the field absent there.
type Field struct {
	Field  string `json:"field"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	Forces bool   `json:"forces_replace"`
	// Masked: before and after are masked (the field holds a secret);
	// absent when false.
	Masked bool `json:"masked,omitempty"`
	// FromEnv: before or after is a value the file took from the
	// environment, shown as the file wrote it ("${VAR}"); absent when
	// false. Set as the plan is written (topology.EnvValues.HideJSON).
	FromEnv bool `json:"from_env,omitempty"`
}

// Position is where the file declares an object: what is known of it, and
// no Position at all when nothing is (never {}).
type Position struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// Object is an object's full state: exactly one key is set, named after
// its kind (Item for the kinds carried as generic items: vhost limits,
// shovels, federation, users and their access).
type Object struct {
	Vhost    *Vhost    `json:"vhost,omitempty"`
	Exchange *Exchange `json:"exchange,omitempty"`
	Queue    *Queue    `json:"queue,omitempty"`
	Binding  *Binding  `json:"binding,omitempty"`
	Policy   *Policy   `json:"policy,omitempty"`
	Item     *Item     `json:"item,omitempty"`
}

// Vhost is a vhost's metadata.
type Vhost struct {
	Name             string `json:"name"`
	Description      string `json:"description,omitempty"`
	DefaultQueueType string `json:"default_queue_type,omitempty"`
	// Tags are the vhost's tags the file declares (absent: the broker's
	// are kept; [] clears them).
	Tags []string `json:"tags,omitzero"`
}

// Exchange is an exchange.
type Exchange struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments,omitempty"`
}

// Queue is a queue.
type Queue struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments,omitempty"`
}

// Binding is a binding.
type Binding struct {
	Source          string         `json:"source"`
	Destination     string         `json:"destination"`
	DestinationType string         `json:"destination_type"`
	RoutingKey      string         `json:"routing_key"`
	Arguments       map[string]any `json:"arguments,omitempty"`
}

// Policy is a policy or an operator policy.
type Policy struct {
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}

// Item is an object of a kind carried as a generic item: its settings,
// every secret masked, and where the file took the secrets from.
type Item struct {
	Kind     string            `json:"kind"`
	Name     string            `json:"name"`
	Settings map[string]any    `json:"settings,omitempty"`
	Secret   []string          `json:"secret,omitempty"`
	Refs     map[string]string `json:"refs,omitempty"`
}

// Unread is one kind of object the broker would not let mqctl read in one
// vhost.
type Unread struct {
	Vhost    string `json:"vhost"`
	Kind     string `json:"kind"`
	Reason   string `json:"reason"`
	Declared int    `json:"declared"`
}

// Outside is an object mqctl managed once that was changed outside mqctl.
type Outside struct {
	Ref
	Reason  string `json:"reason"`
	Deleted bool   `json:"deleted"`
}

// TakeOver is a plan's take-over of another owner's ownership records:
// what they list is the file's owner's, and apply merges them into its
// records and deletes them.
type TakeOver struct {
	// From is the owner taken over from, "" for the files without
	// owner: (as in OtherOwned.Owners).
	From string `json:"from"`
	// Objects is how many objects its records in the plan's vhosts list.
	Objects int `json:"objects"`
	// Kept is how many of Objects its records list as kept (on the broker
	// before mqctl): the file's owner keeps them, never manages them.
	Kept int `json:"kept"`
	// Users: its record of the broker's users is taken over too.
	Users bool `json:"users"`
}

// OtherOwned is an object other owners' files manage: left alone, or
// shared (the file names it too, as it is).
type OtherOwned struct {
	Ref
	Owners []string `json:"owners"`
	Shared bool     `json:"shared"`
}

// Held is a change mqctl holds back, and why.
type Held struct {
	Ref
	Action string `json:"action"`
	Cause  string `json:"cause"`
	Reason string `json:"reason"`
}

// Summary counts the changes per action.
type Summary struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
}

// Preflight is what the broker answered when asked whether it takes the
// plan's objects.
type Preflight struct {
	Vhost      string    `json:"vhost,omitempty"`
	Tried      int       `json:"tried"`
	Objects    int       `json:"objects"`
	Refusals   []Refusal `json:"refusals,omitempty"`
	Skipped    string    `json:"skipped,omitempty"`
	Untried    []RefAt   `json:"untried,omitempty"`
	Swept      []string  `json:"swept,omitempty"`
	SweepError string    `json:"sweep_error,omitempty"`
	// CleanupError says why the throwaway vhost could not be deleted.
	CleanupError string `json:"cleanup_error,omitempty"`
}

// Refusal is one cause the broker refuses, and the objects it refuses for
// it.
type Refusal struct {
	Kind    string  `json:"kind"`
	Reason  string  `json:"reason"`
	Objects []RefAt `json:"objects"`
}

// RefAt is an object and where the file declares it.
type RefAt struct {
	Ref
	Pos *Position `json:"pos,omitempty"`
}

// Refused is one thing the plan refuses before anything changes: the
// object as the refusal names it, where the file declares it, why and the
// fix.
type Refused struct {
	// Cause is why, as a stable code: version, broker_state, ownership,
	// deleted_end, vhost_limits, preflight.
	Cause string `json:"cause"`
	Vhost string `json:"vhost"`
	// Kind and Name name the object as a change does; absent when the
	// refusal is of no one object of the plan.
	Kind   string `json:"kind,omitempty"`
	Name   string `json:"name,omitempty"`
	Object string `json:"object"`
	// Key is what of the object is refused; absent when the whole
	// object is.
	Key    string    `json:"key,omitempty"`
	Pos    *Position `json:"pos,omitempty"`
	Reason string    `json:"reason"`
	// Fix is absent when mqctl cannot tell (the broker's own refusal).
	Fix string `json:"fix,omitempty"`
	// Owners are, for an ownership conflict, the other owners ("" the
	// default owner); absent otherwise.
	Owners []string `json:"owners,omitempty"`
}

// RecordChange is one thing apply does to mqctl's ownership record
// besides recording the changes.
type RecordChange struct {
	// Cause is a stable code: adopt, prints, stale, changed_outside,
	// dropped_shared, kept, take_over, format, unfinished, restore.
	Cause   string `json:"cause"`
	Objects int    `json:"objects"`
	Reason  string `json:"reason"`
}
