package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Limits, topic permissions, shovels and federation objects the sqldef
// way, as TestUsersTable does users: the broker's state before (made by
// hand, or by an earlier mqctl apply), the file, the plan's rows, the
// broker's exact state after apply, and an empty second plan.
func TestBrokerObjectsTable(t *testing.T) {
	t.Parallel()
	type env struct {
		vhost, user string
	}
	const shovel = `{ src-uri: "amqp:///${VHOST}", src-queue: t.src, dest-uri: "amqp:///${VHOST}", dest-queue: %s }`
	queues := "queues:\n  t.src: {}\n  t.dst: {}\n  t.other: {}\n"
	tests := []struct {
		name string
		// byHand makes, through the management API, objects mqctl did
		// not make; earlier is a file mqctl applied before.
		byHand        func(t *testing.T, f *fixture, e env)
		earlier, file string // the vhost's body; a users section after "---users\n"
		rows          []string
		// want is the object's settings on the broker after apply (nil:
		// absent), read by kind and name.
		kind kind.Kind
		obj  string
		want map[string]any
	}{
		{
			name:   "vhost limits set by hand and equal to the file's are kept, not changed",
			byHand: func(t *testing.T, f *fixture, e env) { putVhostLimits(t, f, e.vhost, map[string]any{"max-queues": 10}) },
			file:   "limits: { max-queues: 10 }\n",
			kind:   kind.VhostLimits, obj: "${VHOST}",
			want: map[string]any{"max-queues": int64(10)},
		},
		{
			name: "vhost limits: the file's are the vhost's, a limit it leaves out is lifted",
			byHand: func(t *testing.T, f *fixture, e env) {
				putVhostLimits(t, f, e.vhost, map[string]any{"max-queues": 10, "max-connections": 5})
			},
			file: "limits: { max-queues: 20 }\n",
			rows: []string{"update vhost_limits ${VHOST} settings.max-connections 5 -> <nil> settings.max-queues 10 -> 20"},
			kind: kind.VhostLimits, obj: "${VHOST}",
			want: map[string]any{"max-queues": int64(20)},
		},
		{
			name:    "vhost limits mqctl set and the file dropped are lifted",
			earlier: "limits: { max-queues: 10 }\n",
			file:    "{}\n",
			rows:    []string{"delete vhost_limits ${VHOST}"},
			kind:    kind.VhostLimits, obj: "${VHOST}",
		},
		{
			name: "vhost limits set by hand are left alone by a file without limits",
			byHand: func(t *testing.T, f *fixture, e env) {
				putVhostLimits(t, f, e.vhost, map[string]any{"max-connections": 7})
			},
			file: "{}\n",
			kind: kind.VhostLimits, obj: "${VHOST}",
			want: map[string]any{"max-connections": int64(7)},
		},
		{
			// An export applied names the limits set by hand: mqctl
			// adopted them, and a file without limits lifted them.
			name:    "vhost limits set by hand, applied as an export names them, then dropped from the file, are left alone",
			byHand:  func(t *testing.T, f *fixture, e env) { putVhostLimits(t, f, e.vhost, map[string]any{"max-queues": 10}) },
			earlier: "limits: { max-queues: 10 }\n",
			file:    "{}\n",
			kind:    kind.VhostLimits, obj: "${VHOST}",
			want: map[string]any{"max-queues": int64(10)},
		},
		{
			// One object per vhost: set before mqctl, the limits stay
			// the vhost's, the key the file added too.
			name: "vhost limits set by hand, given one more by a file, then dropped from the file, are all left alone",
			byHand: func(t *testing.T, f *fixture, e env) {
				putVhostLimits(t, f, e.vhost, map[string]any{"max-connections": 7})
			},
			earlier: "limits: { max-connections: 7, max-queues: 10 }\n",
			file:    "{}\n",
			kind:    kind.VhostLimits, obj: "${VHOST}",
			want: map[string]any{"max-connections": int64(7), "max-queues": int64(10)},
		},
		{
			name:    "user limits changed",
			earlier: "{}\n---users\n${U}: { password: \"${PW}\", limits: { max-connections: 5 } }\n",
			file:    "{}\n---users\n${U}: { password: \"${PW}\", limits: { max-channels: 10 } }\n",
			rows:    []string{"update user_limits ${U} settings.max-channels <nil> -> 10 settings.max-connections 5 -> <nil>"},
			kind:    kind.UserLimits, obj: "${U}",
			want: map[string]any{"max-channels": int64(10)},
		},
		{
			name: "topic permissions of a new user, one per exchange",
			file: "{}\n---users\n${U}:\n  password: \"${PW}\"\n  topic_permissions:\n    ${VHOST}: [{ exchange: amq.topic, write: \"^a\\\\.\", read: \".*\" }, { exchange: amq.match, read: \"^x$\" }]\n",
			rows: []string{"create user ${U}", "create topic_permission ${U}"},
			kind: kind.TopicPermission, obj: "${U}",
			// A regexp the file leaves out is "^$": nothing.
			want: map[string]any{"amq.match": map[string]any{"read": "^x$", "write": "^$"}, "amq.topic": map[string]any{"read": ".*", "write": "^a\\."}},
		},
		{
			name:    "topic permissions: an exchange the file dropped loses its permission",
			earlier: "{}\n---users\n${U}:\n  password: \"${PW}\"\n  topic_permissions:\n    ${VHOST}: [{ exchange: amq.topic, write: \".*\", read: \".*\" }, { exchange: amq.match, read: \".*\" }]\n",
			file:    "{}\n---users\n${U}:\n  password: \"${PW}\"\n  topic_permissions:\n    ${VHOST}: [{ exchange: amq.topic, write: \".*\", read: \".*\" }]\n",
			rows:    []string{"update topic_permission ${U} settings.amq.match {\"read\":\".*\",\"write\":\"^$\"} -> <nil>"},
			kind:    kind.TopicPermission, obj: "${U}",
			want: map[string]any{"amq.topic": map[string]any{"read": ".*", "write": ".*"}},
		},
		{
			name:   "a shovel made by hand with the file's settings is kept, not changed",
			byHand: func(t *testing.T, f *fixture, e env) { putShovel(t, f, e.vhost, "t.s", "t.dst") },
			file:   queues + "shovels:\n  t.s: " + fmt.Sprintf(shovel, "t.dst") + "\n",
			// The running shovel declared t.src and t.dst as the file
			// has them: mqctl adopts them without a change.
			rows: []string{"create queue t.other"},
			kind: kind.Shovel, obj: "t.s",
			want: map[string]any{"src-uri": "amqp:///${VHOST}", "src-queue": "t.src", "dest-uri": "amqp:///${VHOST}", "dest-queue": "t.dst"},
		},
		{
			// An export applied names the shovels made by hand: mqctl
			// adopted them, and a file without one deleted it.
			name:    "a shovel made by hand, applied as an export names it, then dropped from the file, is left alone",
			byHand:  func(t *testing.T, f *fixture, e env) { putShovel(t, f, e.vhost, "t.s", "t.dst") },
			earlier: queues + "shovels:\n  t.s: " + fmt.Sprintf(shovel, "t.dst") + "\n",
			file:    queues,
			kind:    kind.Shovel, obj: "t.s",
			want: map[string]any{"src-uri": "amqp:///${VHOST}", "src-queue": "t.src", "dest-uri": "amqp:///${VHOST}", "dest-queue": "t.dst"},
		},
		{
			name:    "a shovel whose destination changed is updated in place",
			earlier: queues + "shovels:\n  t.s: " + fmt.Sprintf(shovel, "t.dst") + "\n",
			file:    queues + "shovels:\n  t.s: " + fmt.Sprintf(shovel, "t.other") + "\n",
			rows:    []string{"update shovel t.s settings.dest-queue t.dst -> t.other"},
			kind:    kind.Shovel, obj: "t.s",
			want: map[string]any{"src-uri": "amqp:///${VHOST}", "src-queue": "t.src", "dest-uri": "amqp:///${VHOST}", "dest-queue": "t.other"},
		},
		{
			name:   "a shovel made by hand that the file does not name is left alone",
			byHand: func(t *testing.T, f *fixture, e env) { putShovel(t, f, e.vhost, "t.hand", "t.dst") },
			file:   queues,
			rows:   []string{"create queue t.other"},
			kind:   kind.Shovel, obj: "t.hand",
			want: map[string]any{"src-uri": "amqp:///${VHOST}", "src-queue": "t.src", "dest-uri": "amqp:///${VHOST}", "dest-queue": "t.dst"},
		},
		{
			name:    "a shovel mqctl made and the file dropped is deleted",
			earlier: queues + "shovels:\n  t.s: " + fmt.Sprintf(shovel, "t.dst") + "\n",
			file:    queues,
			rows:    []string{"delete shovel t.s"},
			kind:    kind.Shovel, obj: "t.s",
		},
		{
			name:    "an upstream's URI with credentials changes without showing them",
			earlier: "federation_upstreams:\n  t.up: { uri: \"amqp://fed:${PW}@localhost:1/none\", expires: 3600000 }\n",
			file:    "federation_upstreams:\n  t.up: { uri: \"amqp://fed:${PW}@localhost:2/none\", expires: 3600000 }\n",
			rows:    []string{"update federation_upstream t.up settings.uri amqp://fed:***@localhost:1/none -> amqp://fed:***@localhost:2/none"},
			kind:    kind.FederationUpstream, obj: "t.up",
			want: map[string]any{"uri": "amqp://fed:${PW}@localhost:2/none", "expires": int64(3600000)},
		},
		{
			name: "an upstream made by hand, applied as an export names it, then dropped from the file, is left alone",
			byHand: func(t *testing.T, f *fixture, e env) {
				putParameter(t, f, e.vhost, "federation-upstream", "t.up", map[string]any{"uri": "amqp://localhost:1/none", "expires": 3600000})
			},
			earlier: "federation_upstreams:\n  t.up: { uri: \"amqp://localhost:1/none\", expires: 3600000 }\n",
			file:    "{}\n",
			kind:    kind.FederationUpstream, obj: "t.up",
			want: map[string]any{"uri": "amqp://localhost:1/none", "expires": int64(3600000)},
		},
		{
			name: "an upstream set made by hand, applied as an export names it, then dropped from the file, is left alone",
			byHand: func(t *testing.T, f *fixture, e env) {
				putParameter(t, f, e.vhost, "federation-upstream", "t.a", map[string]any{"uri": "amqp://localhost:1/a"})
				putParameter(t, f, e.vhost, "federation-upstream-set", "t.set", []any{map[string]any{"upstream": "t.a"}})
			},
			earlier: "federation_upstreams:\n  t.a: { uri: \"amqp://localhost:1/a\" }\nfederation_upstream_sets:\n  t.set: [{ upstream: t.a }]\n",
			file:    "{}\n",
			kind:    kind.FederationUpstreamSet, obj: "t.set",
			want: map[string]any{"upstreams": []any{map[string]any{"upstream": "t.a"}}},
		},
		{
			name:    "an upstream set gains an upstream",
			earlier: "federation_upstreams:\n  t.a: { uri: \"amqp://localhost:1/a\" }\n  t.b: { uri: \"amqp://localhost:1/b\" }\nfederation_upstream_sets:\n  t.set: [{ upstream: t.a }]\n",
			file:    "federation_upstreams:\n  t.a: { uri: \"amqp://localhost:1/a\" }\n  t.b: { uri: \"amqp://localhost:1/b\" }\nfederation_upstream_sets:\n  t.set: [{ upstream: t.a }, { upstream: t.b, exchange: x }]\n",
			rows:    []string{"update federation_upstream_set t.set settings.upstreams [{\"upstream\":\"t.a\"}] -> [{\"upstream\":\"t.a\"},{\"exchange\":\"x\",\"upstream\":\"t.b\"}]"},
			kind:    kind.FederationUpstreamSet, obj: "t.set",
			want: map[string]any{"upstreams": []any{map[string]any{"upstream": "t.a"}, map[string]any{"upstream": "t.b", "exchange": "x"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			u := testbroker.Name(t, "mqctl-ot")
			e := env{vhost: f.vhost, user: u}
			const pw = "pw-table-secret"
			vars := map[string]string{"VHOST": f.vhost, "U": u, "PW": pw}
			expand := func(s string) string {
				return strings.NewReplacer("${VHOST}", f.vhost, "${U}", u, "${PW}", pw).Replace(s)
			}
			if strings.Contains(tt.earlier+tt.file, "---users") {
				f.b.UsersSection(t)
				t.Cleanup(func() { _ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", u) })
			}
			load := func(body string) *topology.Topology {
				vh, users, _ := strings.Cut(body, "---users\n")
				src := "version: 1\nvhosts:\n  ${VHOST}:\n" + indent(vh, "    ")
				if users != "" {
					src += "users:\n" + indent(users, "  ")
				}
				top, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
				if err != nil {
					t.Fatalf("%v\n%s", err, src)
				}
				top.Vhosts[f.vhost].Description = "mqctl test " + t.Name()
				return top
			}
			if tt.byHand != nil {
				tt.byHand(t, f, e)
			}
			if tt.earlier != "" {
				if _, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: load(tt.earlier)}, engine.ApplyOptions{}); err != nil {
					t.Fatalf("earlier apply: %v", err)
				}
			}
			p := f.plan(load(tt.file))
			rows := planRows(p)
			var want []string
			for _, r := range tt.rows {
				want = append(want, expand(r))
			}
			if !slices.Equal(rows, want) {
				t.Fatalf("plan rows = %q, want %q", rows, want)
			}
			for _, r := range rows {
				if strings.Contains(r, pw) {
					t.Errorf("a plan row shows the password: %q", r)
				}
			}
			if _, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: load(tt.file)}, engine.ApplyOptions{}); err != nil {
				t.Fatalf("apply: %v", err)
			}
			l, err := f.eng.ReadLive(context.Background(), []string{f.vhost})
			if err != nil {
				t.Fatal(err)
			}
			st := l.State()
			items := st.Vhosts[f.vhost].Items
			if sp, _ := kind.Of(tt.kind); sp.Broker {
				items = st.Items
			}
			got := items.Get(tt.kind, expand(tt.obj))
			switch {
			case tt.want == nil && got != nil:
				t.Errorf("%s %s is still on the broker: %v", tt.kind, tt.obj, got.Settings)
			case tt.want != nil && got == nil:
				t.Errorf("%s %s is not on the broker", tt.kind, tt.obj)
			case tt.want != nil:
				w := topology.Args{}
				for k, v := range tt.want {
					if s, ok := v.(string); ok {
						v = expand(s)
					}
					w[k] = v
				}
				if !w.Equal(got.Settings) {
					t.Errorf("%s %s on the broker = %s, want %s", tt.kind, tt.obj, got.Settings.Canonical(), w.Canonical())
				}
			}
			if p := f.plan(load(tt.file)); !p.Empty() {
				t.Errorf("second plan: %v", changes(p))
			}
		})
	}
}

// planRows renders p's changes as "action kind name [field before -> after]…".
func planRows(p *plan.Plan) []string {
	var rows []string
	for _, c := range p.Changes {
		row := string(c.Action) + " " + string(c.Kind) + " " + c.Name
		for _, fc := range c.Fields {
			row += " " + fc.Field + " " + value(fc.Before) + " -> " + value(fc.After)
		}
		rows = append(rows, row)
	}
	return rows
}

func value(v any) string {
	switch x := topology.Normalize(v).(type) {
	case nil:
		return "<nil>"
	case string:
		return x
	case int64, float64, bool:
		return fmt.Sprint(x)
	default:
		b, _ := json.Marshal(x) // keys sorted
		return string(b)
	}
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func putVhostLimits(t *testing.T, f *fixture, vhost string, limits map[string]any) {
	t.Helper()
	for k, v := range limits {
		if err := f.c.PutJSON(context.Background(), map[string]any{"value": v}, "set a vhost limit by hand", vhost, "vhost-limits", vhost, k); err != nil {
			t.Fatal(err)
		}
	}
}

// putParameter writes a runtime parameter of component by hand.
func putParameter(t *testing.T, f *fixture, vhost, component, name string, value any) {
	t.Helper()
	body := map[string]any{"value": value}
	if err := f.c.PutJSON(context.Background(), body, "write a parameter by hand", vhost, "parameters", component, vhost, name); err != nil {
		t.Fatal(err)
	}
}

func putShovel(t *testing.T, f *fixture, vhost, name, dest string) {
	t.Helper()
	body := map[string]any{"value": map[string]any{"src-uri": "amqp:///" + vhost, "src-queue": "t.src", "dest-uri": "amqp:///" + vhost, "dest-queue": dest}}
	if err := f.c.PutJSON(context.Background(), body, "make a shovel by hand", vhost, "parameters", "shovel", vhost, name); err != nil {
		t.Fatal(err)
	}
	// A running shovel declares its source and destination queues; wait
	// for that, so that the plan reads them whatever the timing.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var status []struct{ Name, State string }
		if err := f.c.GetJSON(context.Background(), &status, "read shovel status", vhost, "shovels", vhost); err != nil {
			t.Fatal(err)
		}
		for _, s := range status {
			if s.Name == name && s.State == "running" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("shovel %s is not running after 20 s: %+v", name, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
