package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// kindCase is one kind's object in a topology file: the vhost's body with
// the object (and what it needs), the same with the object changed (""
// when no field of the kind can change: a binding is its identity), and
// without it.
type kindCase struct {
	name                   string // the object's name in plans
	with, changed, without string
	// top is the file's top level for each of with, changed and without
	// (the users section), when the kind is declared there.
	topWith, topChanged, topWithout string
}

// kindCases holds a case for every kind of kind.All: a kind without one
// fails TestEveryKindThroughEveryStage.
var kindCases = map[kind.Kind]kindCase{
	kind.Vhost: {
		name:    "${VHOST}",
		with:    "description: made by mqctl\n",
		changed: "description: changed by mqctl\n",
	},
	kind.Exchange: {
		name:    "k.x",
		with:    "exchanges:\n  k.x: { type: direct }\n",
		changed: "exchanges:\n  k.x: { type: topic }\n",
		without: "{}\n",
	},
	kind.Queue: {
		name:    "k.q",
		with:    "queues:\n  k.q: {}\n",
		changed: "queues:\n  k.q: { arguments: { x-max-priority: 5 } }\n",
		without: "{}\n",
	},
	kind.Binding: {
		name:    "k.x -> queue k.q [a]",
		with:    "exchanges:\n  k.x: { type: direct }\nqueues:\n  k.q: {}\nbindings:\n  - { source: k.x, destination: k.q, destination_type: queue, routing_key: a }\n",
		without: "exchanges:\n  k.x: { type: direct }\nqueues:\n  k.q: {}\n",
	},
	kind.Policy: {
		name:    "k.p",
		with:    "policies:\n  k.p: { pattern: \"^k\\\\.\", apply_to: queues, definition: { max-length: 10 } }\n",
		changed: "policies:\n  k.p: { pattern: \"^k\\\\.\", apply_to: queues, definition: { max-length: 20 } }\n",
		without: "{}\n",
	},
	kind.VhostLimits: {
		name:    "${VHOST}",
		with:    "limits: { max-queues: 100 }\n",
		changed: "limits: { max-queues: 200, max-connections: 50 }\n",
		without: "{}\n",
	},
	kind.User: {
		name:       "${VHOST}-u",
		topWith:    "users:\n  ${VHOST}-u: { password: \"${KIND_PASSWORD}\", tags: [management] }\n",
		topChanged: "users:\n  ${VHOST}-u: { password: \"${KIND_PASSWORD_2}\", tags: [management, monitoring] }\n",
		topWithout: "users: {}\n",
	},
	kind.UserLimits: {
		name:       "${VHOST}-u",
		topWith:    "users:\n  ${VHOST}-u: { password: \"${KIND_PASSWORD}\", limits: { max-connections: 5 } }\n",
		topChanged: "users:\n  ${VHOST}-u: { password: \"${KIND_PASSWORD}\", limits: { max-connections: 6, max-channels: 10 } }\n",
		topWithout: "users:\n  ${VHOST}-u: { password: \"${KIND_PASSWORD}\" }\n",
	},
	kind.Permission: {
		name:       "${VHOST}-u",
		topWith:    "users:\n  ${VHOST}-u:\n    password: \"${KIND_PASSWORD}\"\n    permissions:\n      ${VHOST}: { configure: \"^k\\\\.\", write: \".*\", read: \".*\" }\n",
		topChanged: "users:\n  ${VHOST}-u:\n    password: \"${KIND_PASSWORD}\"\n    permissions:\n      ${VHOST}: { write: \".*\", read: \".*\" }\n",
		topWithout: "users:\n  ${VHOST}-u: { password: \"${KIND_PASSWORD}\" }\n",
	},
	kind.TopicPermission: {
		name:       "${VHOST}-u",
		topWith:    "users:\n  ${VHOST}-u:\n    password: \"${KIND_PASSWORD}\"\n    topic_permissions:\n      ${VHOST}: [{ exchange: amq.topic, write: \"^a\\\\.\", read: \".*\" }]\n",
		topChanged: "users:\n  ${VHOST}-u:\n    password: \"${KIND_PASSWORD}\"\n    topic_permissions:\n      ${VHOST}: [{ exchange: amq.topic, write: \"^b\\\\.\", read: \".*\" }, { exchange: amq.match, read: \".*\" }]\n",
		topWithout: "users:\n  ${VHOST}-u: { password: \"${KIND_PASSWORD}\" }\n",
	},
	kind.Shovel: {
		name:    "k.s",
		with:    "queues:\n  k.src: {}\n  k.dst: {}\nshovels:\n  k.s: { src-uri: \"amqp:///${VHOST}\", src-queue: k.src, dest-uri: \"amqp:///${VHOST}\", dest-queue: k.dst }\n",
		changed: "queues:\n  k.src: {}\n  k.dst: {}\nshovels:\n  k.s: { src-uri: \"amqp:///${VHOST}\", src-queue: k.src, dest-uri: [\"amqp:///${VHOST}\"], dest-queue: k.dst, ack-mode: on-publish, reconnect-delay: 2.5, src-delete-after: never }\n",
		without: "queues:\n  k.src: {}\n  k.dst: {}\n",
	},
	kind.FederationUpstream: {
		name:    "k.up",
		with:    "federation_upstreams:\n  k.up: { uri: \"amqp://localhost:1/none\", expires: 3600000 }\n",
		changed: "federation_upstreams:\n  k.up: { uri: [\"amqp://localhost:1/none\", \"amqp://localhost:2/none\"], expires: 60000, max-hops: 2, trust-user-id: true }\n",
		without: "{}\n",
	},
	kind.FederationUpstreamSet: {
		name:    "k.set",
		with:    "federation_upstreams:\n  k.up: { uri: \"amqp://localhost:1/none\" }\nfederation_upstream_sets:\n  k.set: [{ upstream: k.up }]\n",
		changed: "federation_upstreams:\n  k.up: { uri: \"amqp://localhost:1/none\" }\nfederation_upstream_sets:\n  k.set: [{ upstream: k.up, exchange: other }, { upstream: k.up, queue: q, prefetch-count: 10 }]\n",
		without: "federation_upstreams:\n  k.up: { uri: \"amqp://localhost:1/none\" }\n",
	},
	kind.OperatorPolicy: {
		name:    "k.op",
		with:    "operator_policies:\n  k.op: { pattern: \"^k\\\\.\", apply_to: queues, definition: { max-length: 10 } }\n",
		changed: "operator_policies:\n  k.op: { pattern: \"^k\\\\.\", apply_to: queues, definition: { max-length: 20 } }\n",
		without: "{}\n",
	},
}

// TestEveryKindThroughEveryStage runs one object of every kind mqctl knows
// (kind.All) through every stage against the broker: loaded from a file,
// diffed (create), rendered (text, JSON plan, saved plan), ordered,
// written, read back, in the broker's definitions file as pkg/definitions
// reads it, visible, planned again (nothing), exported and
// loaded again (nothing to plan), changed (update or replace, as its spec
// says), and deleted. A kind missing a stage fails here, not for a user.
func TestEveryKindThroughEveryStage(t *testing.T) {
	t.Parallel()
	for _, spec := range kind.All() {
		t.Run(string(spec.Kind), func(t *testing.T) {
			t.Parallel()
			kc := caseOf(t, spec.Kind)
			f := newFixture(t)
			if spec.Kind == kind.Vhost {
				// A vhost mqctl creates, changes and deletes: not the test's own.
				f.vhost = freshVhost(t, f.b)
			}
			name := strings.ReplaceAll(kc.name, "${VHOST}", f.vhost)
			k := &kindRun{f: f, spec: spec, name: name, password: "pw-" + testbroker.Name(t, "k")}
			if spec.Kind == kind.User || spec.Kind == kind.UserLimits || spec.Kind == kind.Permission || spec.Kind == kind.TopicPermission {
				f.b.UsersSection(t)
				t.Cleanup(func() { // the test's user, should a stage fail before its delete
					_ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", name)
				})
			}

			// Loaded and diffed: one create of the kind.
			p := k.plan(kc.with, kc.topWith)
			c := k.change(p, plan.Create)
			// Rendered.
			k.forms(p)
			// Ordered: the create is a step of its own.
			if !hasStep(apply.Order(p), c) {
				t.Errorf("apply.Order has no step for %s %q", spec.Kind, name)
			}
			// Written, read back, visible, and planned again: nothing.
			res := k.apply(kc.with, kc.topWith)
			state := k.read()
			if !k.present(state) {
				t.Fatalf("%s %q is not on the broker after apply", spec.Kind, name)
			}
			// In the broker's definitions file, as the definitions reader
			// reads it (mqctl export --from definitions.json): the test
			// vhost's (GET /api/definitions/{vhost}). Not the users
			// section's kinds, which only the broker's whole file holds:
			// it holds every other test's vhost too, and one whose limits
			// were cleared has a vhost-limits parameter [] that the reader
			// refuses (a fault of its own).
			if !spec.Declared {
				var defs json.RawMessage
				if err := f.c.GetJSON(context.Background(), &defs, "export the definitions", f.vhost, "definitions", f.vhost); err != nil {
					t.Fatal(err)
				}
				if read, _, err := definitions.ReadWithOptions("definitions.json", defs, definitions.ReadOptions{DefaultVhost: f.vhost}); err != nil {
					t.Errorf("read the broker's definitions: %v", err)
				} else if !k.present(read) {
					t.Errorf("%s %q is on the broker but not in its definitions as pkg/definitions reads them", spec.Kind, name)
				}
			}
			if pending := apply.Pending(res.Result.Done, state); len(pending) > 0 {
				t.Errorf("apply.Pending after apply: %v", pending)
			}
			k.noChanges(kc.with, kc.topWith, "after the create")
			// Exported and loaded again: nothing to plan.
			var y bytes.Buffer
			if err := export.WriteYAML(&y, state, export.Options{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(y.String(), spec.Section+":") && spec.Kind != kind.Vhost {
				t.Errorf("export lacks a %q section:\n%s", spec.Section, y.String())
			}
			if strings.Contains(y.String(), k.password) {
				t.Errorf("the export shows the password:\n%s", y.String())
			}
			// The export holds ${VAR} placeholders for passwords: any value
			// loads it, and the plan may then change passwords only.
			// The test's own user gets its password back, every other one any.
			own := map[string]bool{}
			for _, v := range export.Variables(state) {
				if strings.Contains(v.What, fmt.Sprintf("user %q", k.name)) {
					own[v.Name] = true
				}
			}
			anyValue := func(name string) (string, bool) {
				if own[name] {
					return k.password, true
				}
				return "x", true
			}
			exported, err := loader.LoadBytes("export.yaml", y.Bytes(), loader.Options{LookupEnv: anyValue})
			if err != nil {
				t.Fatalf("load the export: %v\n%s", err, y.String())
			}
			if p := k.planOf(exported); !onlyPasswords(p, k.name) {
				t.Errorf("the export of the broker plans changes: %v\n%s", changes(p), y.String())
			}
			// Changed: in place or replaced, as the spec says.
			if kc.changed != "" || kc.topChanged != "" {
				p := k.plan(kc.changed, kc.topChanged)
				want := plan.Replace
				if spec.InPlace {
					want = plan.Update
				}
				k.change(p, want)
				k.apply(kc.changed, kc.topChanged)
				k.noChanges(kc.changed, kc.topChanged, "after the change")
			}
			// Deleted.
			if spec.Kind == kind.Vhost {
				// A vhost that leaves the file leaves every plan's scope too
				// (plans read the file's vhosts only), so its delete is the
				// diff's of a state that holds it and records it as mqctl's.
				state, _, err := f.c.ReadTopology(context.Background(), []string{f.vhost})
				if err != nil {
					t.Fatal(err)
				}
				recs, err := ownership.Extract(state)
				if err != nil {
					t.Fatal(err)
				}
				p := plan.Diff(topology.New(), plan.Current{Live: topology.Live{State: state}, Managed: ownership.Merge(recs)})
				k.change(p, plan.Delete)
				if res := apply.Execute(context.Background(), f.c, p, apply.Options{Records: recs}); !res.OK() {
					t.Fatalf("delete the vhost: %+v", res.Failed)
				}
				if vs, err := f.c.VhostNames(context.Background()); err != nil || slices.Contains(vs, f.vhost) {
					t.Errorf("vhost %q still exists after its delete (%v)", f.vhost, err)
				}
				return
			}
			k.change(k.plan(kc.without, kc.topWithout), plan.Delete)
			k.apply(kc.without, kc.topWithout)
			if k.present(k.read()) {
				t.Errorf("%s %q is still on the broker after its delete", spec.Kind, name)
			}
			k.noChanges(kc.without, kc.topWithout, "after the delete")
		})
	}
}

// ignoreMeta leaves out where an object was declared, which the plans'
// objects do not carry (each change has its own Pos).
// Nor do they carry what the loader's sugar notes on a queue.
var ignoreMeta = cmp.Options{cmpopts.IgnoreTypes(topology.Meta{}), cmpopts.IgnoreFields(topology.Queue{}, topology.QueueFileFields...)}

type kindRun struct {
	f        *fixture
	spec     kind.Spec
	name     string
	password string // ${KIND_PASSWORD}: in no output
}

// file is a topology file of the test's vhost with body, and top at the
// top level; ${KIND_PASSWORD} and ${KIND_PASSWORD_2} are two passwords.
func (k *kindRun) file(body, top string) *topology.Topology {
	k.f.t.Helper()
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n")
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if line != "" {
			sb.WriteString("    " + line + "\n")
		}
	}
	sb.WriteString(top)
	env := func(name string) (string, bool) {
		switch name {
		case "VHOST":
			return k.f.vhost, true
		case "KIND_PASSWORD":
			return k.password, true
		case "KIND_PASSWORD_2":
			return k.password + "-2", true
		}
		return "", false
	}
	t, err := loader.LoadBytes("topology.yaml", []byte(sb.String()), loader.Options{LookupEnv: env})
	if err != nil {
		k.f.t.Fatalf("%v\n%s", err, sb.String())
	}
	if k.spec.Kind != kind.Vhost {
		// The test vhost exists with its own description: keep it.
		t.Vhosts[k.f.vhost].Description = "mqctl test " + k.f.t.Name()
	}
	return t
}

// masked is changes as their JSON forms hold them: items' secrets masked.
// unprinted is changes without the prints, which the JSON plan leaves
// out (only the saved plan carries them, for apply).
func unprinted(changes []plan.Change) []plan.Change {
	out := slices.Clone(changes)
	for i := range out {
		out[i].Print, out[i].BindingPrints = plan.NoPrint, nil
	}
	return out
}

func masked(changes []plan.Change) []plan.Change {
	out := make([]plan.Change, len(changes))
	for i, c := range changes {
		for _, o := range []*plan.Object{&c.Before, &c.After} {
			if io, ok := (*o).(plan.ItemObject); ok && len(io.Secret) > 0 {
				it := *io.Item
				it.Settings = it.Masked()
				*o = plan.ItemObject{Item: &it}
			}
		}
		out[i] = c
	}
	return out
}

// onlyPasswords reports whether p changes nothing but other users: the
// export of the broker holds every user, whose passwords it cannot know,
// and other tests add and remove theirs meanwhile.
func onlyPasswords(p *plan.Plan, own string) bool {
	for _, c := range p.Changes {
		if spec, _ := kind.Of(c.Kind); spec.Declared && c.Name != own {
			continue
		}
		return false
	}
	return true
}

func loadFor(f *fixture, src string) *topology.Topology {
	f.t.Helper()
	env := func(name string) (string, bool) { return f.vhost, name == "VHOST" }
	t, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: env})
	if err != nil {
		f.t.Fatal(err)
	}
	return t
}

func (k *kindRun) plan(body, top string) *plan.Plan {
	k.f.t.Helper()
	return k.planOf(k.file(body, top))
}

func (k *kindRun) planOf(desired *topology.Topology) *plan.Plan {
	k.f.t.Helper()
	res, err := k.f.eng.Plan(context.Background(), desired, engine.PlanOptions{})
	if err != nil {
		k.f.t.Fatal(err)
	}
	return res.Plan
}

// change returns the plan's change of the object, failing unless there is
// exactly one, with action a.
func (k *kindRun) change(p *plan.Plan, a plan.Action) *plan.Change {
	k.f.t.Helper()
	var found *plan.Change
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Kind == k.spec.Kind && c.Name == k.name {
			if found != nil {
				k.f.t.Fatalf("two changes of %s %q: %v", k.spec.Kind, k.name, changes(p))
			}
			found = c
		}
	}
	if found == nil || found.Action != a {
		k.f.t.Fatalf("want %s %s %q in the plan, got %v", a, k.spec.Kind, k.name, changes(p))
	}
	return found
}

func (k *kindRun) apply(body, top string) *engine.ApplyResult {
	k.f.t.Helper()
	out, err := k.f.eng.Apply(context.Background(), engine.ApplyInput{Desired: k.file(body, top)}, engine.ApplyOptions{AllowReplace: true})
	if err != nil {
		if out != nil && out.Result != nil {
			k.f.t.Fatalf("apply: %v: failed %+v, remaining %v", err, out.Result.Failed, out.Result.Remaining)
		}
		k.f.t.Fatalf("apply: %v", err)
	}
	if out.Result != nil && !out.Result.OK() {
		k.f.t.Fatalf("apply failed: %+v", out.Result.Failed)
	}
	return out
}

func (k *kindRun) noChanges(body, top, when string) {
	k.f.t.Helper()
	if p := k.plan(body, top); !p.Empty() {
		k.f.t.Errorf("plan %s is not empty: %v", when, changes(p))
	} else if p.Records() && len(p.Adopt) == 0 {
		// mqctl's record holds the print of every object it wrote as the
		// broker holds it: nothing to record again, nothing stale.
		k.f.t.Errorf("plan %s rewrites mqctl's record: prints %v, stale %v, changed outside %v", when, p.Prints, p.Stale, p.ChangedOutside)
	}
}

// read is the vhost's state on the broker as the engine reads it (every
// kind, mqctl's record split off).
func (k *kindRun) read() *topology.Topology {
	k.f.t.Helper()
	l, err := k.f.eng.ReadLive(context.Background(), []string{k.f.vhost})
	if err != nil {
		k.f.t.Fatal(err)
	}
	return l.State()
}

func (k *kindRun) present(state *topology.Topology) bool {
	v := state.Vhosts[k.f.vhost]
	switch {
	case v == nil:
		return false
	case k.spec.Kind == kind.Vhost:
		return true
	case k.spec.Broker:
		return state.Items.Get(k.spec.Kind, k.name) != nil
	}
	return plan.ObjectIn(v, k.spec.Kind, k.name) != nil
}

// caseOf is k's case in kindCases; a kind without one fails the test.
func caseOf(t *testing.T, k kind.Kind) kindCase {
	t.Helper()
	kc, ok := kindCases[k]
	if !ok {
		t.Fatalf("kind %q has no case in kindCases: add one (README, \"Adding a kind\")", k)
	}
	return kc
}

// forms writes p as the text, JSON and saved plans and reads the last two
// back: the text creates the object, each form reads back as it was made,
// and none shows the password.
func (k *kindRun) forms(p *plan.Plan) {
	t := k.f.t
	t.Helper()
	var text bytes.Buffer
	if err := plan.WriteText(&text, p, plan.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if !hasLine(text.String(), "+ "+string(k.spec.Kind)+" ", k.name) {
		t.Errorf("text plan lacks a line creating %s %q:\n%s", k.spec.Kind, k.name, text.String())
	}
	var js bytes.Buffer
	if err := plan.WriteJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	jsText := js.String()
	back, err := plan.ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(unprinted(masked(p.Changes)), back.Changes, ignoreMeta); diff != "" {
		t.Errorf("JSON plan round trip (-made +read):\n%s", diff)
	}
	var saved bytes.Buffer
	if err := plan.WriteSaved(&saved, p); err != nil {
		t.Fatal(err)
	}
	savedText := saved.String()
	if back, err = plan.ReadSaved(&saved, "plan.out"); err != nil {
		t.Fatal(err)
	} else if diff := cmp.Diff(masked(p.Changes), back.Changes, ignoreMeta); diff != "" {
		t.Errorf("saved plan round trip (-made +read):\n%s", diff)
	}
	for form, out := range map[string]string{"text": text.String(), "JSON": jsText, "saved": savedText} {
		if strings.Contains(out, k.password) {
			t.Errorf("the %s plan shows the password:\n%s", form, out)
		}
	}
}

// hasLine reports whether a line of text holds both prefix and name.
func hasLine(text, prefix, name string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, prefix) && strings.Contains(l, name) {
			return true
		}
	}
	return false
}

func hasStep(phases [][]apply.Step, c *plan.Change) bool {
	for _, ph := range phases {
		for _, s := range ph {
			if s.Change == c {
				return true
			}
		}
	}
	return false
}

// freshVhost is a vhost name no broker object has yet, deleted when the
// test ends.
func freshVhost(t *testing.T, b *testbroker.Broker) string {
	t.Helper()
	name := testbroker.Name(t, "mqctl-test")
	t.Cleanup(func() { _ = b.DeleteVhost(name) })
	return name
}
