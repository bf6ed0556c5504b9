// Package examples_test loads every example topology (and the repository's
// top-level topology.yaml) the way mqctl does, checks that each expands to
// what its README promises, and that lint finds nothing wrong with it.
package examples_test

import (
	"bytes"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/graph"
	"github.com/mqctl/mqctl/pkg/lint"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// workerQueues are the 38 job queues of examples/worker.
var workerQueues = []string{
	"email", "create_audience", "update_audience", "delete_audience", "line_forward_webhook",
	"line_broadcast_rich_message", "line_multicast_rich_message", "line_webhook", "process_campaign",
	"line_change_richmenu", "line_sync_follower_user", "tracking_log", "line_user_last_activity",
	"calculate_campaign_stat", "calculate_rich_menu_stat", "calculate_rich_menu_stat_item",
	"line_auto_response", "line_import_csv_user", "import_mapping_job", "mookept_audience",
	"attribute_change", "attribute_change_realtime", "audience_membership_trigger",
	"friend_track_event_trigger", "friend_track_ref_import", "audience_refresh", "action_execute",
	"scheduled_trigger_fire", "scheduled_action_fire", "form_submitted_trigger", "campaign_click_trigger",
	"web_request_execute", "message_received_trigger", "knowledge_index", "mbox_callback", "mbox_handoff",
	"booking_notification", "booking_event_trigger",
}

func load(t *testing.T, path string, env map[string]string) *topology.Topology {
	t.Helper()
	top, err := loader.Load([]string{path}, loader.Options{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	return top
}

// examplePaths are every example directory plus the top-level demo file.
func examplePaths(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("*/topology.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 3 {
		t.Fatalf("found only %v under examples/", dirs)
	}
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Dir(d))
		if _, err := os.Stat(filepath.Join(filepath.Dir(d), "README.md")); err != nil {
			t.Errorf("example %s has no README.md", filepath.Dir(d))
		}
	}
	return append(out, filepath.Join("..", "topology.yaml"))
}

// TestLintClean: no example has an error or warning finding. Infos are
// allowed; each one is explained in a comment in the file.
func TestLintClean(t *testing.T) {
	for _, path := range examplePaths(t) {
		t.Run(path, func(t *testing.T) {
			findings, err := lint.Run(load(t, path, nil), lint.Options{})
			if err != nil {
				t.Fatalf("lint: %v", err)
			}
			for _, f := range findings {
				if f.Severity >= lint.Warning {
					t.Errorf("%s: %s %s %s: %s", f.Location(), f.Severity, f.ID, f.Object, f.Message)
				}
			}
		})
	}
}

// TestGraph: every example draws in both formats, with one dead-letter edge
// per queue that has a DLX.
func TestGraph(t *testing.T) {
	for _, path := range examplePaths(t) {
		top := load(t, path, nil)
		for _, format := range graph.Formats() {
			var buf bytes.Buffer
			if err := graph.Render(&buf, top, format, rmqversion.Default); err != nil {
				t.Errorf("%s: graph --format %s: %v", path, format, err)
			}
		}
	}
	var buf bytes.Buffer
	if err := graph.Render(&buf, load(t, "worker", nil), graph.FormatMermaid, rmqversion.Default); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `-.->|"dead-letter: `); n != len(workerQueues) {
		t.Errorf("worker graph has %d dead-letter edges, want %d", n, len(workerQueues))
	}
}

func TestWorker(t *testing.T) {
	v := load(t, "worker", nil).Vhosts["/"]
	if v == nil {
		t.Fatal("vhost / not declared")
	}
	if got, want := v.ExchangeNames(), []string{"line_exchange", "line_exchange_dlq"}; !cmp.Equal(got, want) {
		t.Errorf("exchanges = %v, want %v", got, want)
	}
	for _, x := range v.Exchanges {
		if x.Type != "direct" || !x.Durable || x.AutoDelete {
			t.Errorf("exchange %s: type %s durable %v auto_delete %v, want a durable direct exchange", x.Name, x.Type, x.Durable, x.AutoDelete)
		}
	}
	if len(v.Queues) != 76 || len(v.Bindings) != 76 {
		t.Errorf("%d queues and %d bindings, want 76 and 76", len(v.Queues), len(v.Bindings))
	}
	bindings := map[string]bool{}
	for _, b := range v.Bindings {
		bindings[b.Source+" -> "+b.Destination+" : "+b.RoutingKey] = true
	}
	sim := route.New(v)
	for _, name := range workerQueues {
		q := v.Queues[name]
		if q == nil {
			t.Errorf("queue %s not declared", name)
			continue
		}
		want := topology.Args{"x-max-priority": 10, "x-dead-letter-exchange": "line_exchange_dlq", "x-dead-letter-routing-key": name}
		if !q.Arguments.Equal(want) {
			t.Errorf("queue %s arguments = %s, want exactly %s", name, q.Arguments.Canonical(), want.Canonical())
		}
		if q.Type != topology.QueueClassic || !q.Durable || q.AutoDelete {
			t.Errorf("queue %s: type %s durable %v auto_delete %v, want durable classic", name, q.Type, q.Durable, q.AutoDelete)
		}
		dlq := v.Queues[name+".dlq"]
		if dlq == nil || !dlq.Durable {
			t.Errorf("queue %s.dlq not declared durable", name)
		}
		for _, b := range []string{"line_exchange -> " + name + " : " + name, "line_exchange_dlq -> " + name + ".dlq : " + name} {
			if !bindings[b] {
				t.Errorf("missing binding %s", b)
			}
		}
		// Behaviour, not just shape: a job reaches its queue alone, and its
		// dead letters reach its own DLQ alone.
		if got := sim.Publish(route.Message{Exchange: "line_exchange", RoutingKey: name}).Queues(); !cmp.Equal(got, []string{name}) {
			t.Errorf("publish %s to line_exchange reaches %v, want [%s]", name, got, name)
		}
		if got := sim.DeadLetter(name, route.Rejected, route.Message{Exchange: "line_exchange", RoutingKey: name}).Result.Queues(); !cmp.Equal(got, []string{name + ".dlq"}) {
			t.Errorf("dead letters of %s reach %v, want [%s.dlq]", name, got, name)
		}
	}
}

func TestWorkerEnvironment(t *testing.T) {
	v := load(t, "worker", map[string]string{
		"RABBITMQ_EXCHANGE_NAME":     "jobs",
		"RABBITMQ_DLQ_EXCHANGE_NAME": "jobs.dead",
		"RABBITMQ_MAX_PRIORITY":      "5",
	}).Vhosts["/"]
	if got, want := v.ExchangeNames(), []string{"jobs", "jobs.dead"}; !cmp.Equal(got, want) {
		t.Errorf("exchanges = %v, want %v", got, want)
	}
	for _, b := range v.Bindings {
		if b.Source != "jobs" && b.Source != "jobs.dead" {
			t.Errorf("binding from %q: the exchange names from the environment were not used everywhere", b.Source)
		}
	}
	want := topology.Args{"x-max-priority": 5, "x-dead-letter-exchange": "jobs.dead", "x-dead-letter-routing-key": "email"}
	if got := v.Queues["email"].Arguments; !got.Equal(want) {
		t.Errorf("email arguments = %s, want %s", got.Canonical(), want.Canonical())
	}
}

func TestOrders(t *testing.T) {
	v := load(t, "orders", nil).Vhosts["/"]
	wantQueues := []string{
		"orders.audit", "orders.audit.dlq", "orders.shipping", "orders.shipping.dlq",
		"orders.shipping.retry.10m", "orders.shipping.retry.10s", "orders.shipping.retry.1m",
	}
	if got := v.QueueNames(); !cmp.Equal(got, wantQueues) {
		t.Fatalf("queues = %v, want %v", got, wantQueues)
	}
	sim := route.New(v)
	for tier, ttl := range map[string]int64{"10s": 10_000, "1m": 60_000, "10m": 600_000} {
		name := "orders.shipping.retry." + tier
		want := topology.Args{"x-message-ttl": ttl, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.shipping"}
		if got := v.Queues[name].Arguments; !got.Equal(want) {
			t.Errorf("%s arguments = %s, want %s", name, got.Canonical(), want.Canonical())
		}
		if got := sim.DeadLetter(name, route.Expired, route.Message{RoutingKey: name}).Result.Queues(); !cmp.Equal(got, []string{"orders.shipping"}) {
			t.Errorf("expired messages of %s reach %v, want [orders.shipping]", name, got)
		}
	}
	for msg, want := range map[string][]string{
		"order.created": {"orders.audit", "orders.shipping"},
		"order.paid":    {"orders.audit", "orders.shipping"},
		"order.shipped": {"orders.audit"},
	} {
		if got := sim.Publish(route.Message{Exchange: "orders", RoutingKey: msg}).Queues(); !cmp.Equal(got, want) {
			t.Errorf("publish %s reaches %v, want %v", msg, got, want)
		}
	}
	for _, q := range []string{"orders.shipping", "orders.audit"} {
		if got := sim.DeadLetter(q, route.Rejected, route.Message{Exchange: "orders", RoutingKey: "order.created"}).Result.Queues(); !cmp.Equal(got, []string{q + ".dlq"}) {
			t.Errorf("dead letters of %s reach %v, want only [%s.dlq]", q, got, q)
		}
		if got, ok := sim.QueueArgs(q).Int("x-delivery-limit"); !ok || got != 5 {
			t.Errorf("%s: delivery limit from policy = %v, want 5", q, sim.QueueArgs(q)["x-delivery-limit"])
		}
	}
}

func TestCappedEvents(t *testing.T) {
	v := load(t, "capped-events", nil).Vhosts["/"]
	sim := route.New(v)
	capped := topology.Args{"x-message-ttl": 60_000, "x-max-length": 10_000, "x-overflow": "reject-publish"}
	inline := v.Queues["events.dashboard"]
	if inline == nil {
		t.Fatal("events.dashboard not declared")
	}
	for k, want := range capped {
		if got := inline.Arguments[k]; !topology.ValueEqual(got, want) {
			t.Errorf("events.dashboard argument %s = %v, want %v", k, got, want)
		}
	}
	for _, q := range []string{"events.feed.mobile", "events.feed.web"} {
		if v.Queues[q] == nil {
			t.Fatalf("%s not declared", q)
		}
		if v.Queues[q].Arguments.Has("x-message-ttl") {
			t.Errorf("%s: TTL set as an argument, want it from the policy only", q)
		}
		eff := sim.QueueArgs(q)
		for k, want := range capped {
			if got := eff[k]; !topology.ValueEqual(got, want) {
				t.Errorf("%s effective %s = %v, want %v (from policy events-feed-cap)", q, k, got, want)
			}
		}
		if ttl, _ := sim.QueueArgs(q + ".dlq").Int("x-message-ttl"); ttl != 3_600_000 {
			t.Errorf("%s.dlq effective TTL = %d, want 1h: the policy must not cap the DLQs", q, ttl)
		}
	}
	want := []string{"events.dashboard", "events.feed.mobile", "events.feed.web"}
	if got := sim.Publish(route.Message{Exchange: "events", RoutingKey: "anything"}).Queues(); !cmp.Equal(got, want) {
		t.Errorf("publish to events reaches %v, want %v", got, want)
	}
}
