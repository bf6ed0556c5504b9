package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// checkRouteGolden compares got with testdata/route/name, or rewrites it
// with -update.
func checkRouteGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	gold.Check(t, filepath.Join("testdata", "route", name), got)
}

// routeTopology is the expanded form of a typical file: an orders topic
// exchange with a DLQ pair and a delay tier (§3 sugar), an audit exchange
// bound exchange-to-exchange, an alternate exchange for unrouted orders, a
// headers exchange, and a retry loop.
func routeTopology() *topology.Topology {
	t := topology.New()
	v := t.Vhost("/")
	ex := func(name, typ string, args topology.Args) {
		v.Exchanges[name] = &topology.Exchange{Name: name, Type: typ, Durable: true, Arguments: args}
	}
	q := func(name, typ string, args topology.Args) {
		v.Queues[name] = &topology.Queue{Name: name, Type: typ, Durable: true, Arguments: args}
	}
	bind := func(src, dst, dtype, key string, args topology.Args) {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: dtype, RoutingKey: key, Arguments: args})
	}
	ex("orders", "topic", topology.Args{"alternate-exchange": "orders.unrouted"})
	ex("orders.dlx", "direct", nil)
	ex("orders.unrouted", "fanout", nil)
	ex("audit", "topic", nil)
	ex("docs", "headers", nil)
	ex("retry", "direct", nil)
	q("orders.shipping", "quorum", topology.Args{
		"x-dead-letter-exchange": "orders.dlx", "x-dead-letter-routing-key": "orders.shipping",
		"x-message-ttl": int64(3600000), "x-max-length": int64(10000), "x-overflow": "reject-publish", "x-delivery-limit": int64(5),
	})
	q("orders.shipping.dlq", "quorum", nil)
	q("orders.shipping.retry.10s", "quorum", topology.Args{
		"x-message-ttl": int64(10000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.shipping",
	})
	q("orders.unrouted", "classic", nil)
	q("audit.orders", "classic", topology.Args{"x-dead-letter-exchange": "ghost"})
	q("docs.pdf", "classic", nil)
	q("docs.any", "classic", nil)
	q("jobs", "classic", topology.Args{"x-dead-letter-exchange": "retry", "x-dead-letter-routing-key": "jobs.retry"})
	q("jobs.retry", "classic", topology.Args{"x-message-ttl": int64(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"})
	q("events", "stream", nil)
	ex("sharded", "x-consistent-hash", nil)
	q("sharded.work", "classic", topology.Args{"x-dead-letter-exchange": "sharded"})
	q("sharded.1", "classic", nil)
	bind("sharded", "sharded.1", "queue", "1", nil)
	ex("front", "direct", nil)
	q("front.copy", "classic", nil)
	bind("front", "sharded", "exchange", "k", nil)
	bind("front", "front.copy", "queue", "k", nil)
	q("cache", "classic", topology.Args{"x-message-ttl": int64(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "cache"})
	bind("orders", "orders.shipping", "queue", "order.created", nil)
	bind("orders", "orders.shipping", "queue", "order.paid", nil)
	bind("orders", "audit", "exchange", "order.#", nil)
	ex("payments", "topic", topology.Args{"alternate-exchange": "orders.unrouted"})
	bind("payments", "audit", "exchange", "#", nil)
	bind("orders", "events", "queue", "order.#", nil)
	bind("audit", "audit.orders", "queue", "order.*", nil)
	bind("orders.dlx", "orders.shipping.dlq", "queue", "orders.shipping", nil)
	bind("orders.unrouted", "orders.unrouted", "queue", "", nil)
	bind("docs", "docs.pdf", "queue", "", topology.Args{"x-match": "all", "format": "pdf", "pages": int64(3)})
	bind("docs", "docs.any", "queue", "", topology.Args{"x-match": "any", "format": "pdf", "lang": "en"})
	bind("retry", "jobs.retry", "queue", "jobs.retry", nil)
	// x-modulus-hash: one of three shards (one bound twice), and a queue
	// whose dead letters go there with their own routing key.
	ex("shards", "x-modulus-hash", nil)
	q("shard.1", "classic", nil)
	q("shard.2", "classic", nil)
	q("shard.3", "classic", nil)
	q("shard.work", "classic", topology.Args{"x-dead-letter-exchange": "shards"})
	bind("shards", "shard.1", "queue", "", nil)
	bind("shards", "shard.2", "queue", "a", nil)
	bind("shards", "shard.2", "queue", "b", nil)
	bind("shards", "shard.3", "queue", "", nil)
	// Quorum queues with delayed retry (4.3).
	ex("invoices", "direct", nil)
	q("invoices.charge", "quorum", topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": int64(1000), "x-delayed-retry-max": int64(60000),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "invoices.refund"})
	q("invoices.refund", "quorum", topology.Args{"x-delayed-retry-type": "returned", "x-delayed-retry-min": int64(500)})
	bind("invoices", "invoices.charge", "queue", "charge", nil)
	return t
}

func TestRouteGolden(t *testing.T) {
	tests := []struct {
		name   string
		output string
		o      routeOptions
	}{
		{"orders-created.txt", "text", routeOptions{exchange: "orders", routingKey: "order.created", depth: route.DefaultDepth}},
		{"orders-unrouted.txt", "text", routeOptions{exchange: "orders", routingKey: "user.signup", depth: route.DefaultDepth}},
		{"alternate-shadowed.txt", "text", routeOptions{exchange: "payments", routingKey: "refund.issued", depth: route.DefaultDepth}},
		{"self-cycle.txt", "text", routeOptions{exchange: "", routingKey: "cache", depth: route.DefaultDepth}},
		{"plugin-dlx.txt", "text", routeOptions{exchange: "", routingKey: "sharded.work", depth: route.DefaultDepth}},
		{"plugin-publish.txt", "text", routeOptions{exchange: "sharded", routingKey: "k", depth: route.DefaultDepth}},
		{"plugin-through-binding.txt", "text", routeOptions{exchange: "front", routingKey: "k", depth: route.DefaultDepth}},
		{"delay-tier.txt", "text", routeOptions{exchange: "", routingKey: "orders.shipping.retry.10s", depth: route.DefaultDepth}},
		{"retry-loop.txt", "text", routeOptions{exchange: "", routingKey: "jobs", depth: route.DefaultDepth}},
		{"headers.txt", "text", routeOptions{exchange: "docs", headers: map[string]any{"format": "pdf", "pages": int64(3)}, depth: route.DefaultDepth}},
		{"unroutable.txt", "text", routeOptions{exchange: "docs", headers: map[string]any{"format": "zip"}, depth: route.DefaultDepth}},
		{"default-unknown-queue.txt", "text", routeOptions{exchange: "", routingKey: "nope", depth: route.DefaultDepth}},
		{"direct-reply.txt", "text", routeOptions{exchange: "", routingKey: "amq.rabbitmq.reply-to.g1h2AA5yZXBseUAxMjM0NTY3OAAAAAAAAAAB", depth: route.DefaultDepth}},
		{"direct-reply-4.0.txt", "text", routeOptions{exchange: "", routingKey: "amq.rabbitmq.reply-to.g1h2AA5yZXBseUAxMjM0NTY3OAAAAAAAAAAB", depth: route.DefaultDepth, version: rmqversion.MustParse("4.0")}},
		{"direct-reply.json", "json", routeOptions{exchange: "", routingKey: "amq.rabbitmq.reply-to.g1h2AA5yZXBseUAxMjM0NTY3OAAAAAAAAAAB", depth: 0}},
		{"depth-1.txt", "text", routeOptions{exchange: "", routingKey: "orders.shipping.retry.10s", depth: 1}},
		{"orders-created.json", "json", routeOptions{exchange: "orders", routingKey: "order.paid", depth: 1}},
		{"modulus-hash.txt", "text", routeOptions{exchange: "shards", routingKey: "order.created", depth: route.DefaultDepth}},
		{"modulus-hash-4.0.txt", "text", routeOptions{exchange: "shards", routingKey: "order.created", depth: route.DefaultDepth, version: rmqversion.MustParse("4.0")}},
		{"modulus-hash-dlx.txt", "text", routeOptions{exchange: "", routingKey: "shard.work", depth: route.DefaultDepth}},
		{"modulus-hash-dlx-4.0.txt", "text", routeOptions{exchange: "", routingKey: "shard.work", depth: route.DefaultDepth, version: rmqversion.MustParse("4.0")}},
		{"modulus-hash.json", "json", routeOptions{exchange: "shards", routingKey: "order.created", depth: 0}},
		{"expiration.txt", "text", routeOptions{exchange: "orders", routingKey: "order.created", expiration: "60000", depth: route.DefaultDepth}},
		{"expiration-no-ttl.txt", "text", routeOptions{exchange: "", routingKey: "jobs", expiration: "30000", depth: 3}},
		{"expiration-no-ttl.json", "json", routeOptions{exchange: "", routingKey: "jobs", expiration: "30000", depth: 1}},
		{"delayed-retry.txt", "text", routeOptions{exchange: "invoices", routingKey: "charge", depth: route.DefaultDepth}},
		{"delayed-retry-4.0.txt", "text", routeOptions{exchange: "invoices", routingKey: "charge", depth: route.DefaultDepth, version: rmqversion.MustParse("4.0")}},
		{"delayed-retry.json", "json", routeOptions{exchange: "invoices", routingKey: "charge", depth: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := runRoute(&out, routeTopology(), nil, tt.output, tt.o); err != nil {
				t.Fatalf("runRoute: %v", err)
			}
			checkRouteGolden(t, tt.name, out.Bytes())
		})
	}
}

// The JSON output is the Trace struct.
func TestRouteJSONIsTrace(t *testing.T) {
	var out bytes.Buffer
	o := routeOptions{exchange: "orders", routingKey: "order.created", depth: route.DefaultDepth}
	if err := runRoute(&out, routeTopology(), nil, "json", o); err != nil {
		t.Fatal(err)
	}
	var tr route.Trace
	if err := json.Unmarshal(out.Bytes(), &tr); err != nil {
		t.Fatalf("output is not a Trace: %v\n%s", err, out.String())
	}
	if got := tr.Publish.Queues(); strings.Join(got, ",") != "audit.orders,events,orders.shipping" {
		t.Errorf("queues = %q", got)
	}
	if tr.Vhost != "/" {
		t.Errorf("vhost = %q", tr.Vhost)
	}
}

func TestRouteErrors(t *testing.T) {
	multi := topology.New()
	multi.Vhost("a")
	multi.Vhost("b")
	twoVhosts := routeTopology()
	twoVhosts.Vhost("orders").Exchanges["billing"] = &topology.Exchange{Name: "billing", Type: "topic"}
	twoVhosts.Vhost("legacy")
	internal := routeTopology()
	internal.Vhosts["/"].Exchanges["hidden"] = &topology.Exchange{Name: "hidden", Type: "fanout", Internal: true}
	tests := []struct {
		name   string
		t      *topology.Topology
		vhosts []string
		o      routeOptions
		want   string
	}{
		{"undeclared exchange", routeTopology(), nil, routeOptions{exchange: "ghost"}, `exchange "ghost" is not declared in vhost "/" (declared: "audit", "docs"`},
		{"internal exchange", internal, nil, routeOptions{exchange: "hidden"}, `exchange "hidden" in vhost "/" is internal`},
		{"exchange of another vhost", twoVhosts, nil, routeOptions{exchange: "billing"}, `exchange "billing" is not declared in vhost "/", the one route simulates without --vhost, but in vhost "orders": pass --vhost orders`},
		{"vhost without exchanges", twoVhosts, []string{"legacy"}, routeOptions{exchange: "billing"}, `exchange "billing" is not declared in vhost "legacy" (it declares no exchange)`},
		{"unknown vhost", routeTopology(), []string{"prod"}, routeOptions{exchange: "orders"}, `vhost "prod" is not declared (declared: "/")`},
		{"two vhosts without /", multi, nil, routeOptions{exchange: "x"}, `several vhosts ("a", "b") and none is "/": pass --vhost`},
		{"two --vhost", multi, []string{"a", "b"}, routeOptions{exchange: "x"}, "one vhost at a time"},
		{"no vhost", topology.New(), nil, routeOptions{exchange: "x"}, "declares no vhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runRoute(&out, tt.t, tt.vhosts, "text", tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestRouteVhostChoice(t *testing.T) {
	one := topology.New()
	one.Vhost("prod")
	two := topology.New()
	two.Vhost("/")
	two.Vhost("other")
	for _, tt := range []struct {
		name   string
		t      *topology.Topology
		vhosts []string
		want   string
	}{
		{"the only vhost", one, nil, "prod"},
		{"/ among several", two, nil, "/"},
		{"--vhost", two, []string{"other"}, "other"},
	} {
		v, err := routeVhost(tt.t, tt.vhosts)
		if err != nil || v.Name != tt.want {
			t.Errorf("%s: vhost = %v, %v; want %q", tt.name, v, err, tt.want)
		}
	}
}

func TestParseRouteHeaders(t *testing.T) {
	got, err := parseRouteHeaders([]string{"n=42", "neg=-7", "ok=true", "no=false", "s=pdf", "f=1.5", "empty=", "eq=a=b", "big=99999999999999999999"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": int64(42), "neg": int64(-7), "ok": true, "no": false, "s": "pdf", "f": "1.5", "empty": "", "eq": "a=b", "big": "99999999999999999999"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"novalue", "=v"} {
		if _, err := parseRouteHeaders([]string{bad}); err == nil || !strings.Contains(err.Error(), "want key=value") {
			t.Errorf("parseRouteHeaders(%q) err = %v", bad, err)
		}
	}
	if _, err := parseRouteHeaders([]string{"a=1", "a=2"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("duplicate header err = %v", err)
	}
}

// Flag errors are reported before the topology is loaded.
func TestRouteCommandFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"route", "--routing-key", "k"}, "--exchange is required"},
		{[]string{"route", "--exchange", "x", "--header", "oops"}, "want key=value"},
		{[]string{"route", "--exchange", "x", "--depth", "-1"}, "cannot be negative"},
		{[]string{"route", "--exchange", "x", "-o", "yaml"}, `--output "yaml" is not supported`},
		{[]string{"route", "--exchange", "x", "--expiration", "1m"}, `--expiration "1m": RabbitMQ refuses a publish with this expiration (leftover_string`},
		{[]string{"route", "--exchange", "x", "--expiration", "-5"}, "value_negative"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(t.Context(), tt.args, Env{Stdout: &stdout, Stderr: &stderr, Stdin: strings.NewReader("")})
		if code != ExitError || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("mqctl %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(tt.args, " "), code, stderr.String(), tt.want)
		}
	}
}

// TestRouteModulusHashReachesOne: route never says an x-modulus-hash
// exchange delivers to all of its destinations: on 4.3 one path leads
// through it and the text names the pick; before 4.3 no path does, and
// the text says "one of". The key order.created hashes to entry 1 of the
// four bindings (erlang:phash2([<<"order.created">>], 134217728) rem 4 = 1,
// OTP 25.2.3): shard.2, bound twice.
func TestRouteModulusHashReachesOne(t *testing.T) {
	for _, tt := range []struct {
		ver         string
		paths, want string
	}{
		{"4.3", "shards --(hash)--> shard.2", "shards picks one of {shard.1, shard.2 (2 bindings), shard.3} by a hash of the routing keys: shard.2, and only it"},
		{"4.0", "", "shards -> one of {shard.1, shard.2 (2 bindings), shard.3}: x-modulus-hash delivers the message to exactly one of them"},
	} {
		var out bytes.Buffer
		o := routeOptions{exchange: "shards", routingKey: "order.created", depth: 0, version: rmqversion.MustParse(tt.ver)}
		if err := runRoute(&out, routeTopology(), nil, "text", o); err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "-->") {
				paths = append(paths, strings.TrimSpace(l))
			}
		}
		if strings.Join(paths, "|") != tt.paths {
			t.Errorf("%s: delivery paths %q, want %q\n%s", tt.ver, paths, tt.paths, out.String())
		}
		if !strings.Contains(out.String(), tt.want) {
			t.Errorf("%s: output lacks %q:\n%s", tt.ver, tt.want, out.String())
		}
	}
}

// TestRouteRetryNoteStopsAtTheLimit: a quorum queue dead-letters a message
// at the failed delivery after its delivery limit instead of making it
// wait (rabbit_fifo return_one/8 at v4.3.5; measured on 4.3.6: with
// x-delivery-limit 2 the third reject dead-letters), so the waits the note
// lists stop there; without a limit below 4 the list goes on.
func TestRouteRetryNoteStopsAtTheLimit(t *testing.T) {
	limit := func(n int64) *int64 { return &n }
	failed := route.DelayedRetry{Type: route.RetryFailed, MinMS: 1000, MaxMS: 5000}
	cases := []struct {
		name   string
		d      route.DelayedRetry
		limit  *int64
		want   string
		absent string
	}{
		{"limit 2", failed, limit(2), "1000 ms, 2000 ms, and no more: its 3rd failed delivery dead-letters it (delivery limit 2)", "3000 ms"},
		{"limit 3", failed, limit(3), "1000 ms, 2000 ms, 3000 ms, and no more: its 4th failed delivery dead-letters it (delivery limit 3)", "…"},
		{"limit 0", failed, limit(0), "none after a failed delivery: its 1st failed delivery dead-letters it (delivery limit 0)", "1000 ms, 2000 ms"},
		{"limit 20", failed, limit(20), "1000 ms, 2000 ms, 3000 ms, …", "no more"},
		{"no limit", failed, nil, "1000 ms, 2000 ms, 3000 ms, …", "no more"},
		// returned: nacks wait and never count, so the limit ends no wait.
		{"returned, limit 1", route.DelayedRetry{Type: route.RetryReturned, MinMS: 500, MaxMS: 500}, limit(1), "500 ms, 500 ms, 500 ms, …", "no more"},
	}
	for _, c := range cases {
		got := routeRetryNote("q", c.d, c.limit)
		if !strings.Contains(got, c.want) || strings.Contains(got, c.absent) {
			t.Errorf("%s: %q\nwant it to say %q and not %q", c.name, got, c.want, c.absent)
		}
	}
}
