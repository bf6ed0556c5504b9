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
	"github.com/mqctl/mqctl/pkg/rmqversion"
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

// TestEverySettingThroughEveryStage: for every kind with a
// topology.Definition (topology.DefinitionOf: exchanges, queues, the kinds
// of policy) and every setting of its Definition, an object whose setting
// is not RabbitMQ's default goes through every stage that carries it and
// comes out with the same settings and arguments: loaded from a file,
// planned (one create; the text plan shows the value, the JSON and saved
// plans read back as made, the change's object holds it), in a
// definitions file as RabbitMQ writes it (each setting under its APIKey)
// read as a file (mqctl export --from) and as a broker's answer (the
// streamed read and the decoded one), exported and loaded again. A
// setting added to a Definition that one stage drops (a field the public
// JSON plan, the broker's answer or a file's reader lacks) fails here,
// named, rather than reaching a user as a change that never happens.
// Against every supported broker, the object is then written by apply,
// read back, read from the broker's definitions file and planned again
// (nothing), with the same settings: a setting the broker's requests or
// reads drop fails there.
func TestEverySettingThroughEveryStage(t *testing.T) {
	t.Parallel()
	for _, spec := range kind.All() {
		if _, ok := topology.DefinitionOf(spec.Kind); !ok {
			continue
		}
		t.Run(string(spec.Kind), func(t *testing.T) {
			t.Parallel()
			f := &fixture{t: t, vhost: "settings"}
			k := &kindRun{f: f, spec: spec}
			switch {
			case spec.Kind == kind.Exchange:
				everySetting(k, topology.ExchangeDefinition, definedCase[*topology.Exchange]{
					name: "k.x", base: []string{"type", "direct"}, typed: "topic",
					in: func(v *topology.Vhost) map[string]*topology.Exchange { return v.Exchanges },
					of: func(o plan.Object) *topology.Exchange { x, _ := plan.As[topology.Exchange](o); return x }})
			case spec.Kind == kind.Queue:
				everySetting(k, topology.QueueDefinition, definedCase[*topology.Queue]{
					name: "k.q", typed: topology.QueueQuorum,
					in: func(v *topology.Vhost) map[string]*topology.Queue { return v.Queues },
					of: func(o plan.Object) *topology.Queue { x, _ := plan.As[topology.Queue](o); return x }})
			case spec.Policy:
				everySetting(k, topology.PolicyDefinition, definedCase[*topology.Policy]{
					name: "k.p", base: []string{"pattern", `'^k\.'`, "definition", "{ max-length: 10 }"},
					in: func(v *topology.Vhost) map[string]*topology.Policy { return v.PoliciesOf(spec.Kind) },
					of: func(o plan.Object) *topology.Policy { x, _ := plan.As[topology.Policy](o); return x }})
			default:
				t.Fatalf("kind %s has a topology.Definition but no case in TestEverySettingThroughEveryStage: add one (README, \"Adding a kind\")", spec.Kind)
			}
		})
	}
}

// definedCase is how an object of a kind with a topology.Definition[T] is
// declared and found: its name, the fields its mapping in the file needs
// (base: key, value, …), a value of its setting of no form (its type:
// typed), its map in a vhost, and its value in a plan's Object.
type definedCase[T any] struct {
	name  string
	base  []string
	typed string
	in    func(*topology.Vhost) map[string]T
	of    func(plan.Object) T
}

// settingValue is a value of setting s other than RabbitMQ's default, as
// the file writes it (yaml) and as the Definition reads it back (want).
func settingValue[T any](s topology.Setting[T], typed string) (yaml string, want any) {
	switch s.Form() {
	case topology.FormFlag:
		want = !s.Default.(bool)
		return fmt.Sprint(want), want
	case topology.FormEnum:
		// The first: later values may be newer than RabbitMQ 3.10 (a
		// policy's apply-to streams).
		for _, v := range s.Values {
			if v != s.Default {
				return v, v
			}
		}
	case topology.FormInt:
		return "-7", -7
	case topology.FormText:
		return `'^x\.'`, `^x\.`
	}
	return typed, typed
}

// settingsOf are o's settings (Value, in def's order) and arguments.
func settingsOf[T any](def topology.Definition[T], o T) []any {
	out := make([]any, 0, len(def.Settings)+1)
	for _, s := range def.Settings {
		out = append(out, s.Value(o))
	}
	return append(out, map[string]any(def.Args(o)))
}

func everySetting[T comparable](k *kindRun, def topology.Definition[T], dc definedCase[T]) {
	for _, s := range def.Settings {
		k.f.t.Run(s.Key, func(t *testing.T) {
			f := &fixture{t: t, vhost: k.f.vhost}
			k := &kindRun{f: f, spec: k.spec, name: dc.name, password: "pw-settings"}
			value, want := settingValue(s, dc.typed)
			fields := slices.Clone(dc.base)
			if i := slices.Index(fields, s.Key); i >= 0 && i%2 == 0 {
				fields[i+1] = value
			} else {
				fields = append(fields, s.Key, value)
			}
			var body strings.Builder
			body.WriteString(k.spec.Section + ":\n  " + dc.name + ": {")
			for i := 0; i < len(fields); i += 2 {
				if i > 0 {
					body.WriteString(",")
				}
				body.WriteString(" " + fields[i] + ": " + fields[i+1])
			}
			body.WriteString(" }\n")

			// Loaded: the setting holds its value.
			desired := k.file(body.String(), "")
			obj := dc.in(desired.Vhosts[f.vhost])[dc.name]
			var zero T
			if obj == zero {
				t.Fatalf("no %s %q loaded from\n%s", k.spec.Label, dc.name, body.String())
			}
			if got := s.Value(obj); got != want {
				t.Fatalf("%s read from the file as %v, want %v:\n%s", s.Key, got, want, body.String())
			}
			made := settingsOf(def, obj)
			same := func(stage string, o T) {
				t.Helper()
				if o == zero {
					t.Errorf("%s: no %s %q", stage, k.spec.Label, dc.name)
				} else if d := cmp.Diff(made, settingsOf(def, o)); d != "" {
					t.Errorf("%s: the settings of %s %q with %s: %v (-loaded +%s):\n%s", stage, k.spec.Label, dc.name, s.Key, want, stage, d)
				}
			}

			// Planned: one create, carrying it; the text shows it; the JSON
			// and saved plans read back as made.
			p := plan.Diff(desired, plan.Current{Live: topology.Live{State: topology.New()}, Managed: plan.Managed{}})
			same("the plan", dc.of(k.change(p, plan.Create).After))
			k.forms(p)
			var text bytes.Buffer
			if err := plan.WriteText(&text, p, plan.RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			shown := fmt.Sprintf("%s: %v", s.Key, want)
			switch s.Form() {
			case topology.FormNone:
				shown = fmt.Sprintf("(%v)", want)
			case topology.FormText:
				quoted, _ := json.Marshal(want)
				shown = fmt.Sprintf("%s: %s", s.Key, quoted)
			}
			if !hasLine(text.String(), shown, "") {
				t.Errorf("the text plan does not show %q:\n%s", shown, text.String())
			}

			// In a definitions file, each setting under its APIKey, read as
			// a file and as a broker's answer.
			elem := map[string]any{"name": dc.name, "vhost": f.vhost, def.ArgsKey: map[string]any(def.Args(obj))}
			for _, s := range def.Settings {
				elem[s.APIKey] = s.Value(obj)
			}
			doc, err := json.Marshal(map[string]any{k.spec.Section: []any{elem}})
			if err != nil {
				t.Fatal(err)
			}
			read, _, err := definitions.ReadWithOptions("definitions.json", doc, definitions.ReadOptions{DefaultVhost: f.vhost})
			if err != nil {
				t.Fatalf("read the definitions file: %v\n%s", err, doc)
			}
			same("the definitions file", dc.in(read.Vhosts[f.vhost])[dc.name])
			live := func(stage string, decode func(*definitions.Document, *definitions.LiveMapper) error) {
				var d definitions.Document
				m := definitions.NewLiveMapper(definitions.LiveVhost{Name: f.vhost})
				if err := decode(&d, m); err != nil {
					t.Fatalf("%s: %v\n%s", stage, err, doc)
				}
				v, err := m.Finish(&d)
				if err != nil {
					t.Fatalf("%s: %v\n%s", stage, err, doc)
				}
				same(stage, dc.in(v)[dc.name])
			}
			live("the broker's answer streamed", func(d *definitions.Document, m *definitions.LiveMapper) error {
				return d.DecodeReaderTo(bytes.NewReader(doc), m)
			})
			live("the broker's answer decoded", func(d *definitions.Document, _ *definitions.LiveMapper) error {
				dec := json.NewDecoder(bytes.NewReader(doc))
				dec.UseNumber()
				return d.DecodeStream(dec)
			})

			// Exported, and loaded again.
			var y bytes.Buffer
			if err := export.WriteYAML(&y, read, export.Options{}); err != nil {
				t.Fatal(err)
			}
			again, err := loader.LoadBytes("export.yaml", y.Bytes(), loader.Options{})
			if err != nil {
				t.Fatalf("load the export: %v\n%s", err, y.String())
			}
			if v := again.Vhosts[f.vhost]; v == nil {
				t.Errorf("the export has no vhost %q:\n%s", f.vhost, y.String())
			} else {
				same("the export", dc.in(v)[dc.name])
			}

			// On the broker (skipped without one): written by apply, read
			// back, in the broker's own definitions file as the reader
			// reads it, and planned again: nothing.
			lf := newFixture(t)
			lk := &kindRun{f: lf, spec: k.spec, name: dc.name, password: k.password}
			lk.apply(body.String(), "")
			same("the broker", dc.in(lk.read().Vhosts[lf.vhost])[dc.name])
			var defs json.RawMessage
			if err := lf.c.GetJSON(context.Background(), &defs, "export the definitions", lf.vhost, "definitions", lf.vhost); err != nil {
				t.Fatal(err)
			}
			// RabbitMQ 4.3.3+ leaves internal exchanges out of its
			// definitions export (rmqversion.StreamsDefinitions); 3.10 and
			// 4.0 keep them.
			leftOut := k.spec.Kind == kind.Exchange && s.Key == "internal" && rmqversion.MustParse(lf.c.Version()).StreamsDefinitions()
			switch read, _, err := definitions.ReadWithOptions("definitions.json", defs, definitions.ReadOptions{DefaultVhost: lf.vhost}); {
			case err != nil:
				t.Errorf("read the broker's definitions: %v", err)
			case leftOut:
				if x := dc.in(read.Vhosts[lf.vhost])[dc.name]; x != zero {
					t.Errorf("RabbitMQ %s's definitions export holds internal exchange %q", lf.c.Version(), dc.name)
				}
			default:
				same("the broker's definitions file", dc.in(read.Vhosts[lf.vhost])[dc.name])
			}
			lk.noChanges(body.String(), "", "after the create")
		})
	}
}
