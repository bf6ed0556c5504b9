package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestOtherOwnersObjects: two teams apply their own files (each with its
// own "owner:") to one vhost. What another owner's record lists is never
// deleted nor changed by this owner's plan, --delete-changed or not: left
// alone when the file does not name it, shared when the file names it as
// it is, a conflict (the plan refused, naming both owners) when the file
// would change it; and a vhost that still holds another owner's objects is
// not deleted when this owner's file drops it.
func TestOtherOwnersObjects(t *testing.T) {
	t.Parallel()
	// The broker: team-a's a.x, a.q and their binding; team-b's b.q.
	broker := vh("shared", func(v *topology.Vhost) {
		v.Exchanges["a.x"] = x("a.x", "topic")
		v.Queues["a.q"] = q("a.q", nil)
		v.Queues["b.q"] = q("b.q", nil)
		v.Bindings = []*topology.Binding{bind("a.x", "a.q", "a.#")}
	})
	recorded := Recorded(broker)
	ref := func(k Kind, name string) ObjectRef { return ObjectRef{Kind: k, Vhost: "shared", Name: name} }
	aRefs := []ObjectRef{ref(kind.Exchange, "a.x"), ref(kind.Queue, "a.q"), BindingRef("shared", bind("a.x", "a.q", "a.#"))}
	bRefs := []ObjectRef{ref(kind.Queue, "b.q")}
	record := func(refs ...ObjectRef) Managed {
		set := map[ObjectRef]Print{}
		for _, r := range refs {
			set[r] = recorded[r]
		}
		return ManagedOf(set)
	}
	others := func(owner string, refs ...ObjectRef) map[ObjectRef][]string {
		out := map[ObjectRef][]string{}
		for _, r := range refs {
			out[r] = []string{owner}
		}
		return out
	}
	teamB := vh("shared", func(v *topology.Vhost) { v.Queues["b.q"] = q("b.q", nil) })
	for _, tc := range []struct {
		name    string
		desired *topology.Topology
		cur     Current
		opts    Options
		// want are the plan's changes; left and shared the objects of
		// other owners it leaves alone and shares ("kind name").
		want          []row
		left, shared  []string
		conflict      string // "": no conflict
		recordedLeft  bool   // an entry of Others that this owner's record lists
		noVhostDelete bool
	}{
		{
			name:    "team-b's plan leaves team-a's objects alone",
			desired: teamB,
			cur:     Current{Owner: "team-b", Managed: record(bRefs...), Others: others("team-a", aRefs...)},
			want:    []row{},
			left:    []string{"binding a.x -> queue a.q [a.#]", "exchange a.x", "queue a.q"},
		},
		{
			name:    "--delete-changed does not delete another owner's objects",
			desired: teamB,
			cur:     Current{Owner: "team-b", Managed: record(bRefs...), Others: others("team-a", aRefs...)},
			opts:    Options{DeleteChanged: true},
			want:    []row{},
			left:    []string{"binding a.x -> queue a.q [a.#]", "exchange a.x", "queue a.q"},
		},
		{
			name: "the same queue declared alike is shared",
			desired: vh("shared", func(v *topology.Vhost) {
				v.Queues["b.q"] = q("b.q", nil)
				v.Queues["a.q"] = q("a.q", nil)
			}),
			cur:    Current{Owner: "team-b", Managed: record(bRefs...), Others: others("team-a", aRefs...)},
			want:   []row{},
			left:   []string{"binding a.x -> queue a.q [a.#]", "exchange a.x"},
			shared: []string{"queue a.q"},
		},
		{
			name: "the same queue declared otherwise is a conflict",
			desired: vh("shared", func(v *topology.Vhost) {
				v.Queues["b.q"] = q("b.q", nil)
				v.Queues["a.q"] = q("a.q", topology.Args{"x-max-length": int64(10)})
			}),
			cur:      Current{Owner: "team-b", Managed: record(bRefs...), Others: others("team-a", aRefs...)},
			want:     []row{},
			left:     []string{"binding a.x -> queue a.q [a.#]", "exchange a.x"},
			conflict: `queue "a.q" in vhost "shared" is managed by "team-a", and this file (owner "team-b") declares it otherwise: arguments.x-max-length: (none) on the broker, 10 in this file`,
		},
		{
			// Both records list a.q: having team-a change it is refused
			// as this plan is, and declaring it here as it is changes
			// nothing: one file must let it go first. Before, the
			// refusal said "managed by team-a" and advised both.
			name: "a shared queue declared otherwise is a conflict over a shared object",
			desired: vh("shared", func(v *topology.Vhost) {
				v.Queues["b.q"] = q("b.q", nil)
				v.Queues["a.q"] = q("a.q", topology.Args{"x-max-length": int64(10)})
			}),
			cur:  Current{Owner: "team-b", Managed: record(append(bRefs, ref(kind.Queue, "a.q"))...), Others: others("team-a", aRefs...)},
			want: []row{},
			left: []string{"binding a.x -> queue a.q [a.#]", "exchange a.x"},
			conflict: `queue "a.q" in vhost "shared" is shared: this file's owner ("team-b") and "team-a" both manage it, and this file declares it otherwise: arguments.x-max-length: (none) on the broker, 10 in this file. ` +
				`mqctl changes nothing another owner's file manages, and while both files declare it, neither may change it. ` +
				`Declare it here as the broker holds it; to change it, have "team-a" take it out of their file first (their apply then leaves it to this one), then change it here, or take it out of this file and apply, then have "team-a" change it in theirs.`,
		},
		{
			name:         "a shared queue the file drops stays for the other owner",
			desired:      teamB,
			cur:          Current{Owner: "team-b", Managed: record(append(bRefs, ref(kind.Queue, "a.q"))...), Others: others("team-a", aRefs...)},
			want:         []row{},
			left:         []string{"binding a.x -> queue a.q [a.#]", "exchange a.x", "queue a.q"},
			recordedLeft: true,
		},
		{
			name:    "a vhost dropped from the file keeps another owner's objects",
			desired: topology.New(),
			cur: Current{Owner: "team-b", Managed: record(append(bRefs, ObjectRef{Kind: kind.Vhost, Vhost: "shared", Name: "shared"})...),
				Others: others("team-a", aRefs...)},
			want:          []row{{Delete, kind.Queue, "b.q"}},
			left:          []string{"binding a.x -> queue a.q [a.#]", "exchange a.x", "queue a.q"},
			noVhostDelete: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cur.Live = topology.Live{State: broker}
			p := DiffWith(tc.desired, tc.cur, tc.opts)
			if got := rows(p); !slices.Equal(got, tc.want) {
				t.Errorf("changes %v, want %v", got, tc.want)
			}
			var left, shared []string
			recordedLeft := false
			for _, o := range p.Others {
				s := string(o.Kind) + " " + o.Name
				if o.Shared {
					shared = append(shared, s)
				} else {
					left = append(left, s)
					recordedLeft = recordedLeft || o.Recorded
				}
				if !slices.Equal(o.Owners, []string{"team-a"}) {
					t.Errorf("%s: owners %q, want team-a", s, o.Owners)
				}
			}
			if !slices.Equal(left, tc.left) || !slices.Equal(shared, tc.shared) {
				t.Errorf("left alone %q, shared %q; want %q, %q", left, shared, tc.left, tc.shared)
			}
			if recordedLeft != tc.recordedLeft || p.Records() != (tc.recordedLeft || len(tc.shared) > 0) {
				t.Errorf("recorded left %v (records %v), want %v", recordedLeft, p.Records(), tc.recordedLeft)
			}
			err := p.ConflictError()
			switch {
			case tc.conflict == "" && err != nil:
				t.Errorf("conflict: %v", err)
			case tc.conflict != "" && (err == nil || !strings.Contains(err.Error(), tc.conflict)):
				t.Errorf("conflict %v, want one saying %q", err, tc.conflict)
			}
			for _, c := range p.Changes {
				if c.Kind == kind.Vhost && c.Action == Delete && tc.noVhostDelete {
					t.Errorf("the vhost is deleted with another owner's objects in it")
				}
			}
			for _, o := range p.Unmanaged {
				if slices.Contains(aRefs, o) {
					t.Errorf("%v is another owner's, not unmanaged", o)
				}
			}
		})
	}
}

// TestDeleteTakingOtherOwnersBindings: the broker deletes an exchange's
// (queue's) bindings with it, so team-a's file dropping its exchange a.x
// (queue a.q) would delete the binding team-b's file declares from a.x
// (to a.q). The plan is refused, naming the binding and team-b, and
// deletes nothing; a binding no other owner lists goes with it as before.
func TestDeleteTakingOtherOwnersBindings(t *testing.T) {
	t.Parallel()
	broker := vh("shared", func(v *topology.Vhost) {
		v.Exchanges["a.x"] = x("a.x", "topic")
		v.Exchanges["b.x"] = x("b.x", "direct")
		v.Queues["a.q"] = q("a.q", nil)
		v.Queues["b.q"] = q("b.q", nil)
		v.Bindings = []*topology.Binding{bind("a.x", "a.q", "a.#"), bind("a.x", "b.q", "b"), bind("b.x", "a.q", "to-a")}
	})
	recorded := Recorded(broker)
	ref := func(k Kind, name string) ObjectRef { return ObjectRef{Kind: k, Vhost: "shared", Name: name} }
	aRefs := []ObjectRef{ref(kind.Exchange, "a.x"), ref(kind.Queue, "a.q"), BindingRef("shared", bind("a.x", "a.q", "a.#"))}
	set := map[ObjectRef]Print{}
	for _, r := range aRefs {
		set[r] = recorded[r]
	}
	others := map[ObjectRef][]string{}
	for _, r := range []ObjectRef{ref(kind.Exchange, "b.x"), ref(kind.Queue, "b.q"),
		BindingRef("shared", bind("a.x", "b.q", "b")), BindingRef("shared", bind("b.x", "a.q", "to-a"))} {
		others[r] = []string{"team-b"}
	}
	for _, tc := range []struct {
		name     string
		desired  *topology.Topology
		conflict string
	}{
		{
			name:     "team-a drops its exchange",
			desired:  vh("shared", func(v *topology.Vhost) { v.Queues["a.q"] = q("a.q", nil) }),
			conflict: `exchange "a.x" in vhost "shared": this file (owner "team-a") no longer declares it, and deleting it would delete binding a.x -> queue b.q [b], which "team-b" manages`,
		},
		{
			name: "team-a drops its queue",
			desired: vh("shared", func(v *topology.Vhost) {
				v.Exchanges["a.x"] = x("a.x", "topic")
			}),
			conflict: `queue "a.q" in vhost "shared": this file (owner "team-a") no longer declares it, and deleting it would delete binding b.x -> queue a.q [to-a], which "team-b" manages`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cur := Current{Owner: "team-a", Managed: ManagedOf(set), Others: others, Live: topology.Live{State: broker}}
			p := DiffWith(tc.desired, cur, Options{})
			err := p.ConflictError()
			if err == nil || !strings.Contains(err.Error(), tc.conflict) {
				t.Fatalf("conflict %v, want one saying %q", err, tc.conflict)
			}
			for _, c := range p.Changes {
				if c.Action == Delete && (c.Kind == kind.Exchange || c.Kind == kind.Queue) {
					t.Errorf("the plan deletes %s %s", c.Kind, c.Name)
				}
			}
		})
	}
}

// TestVhostConflictAdvice: a vhost team-a's file created is never
// adopted by another owner, so the advice on a conflict over its settings
// is to declare them as they are or have team-a change them, not the
// hand-over (share it, then take it out of team-a's file), which cannot
// work for a vhost.
func TestVhostConflictAdvice(t *testing.T) {
	t.Parallel()
	broker := vh("shared", nil)
	desired := vh("shared", func(v *topology.Vhost) { v.DefaultQueueType = "quorum" })
	vref := ObjectRef{Kind: kind.Vhost, Vhost: "shared", Name: "shared"}
	cur := Current{Owner: "team-b", Managed: ManagedOf(map[ObjectRef]Print{}), Others: map[ObjectRef][]string{vref: {"team-a"}},
		Live: topology.Live{State: broker}}
	err := DiffWith(desired, cur, Options{}).ConflictError()
	const want = `vhost "shared" was created by "team-a"'s file, and this file (owner "team-b") declares it otherwise: default_queue_type: (none) on the broker, "quorum" in this file`
	switch {
	case err == nil || !strings.Contains(err.Error(), want):
		t.Fatalf("conflict %v, want one saying %q", err, want)
	case strings.Contains(err.Error(), "hand it over"):
		t.Errorf("the advice hands over a vhost, which mqctl never adopts: %v", err)
	}
}

// TestDeleteWhatOtherOwnersSendTo: team-a's file drops its exchange dlx,
// which an object team-b's file declares sends messages to: a queue's
// dead-letter exchange, an exchange's alternate exchange, a policy's. The
// broker would delete dlx all the same and drop what team-b's object sends
// there from then on, so the plan is refused, naming the object and
// team-b, and deletes nothing. Before, team-a's plan deleted dlx (apply
// refused only while team-b's queue held messages with a TTL). One that no
// other owner manages does not refuse the delete.
func TestDeleteWhatOtherOwnersSendTo(t *testing.T) {
	t.Parallel()
	ref := func(k Kind, name string) ObjectRef { return ObjectRef{Kind: k, Vhost: "shared", Name: name} }
	ours := func(v *topology.Vhost) {
		v.Exchanges["dlx"] = x("dlx", "fanout")
		v.Queues["a.dead"] = q("a.dead", nil)
		v.Bindings = []*topology.Binding{bind("dlx", "a.dead", "")}
	}
	for _, tc := range []struct {
		name     string
		theirs   func(v *topology.Vhost)
		ref      ObjectRef
		conflict string // "": dlx is deleted
	}{
		{
			name: "team-b's queue dead-letters to it",
			theirs: func(v *topology.Vhost) {
				v.Queues["b.work"] = q("b.work", topology.Args{"x-dead-letter-exchange": "dlx"})
			},
			ref:      ref(kind.Queue, "b.work"),
			conflict: `exchange "dlx" in vhost "shared": this file (owner "team-a") no longer declares it, and "team-b" manages queue "b.work", whose dead-letter exchange it is: once it is deleted, the messages sent there are dropped`,
		},
		{
			name: "team-b's exchange has it as its alternate exchange",
			theirs: func(v *topology.Vhost) {
				v.Exchanges["b.in"] = &topology.Exchange{Name: "b.in", Type: "direct", Durable: true, Arguments: topology.Args{"alternate-exchange": "dlx"}}
			},
			ref:      ref(kind.Exchange, "b.in"),
			conflict: `"team-b" manages exchange "b.in", whose alternate exchange it is`,
		},
		{
			name: "team-b's policy names it",
			theirs: func(v *topology.Vhost) {
				v.Policies["b.p"] = &topology.Policy{Name: "b.p", Pattern: "^b\\.", ApplyTo: "queues", Definition: topology.Args{"dead-letter-exchange": "dlx"}}
			},
			ref:      ref(kind.Policy, "b.p"),
			conflict: `"team-b" manages policy "b.p", whose dead-letter-exchange it is`,
		},
		{
			name:   "a queue no other owner manages: the file's own choice",
			theirs: func(v *topology.Vhost) { v.Queues["hand"] = q("hand", topology.Args{"x-dead-letter-exchange": "dlx"}) },
			ref:    ref(kind.Queue, "somebody-else"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			broker := vh("shared", func(v *topology.Vhost) { ours(v); tc.theirs(v) })
			cur := Current{Owner: "team-a", Managed: ManagedOf(Recorded(vh("shared", ours))),
				Others: map[ObjectRef][]string{tc.ref: {"team-b"}}, Live: topology.Live{State: broker}}
			p := DiffWith(vh("shared", func(v *topology.Vhost) { v.Queues["a.dead"] = q("a.dead", nil) }), cur, Options{})
			err := p.ConflictError()
			deletes := slices.ContainsFunc(p.Changes, func(c Change) bool { return c.Action == Delete && c.Kind == kind.Exchange })
			switch {
			case tc.conflict == "" && (err != nil || !deletes):
				t.Errorf("conflict %v, deletes dlx %v: want dlx deleted", err, deletes)
			case tc.conflict != "" && (err == nil || !strings.Contains(err.Error(), tc.conflict)):
				t.Errorf("conflict %v, want one saying %q", err, tc.conflict)
			case tc.conflict != "" && deletes:
				t.Errorf("the plan deletes exchange dlx: %v", rows(p))
			}
		})
	}
}

// TestSharedText: the text plan says apply records a shared object for
// this owner only when this owner's record does not list it yet. Before,
// every plan said "apply records them for owner \"team-b\" too", also the
// plan after that apply, which changes nothing (--detailed-exitcode 0).
func TestSharedText(t *testing.T) {
	t.Parallel()
	broker := vh("shared", func(v *topology.Vhost) {
		v.Queues["a.q"] = q("a.q", nil)
		v.Queues["a2.q"] = q("a2.q", nil)
	})
	recorded := Recorded(broker)
	ref := func(name string) ObjectRef { return ObjectRef{Kind: kind.Queue, Vhost: "shared", Name: name} }
	for _, tc := range []struct {
		name  string
		mine  []string // what team-b's record lists already
		want  string
		lines []string
	}{
		{
			name:  "none recorded yet: apply records them",
			want:  `; apply records them for owner "team-b" too, and neither owner`,
			lines: []string{`  queue "a.q" in vhost "shared" ("team-a")`, `  queue "a2.q" in vhost "shared" ("team-a")`},
		},
		{
			name:  "both recorded: apply records nothing",
			mine:  []string{"a.q", "a2.q"},
			want:  `; each owner's record lists them already, and neither owner`,
			lines: []string{`  queue "a.q" in vhost "shared" ("team-a")`, `  queue "a2.q" in vhost "shared" ("team-a")`},
		},
		{
			name:  "one recorded: apply records the other",
			mine:  []string{"a.q"},
			want:  `; apply records 1 of them (marked *) for owner "team-b" too, and each owner's record lists the others already`,
			lines: []string{`  queue "a.q" in vhost "shared" ("team-a")`, `  queue "a2.q" in vhost "shared" ("team-a") *`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			set := map[ObjectRef]Print{}
			for _, n := range tc.mine {
				set[ref(n)] = recorded[ref(n)]
			}
			cur := Current{Owner: "team-b", Managed: ManagedOf(set), Others: map[ObjectRef][]string{ref("a.q"): {"team-a"}, ref("a2.q"): {"team-a"}},
				Live: topology.Live{State: broker}}
			p := DiffWith(broker, cur, Options{})
			if got := p.Records(); got != (len(tc.mine) < 2) {
				t.Errorf("records %v, want %v", got, len(tc.mine) < 2)
			}
			var b strings.Builder
			if err := WriteText(&b, p, RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			text := b.String()
			if !strings.Contains(text, tc.want) {
				t.Errorf("text:\n%s\nwant it to say %q", text, tc.want)
			}
			for _, l := range tc.lines {
				if !slices.Contains(strings.Split(text, "\n"), l) {
					t.Errorf("text:\n%s\nwant the line %q", text, l)
				}
			}
		})
	}
}

// TestConflictOverASecret: a file declaring another owner's user with
// another password is refused saying that the password differs. Before,
// the refusal read `settings.password: "***" on the broker, "***" in this
// file`, two values that read alike.
func TestConflictOverASecret(t *testing.T) {
	t.Parallel()
	c := Conflict{ObjectRef: ObjectRef{Kind: kind.User, Name: "shipping-svc"}, Owners: []string{"team-a"}, Owner: "team-b",
		Fields: []FieldChange{{Field: "settings.password", Before: "***", After: "***", Masked: true}, {Field: "settings.tags", Before: []any{"management"}, After: []any{}}}}
	reason, _ := c.text()
	const want = `user "shipping-svc" is managed by "team-a", and this file (owner "team-b") declares it otherwise: settings.password: the broker holds another secret than this file's (masked); settings.tags: ["management"] on the broker, [] in this file`
	if !strings.Contains(reason, want) {
		t.Errorf("reason %q, want it to say %q", reason, want)
	}
}
