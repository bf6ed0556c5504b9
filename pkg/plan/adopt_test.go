package plan

import (
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestWhatIsAdopted: of each kind, an object that was on the broker before
// mqctl and that the file declares as the broker holds it (an applied
// export) is adopted, or kept and never adopted; once the file drops it,
// an adopted one is deleted and a kept one left alone. Exchanges, queues,
// bindings, policies and operator policies are adopted (SPEC §4); users,
// their limits, permissions and topic permissions, vhost limits, shovels,
// federation upstreams and upstream sets are not (SPEC §9: never one that
// existed before mqctl). Shovels, upstreams, sets and vhost limits were
// adopted, and a file made by export, applied, then trimmed deleted them.
func TestWhatIsAdopted(t *testing.T) {
	t.Parallel()
	const vhost = "v"
	tests := []struct {
		kind Kind
		// body is the vhost's section declaring one object of kind (and
		// what it needs); users, the users section.
		body, users string
		adopted     bool
		// exception: adopted although its kind is not (a shovel that
		// deletes itself once done: its record entry keeps the next
		// apply from running it again once it is gone).
		exception bool
	}{
		{kind.Exchange, "exchanges: { x: { type: topic } }", "", true, false},
		{kind.Queue, "queues: { q: {} }", "", true, false},
		{kind.Binding, "exchanges: { x: { type: topic } }\n    queues: { q: {} }\n    bindings: [{ source: x, destination: q, routing_key: k }]", "", true, false},
		{kind.Policy, `policies: { p: { pattern: "^q$", definition: { max-length: 10 } } }`, "", true, false},
		{kind.OperatorPolicy, `operator_policies: { op: { pattern: "^q$", apply_to: queues, definition: { max-length: 20 } } }`, "", true, false},
		{kind.VhostLimits, "limits: { max-queues: 10 }", "", false, false},
		{kind.Shovel, `shovels: { s: { src-uri: "amqp:///v", src-queue: a, dest-uri: "amqp:///v", dest-queue: b } }`, "", false, false},
		{kind.Shovel, `shovels: { s: { src-uri: "amqp:///v", src-queue: a, dest-uri: "amqp:///v", dest-queue: b, src-delete-after: queue-length } }`, "", true, true},
		{kind.FederationUpstream, `federation_upstreams: { up: { uri: "amqp://localhost:1/x" } }`, "", false, false},
		{kind.FederationUpstreamSet, `federation_upstreams: { up: { uri: "amqp://localhost:1/x" } }` + "\n    federation_upstream_sets: { set: [{ upstream: up }] }", "", false, false},
		{kind.User, "{}", `u: { password_hash: "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR", tags: [management] }`, false, false},
		{kind.UserLimits, "{}", `u: { password_hash: "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR", limits: { max-connections: 5 } }`, false, false},
		{kind.Permission, "{}", `u: { password_hash: "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR", permissions: { v: { read: ".*" } } }`, false, false},
		{kind.TopicPermission, "{}", `u: { password_hash: "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR", topic_permissions: { v: [{ exchange: amq.topic, write: ".*" }] } }`, false, false},
	}
	load := func(t *testing.T, body, users string) *topology.Topology {
		t.Helper()
		src := "version: 1\nvhosts:\n  v:\n    " + body + "\n"
		switch users {
		case "":
		case "{}":
			src += "users: {}\n"
		default:
			src += "users:\n  " + users + "\n"
		}
		top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		return top
	}
	ofKind := func(k Kind, refs []ObjectRef) []ObjectRef {
		return slices.DeleteFunc(slices.Clone(refs), func(r ObjectRef) bool { return r.Kind != k })
	}
	for _, tt := range tests {
		name := string(tt.kind)
		if tt.exception {
			name += " that deletes itself"
		}
		t.Run(name, func(t *testing.T) {
			if got := tt.kind.Adoptable(); got != (tt.adopted && !tt.exception) {
				t.Errorf("%s.Adoptable() = %v, want %v", tt.kind, got, tt.adopted)
			}
			// The broker holds what the file declares; no record lists it.
			file := load(t, tt.body, tt.users)
			broker := load(t, tt.body, tt.users)
			p := Diff(file, Current{Live: topology.Live{State: broker}, Managed: Managed{}})
			if len(p.Changes) != 0 {
				t.Fatalf("changes = %v, want none", p.Changes)
			}
			adopt, pre := ofKind(tt.kind, p.Adopt), ofKind(tt.kind, p.Preexisting)
			if tt.adopted && (len(adopt) != 1 || len(pre) != 0) {
				t.Fatalf("adopt = %v, preexisting = %v: want it adopted", adopt, pre)
			}
			if !tt.adopted && (len(adopt) != 0 || len(pre) != 1) {
				t.Fatalf("adopt = %v, preexisting = %v: want it kept, not adopted", adopt, pre)
			}
			// apply records what the plan adopts (Plan.Prints); then a file
			// without the object (users: {} manages the users) deletes it
			// only when adopted.
			for ref := range p.Prints {
				if ref.Kind == tt.kind && !tt.adopted {
					t.Errorf("apply would record %v", ref)
				}
			}
			droppedUsers := ""
			if tt.users != "" {
				droppedUsers = "{}"
			}
			dropped := load(t, "{}", droppedUsers)
			p = Diff(dropped, Current{Live: topology.Live{State: broker}, Managed: ManagedOf(p.Prints)})
			var deleted []ObjectRef
			for _, c := range p.Changes {
				if c.Action == Delete && c.Kind == tt.kind {
					deleted = append(deleted, c.Ref())
				}
			}
			if tt.adopted && !tt.exception && len(deleted) != 1 {
				t.Errorf("dropped from the file, deletes %v: want the adopted %s deleted", deleted, tt.kind)
			}
			// One adopted by exception is not mqctl's creation either
			// (Current.Created): left alone, as changed outside.
			if tt.exception && (len(deleted) != 0 || len(p.ChangedOutside) != 1) {
				t.Errorf("dropped from the file, deletes %v, changed outside %v: want it left alone, as changed outside", deleted, p.ChangedOutside)
			}
			if !tt.adopted && len(deleted) != 0 {
				t.Errorf("dropped from the file, deletes %v: want it left alone (it was there before mqctl)", deleted)
			}
		})
	}
}
