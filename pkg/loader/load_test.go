package loader

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/topology"
)

// ignoreMeta compares objects without their source positions and ignore
// lists (tested on their own below).
var ignoreMeta = cmpopts.IgnoreFields(topology.Meta{}, "Pos", "Ignore", "ArgPos")

// vhostFile wraps body (the inside of vhost "/", unindented) in a file.
func vhostFile(body string) string {
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  /:\n")
	for line := range strings.SplitSeq(strings.TrimRight(body, "\n"), "\n") {
		sb.WriteString("    " + line + "\n")
	}
	return sb.String()
}

func envOf(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func mustLoad(t *testing.T, src string, env ...string) *topology.Topology {
	t.Helper()
	top, err := LoadBytes("t.yaml", []byte(src), Options{LookupEnv: envOf(env...)})
	if err != nil {
		t.Fatalf("load failed:\n%s\nsource:\n%s", errorLines(err), src)
	}
	return top
}

// errorLines renders a load error one problem per line, as mqctl prints it.
func errorLines(err error) string {
	var list ErrorList
	if !errors.As(err, &list) {
		return err.Error()
	}
	lines := make([]string, len(list))
	for i, e := range list {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func queueOf(t *testing.T, top *topology.Topology, name string) *topology.Queue {
	t.Helper()
	q := top.Vhosts["/"].Queues[name]
	if q == nil {
		t.Fatalf("queue %q not declared; have %v", name, top.Vhosts["/"].QueueNames())
	}
	return q
}

// TestVhostTags: a vhost's tags are kept as written; left out they are nil
// (the broker's are kept), [] is none (the broker's are cleared).
func TestVhostTags(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"left out", "description: d", nil},
		{"none", "tags: []", []string{}},
		{"a list", "tags: [prod, team-a]", []string{"prod", "team-a"}},
		{"from the environment", "tags: [\"${T}\"]", []string{"blue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustLoad(t, vhostFile(tc.body), "T", "blue").Vhosts["/"].Tags
			if (got == nil) != (tc.want == nil) || !slices.Equal(got, tc.want) {
				t.Errorf("tags = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestQueueFields(t *testing.T) {
	tests := []struct {
		name string
		body string
		env  []string
		want *topology.Queue
	}{
		{
			name: "null body means all defaults",
			body: "queues:\n  q:\n",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking},
		},
		{
			name: "plain settings",
			body: "queues:\n  q: {type: quorum, durable: true, auto_delete: false}",
			want: &topology.Queue{Name: "q", Type: "quorum", Durable: true, Role: topology.RoleWorking},
		},
		{
			name: "non-durable auto-delete classic",
			body: "queues:\n  q: {durable: false, auto_delete: true}",
			want: &topology.Queue{Name: "q", Type: "classic", AutoDelete: true, Role: topology.RoleWorking},
		},
		{
			name: "vhost default_queue_type applies to queues without type",
			body: "default_queue_type: quorum\nqueues:\n  q:\n  s: {type: stream}",
			want: &topology.Queue{Name: "q", Type: "quorum", Durable: true, Role: topology.RoleWorking, TypeFromVhost: true},
		},
		{
			// RabbitMQ gives the vhost's default type only to a queue it
			// suits: a transient or auto-delete queue without a type is
			// classic (TestDefaultQueueTypeFallback in pkg/engine shows it
			// on each broker).
			name: "a transient queue without type in a quorum vhost is classic",
			body: "default_queue_type: quorum\nqueues:\n  q: {durable: false}",
			want: &topology.Queue{Name: "q", Type: "classic", Role: topology.RoleWorking},
		},
		{
			name: "an auto-delete queue without type in a stream vhost is classic",
			body: "default_queue_type: stream\nqueues:\n  q: {auto_delete: true}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, AutoDelete: true, Role: topology.RoleWorking},
		},
		{
			name: "defaults.queue that makes queues transient in a quorum vhost",
			body: "default_queue_type: quorum\ndefaults:\n  queue: {durable: false}\nqueues:\n  q:",
			want: &topology.Queue{Name: "q", Type: "classic", Role: topology.RoleWorking},
		},
		{
			name: "a transient queue that asks for the vhost's type keeps it",
			body: "default_queue_type: quorum\nqueues:\n  q: {type: quorum, durable: false}",
			want: &topology.Queue{Name: "q", Type: "quorum", Role: topology.RoleWorking},
		},
		{
			name: "limits map onto arguments with RabbitMQ's names and int64 values",
			body: "queues:\n  q:\n    limits: {max_length: 10000, max_length_bytes: 512KiB, overflow: reject-publish-dlx, message_ttl: 1h, expires: 7d}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{
				"x-max-length":       int64(10000),
				"x-max-length-bytes": int64(512 * 1024),
				"x-overflow":         "reject-publish-dlx",
				"x-message-ttl":      int64(3_600_000),
				"x-expires":          int64(604_800_000),
			}},
		},
		{
			name: "integer durations are milliseconds and integer sizes bytes",
			body: "queues:\n  q:\n    limits: {max_length_bytes: 100MB, message_ttl: 60000, expires: 250ms}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{
				"x-max-length-bytes": int64(100_000_000),
				"x-message-ttl":      int64(60000),
				"x-expires":          int64(250),
			}},
		},
		{
			name: "priority, single active consumer, delivery limit",
			body: "queues:\n  q: {type: quorum, max_priority: 10, single_active_consumer: true, delivery_limit: 5}",
			want: &topology.Queue{Name: "q", Type: "quorum", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{
				"x-max-priority":           int64(10),
				"x-single-active-consumer": true,
				"x-delivery-limit":         int64(5),
			}},
		},
		{
			name: "raw arguments keep their YAML types",
			body: "queues:\n  q:\n    arguments: {x-queue-mode: lazy, x-max-length: 5, x-custom: {a: [1, 2.5, true, null]}}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{
				"x-queue-mode": "lazy",
				"x-max-length": int64(5),
				"x-custom":     map[string]any{"a": []any{int64(1), 2.5, true, nil}},
			}},
		},
		{
			name: "the same value typed and raw is fine",
			body: "queues:\n  q: {max_priority: 10, arguments: {x-max-priority: 10}}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{"x-max-priority": int64(10)}},
		},
		{
			name: "raw x-queue-type is lifted into Type",
			body: "queues:\n  q: {arguments: {x-queue-type: quorum, x-delivery-limit: 3}}",
			want: &topology.Queue{Name: "q", Type: "quorum", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{"x-delivery-limit": int64(3)}},
		},
		{
			name: "raw x-queue-type equal to type",
			body: "queues:\n  q: {type: stream, arguments: {x-queue-type: stream}}",
			want: &topology.Queue{Name: "q", Type: "stream", Durable: true, Role: topology.RoleWorking},
		},
		{
			name: "dead_letter without queue sets only what is given",
			body: "queues:\n  q:\n    dead_letter: {exchange: dlx, strategy: at-least-once}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{
				"x-dead-letter-exchange": "dlx",
				"x-dead-letter-strategy": "at-least-once",
			}},
		},
		{
			name: "dead_letter routing key as given",
			body: "queues:\n  q:\n    dead_letter: {exchange: dlx, routing_key: failed}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{
				"x-dead-letter-exchange":    "dlx",
				"x-dead-letter-routing-key": "failed",
			}},
		},
		{
			name: "dead_letter to the default exchange",
			body: "queues:\n  q:\n    dead_letter: {exchange: \"\", routing_key: parking}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{
				"x-dead-letter-exchange":    "",
				"x-dead-letter-routing-key": "parking",
			}},
		},
		{
			name: "alert declares no argument, only the threshold status --check uses",
			body: "queues:\n  q: {alert: {max_depth: 100}}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Alert: &topology.Alert{MaxDepth: 100}},
		},
		{
			name: "interpolated values are typed after substitution",
			body: "queues:\n  q:\n    max_priority: ${P:-10}\n    durable: ${DURABLE}\n    limits: {message_ttl: \"${TTL}\", max_length: \"${LEN}\"}",
			env:  []string{"DURABLE", "false", "TTL", "90s", "LEN", "1_000"},
			want: &topology.Queue{Name: "q", Type: "classic", Durable: false, Role: topology.RoleWorking, Arguments: topology.Args{
				"x-max-priority": int64(10),
				"x-message-ttl":  int64(90_000),
				"x-max-length":   int64(1000),
			}},
		},
		{
			name: "interpolation in map keys",
			body: "queues:\n  ${SVC}.jobs: {}",
			env:  []string{"SVC", "billing"},
			want: &topology.Queue{Name: "billing.jobs", Type: "classic", Durable: true, Role: topology.RoleWorking},
		},
		{
			name: "$$ is a literal dollar",
			body: "queues:\n  q: {arguments: {x-note: \"cost $$5 ${X:-}\"}}",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{"x-note": "cost $5 "}},
		},
		{
			name: "quoted placeholders stay strings",
			body: "queues:\n  q: {arguments: {x-version: \"${V}\"}}",
			env:  []string{"V", "2"},
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{"x-version": "2"}},
		},
		{
			name: "YAML anchors and merge keys",
			body: "queues:\n  a: &common {type: quorum, limits: {max_length: 7}}\n  q:\n    <<: *common\n    durable: false",
			want: &topology.Queue{Name: "q", Type: "quorum", Durable: false, Role: topology.RoleWorking, Arguments: topology.Args{"x-max-length": int64(7)}},
		},
		{
			// The parser frees YAML nodes once copied, but not anchored ones.
			name: "a nested anchor aliased twice after it is read",
			body: "queues:\n  a:\n    limits: &lim {max_length: 7, overflow: reject-publish}\n  b: {limits: *lim}\n  q:\n    limits: *lim",
			want: &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{"x-max-length": int64(7), "x-overflow": "reject-publish"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := mustLoad(t, vhostFile(tt.body), tt.env...)
			got := queueOf(t, top, tt.want.Name)
			if diff := cmp.Diff(tt.want, got, ignoreMeta); diff != "" {
				t.Errorf("queue (-want +got):\n%s", diff)
			}
		})
	}
}

// Declared hears the vhost names once, before the objects are checked: a
// vhost whose objects then fail to load is among them.
func TestDeclaredNames(t *testing.T) {
	var got [][]string
	_, err := LoadBytes("f.yaml", []byte("version: 1\nvhosts:\n  b: {}\n  a:\n    queues:\n      q: {type: nope}\n"),
		Options{Declared: func(v []string) { got = append(got, v) }})
	if err == nil {
		t.Fatal("want the bad queue type reported")
	}
	if want := [][]string{{"b", "a"}}; !cmp.Equal(got, want) {
		t.Errorf("Declared heard %v, want %v", got, want)
	}
}
