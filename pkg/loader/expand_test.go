package loader

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/topology"
)

// workerQueues are the 38 queues of the worker topology that motivated
// defaults: every queue has priority 10, a binding on line_exchange with
// its own name as key, and a <queue>.dlq pair behind line_exchange_dlq.
var workerQueues = []string{
	"email", "sms", "push", "webhook", "invoice", "receipt", "refund", "payout",
	"thumbnail", "transcode", "ocr", "pdf", "archive", "cleanup", "export", "import",
	"reindex", "search", "audit", "report", "digest", "reminder", "billing", "dunning",
	"signup", "welcome", "verify", "reset", "geocode", "enrich", "score", "fraud",
	"sync", "backup", "metrics", "notify", "slack", "cron",
}

const workerDefaults = `version: 1
vhosts:
  /:
    defaults:
      queue:
        max_priority: 10
        bindings:
          - exchange: line_exchange
            routing_key: "{queue}"
        dead_letter:
          exchange: line_exchange_dlq
          queue: "{queue}.dlq"
    exchanges:
      line_exchange: {type: direct}
      line_exchange_dlq: {type: direct}
    queues:
`

func TestWorkerDefaults(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(workerDefaults)
	for _, q := range workerQueues {
		sb.WriteString("      " + q + ":\n")
	}
	top := mustLoad(t, sb.String())
	v := top.Vhosts["/"]
	if len(workerQueues) != 38 {
		t.Fatalf("fixture has %d queues", len(workerQueues))
	}
	if got, want := len(v.Queues), 2*38; got != want {
		t.Errorf("%d queues, want %d", got, want)
	}
	if got, want := len(v.Bindings), 2*38; got != want {
		t.Errorf("%d bindings, want %d", got, want)
	}

	wantEmail := &topology.Queue{Name: "email", Type: "classic", Durable: true, Role: topology.RoleWorking, Arguments: topology.Args{
		"x-max-priority":            int64(10),
		"x-dead-letter-exchange":    "line_exchange_dlq",
		"x-dead-letter-routing-key": "email",
	}}
	// (What it takes from the defaults: TestQueueFromDefaults.)
	if diff := cmp.Diff(wantEmail, v.Queues["email"], ignoreMeta, cmpopts.IgnoreFields(topology.Queue{}, "FromDefaults")); diff != "" {
		t.Errorf("email (-want +got):\n%s", diff)
	}
	// The DLQ inherits the type, but not the priority, bindings or dead-lettering.
	wantDLQ := &topology.Queue{Name: "email.dlq", Type: "classic", Durable: true, Role: topology.RoleDeadLetter, Origin: "email"}
	if diff := cmp.Diff(wantDLQ, v.Queues["email.dlq"], ignoreMeta); diff != "" {
		t.Errorf("email.dlq (-want +got):\n%s", diff)
	}
	wantBindings := []*topology.Binding{
		{Source: "line_exchange", Destination: "email", DestinationType: "queue", RoutingKey: "email"},
		{Source: "line_exchange_dlq", Destination: "email.dlq", DestinationType: "queue", RoutingKey: "email"},
	}
	var got []*topology.Binding
	for _, b := range v.Bindings {
		if b.Destination == "email" || b.Destination == "email.dlq" {
			got = append(got, b)
		}
	}
	if diff := cmp.Diff(wantBindings, got, ignoreMeta); diff != "" {
		t.Errorf("email bindings (-want +got):\n%s", diff)
	}
}

func TestDefaultsFieldReplacement(t *testing.T) {
	src := workerDefaults + `      plain:
      own-key:
        bindings: [{exchange: other, routing_key: special}]
      no-dlx:
        dead_letter: ~
      quorum-one:
        type: quorum
        max_priority: ~
`
	// A field set to null is unset: the default does not apply.
	top := mustLoad(t, src)
	v := top.Vhosts["/"]
	if got := v.BindingsTo("queue", "own-key"); len(got) != 1 || got[0].Source != "other" || got[0].RoutingKey != "special" {
		t.Errorf("own-key bindings replace the default's: got %+v", got)
	}
	noDLX := v.Queues["no-dlx"]
	if noDLX.Arguments.Has("x-dead-letter-exchange") || v.Queues["no-dlx.dlq"] != nil {
		t.Errorf("dead_letter: ~ removes the default's dead-lettering: %+v", noDLX.Arguments)
	}
	if got := v.Queues["quorum-one.dlq"]; got == nil || got.Type != "quorum" {
		t.Errorf("the DLQ of a quorum queue is quorum: %+v", got)
	}
	if got := v.Queues["quorum-one"].Arguments; got.Has("x-max-priority") {
		t.Errorf("max_priority: ~ keeps the default's priority away: %v", got)
	}
	if got := v.Queues["plain"].Arguments["x-max-priority"]; got != int64(10) {
		t.Errorf("plain x-max-priority = %#v", got)
	}
}

// TestQueueFromDefaults: a queue records the arguments it takes from its
// vhost's defaults.queue, each with the default's field and where it is
// written, so that advice about one names the default and how to leave it
// out of that queue alone; a field the queue sets is its own.
func TestQueueFromDefaults(t *testing.T) {
	top := mustLoad(t, vhostFile(`defaults:
  queue:
    max_priority: 10
    limits: {max_length: 100, overflow: reject-publish}
    arguments: {x-queue-mode: lazy}
queues:
  plain: {}
  own:
    limits: {message_ttl: 1m}
    max_priority: ~
    arguments: {x-max-priority: 5}
`))
	v := top.Vhosts["/"]
	want := map[string]topology.Inherited{
		"x-max-priority": {Field: "max_priority", Pos: topology.Pos{File: "t.yaml", Line: 6, Col: 23}},
		"x-max-length":   {Field: "limits.max_length", Pos: topology.Pos{File: "t.yaml", Line: 7, Col: 30}},
		"x-overflow":     {Field: "limits.overflow", Pos: topology.Pos{File: "t.yaml", Line: 7, Col: 45}},
		"x-queue-mode":   {Field: "arguments.x-queue-mode", Pos: topology.Pos{File: "t.yaml", Line: 8, Col: 35}},
	}
	if diff := cmp.Diff(want, v.Queues["plain"].FromDefaults); diff != "" {
		t.Errorf("plain's arguments from defaults (-want +got):\n%s", diff)
	}
	if got := v.Queues["own"].FromDefaults; got != nil {
		t.Errorf("own sets limits, max_priority and arguments itself; from defaults: %v", got)
	}
}

func TestExchangeDefaults(t *testing.T) {
	top := mustLoad(t, vhostFile(`defaults:
  exchange: {type: topic, alternate_exchange: "{exchange}.unrouted"}
exchanges:
  orders:
  audit: {type: fanout}
  orders.unrouted: {type: fanout, alternate_exchange: ~}
`))
	x := top.Vhosts["/"].Exchanges
	if x["orders"].Type != "topic" || x["orders"].Arguments["alternate-exchange"] != "orders.unrouted" {
		t.Errorf("orders = %+v", x["orders"])
	}
	if x["audit"].Type != "fanout" || x["audit"].Arguments["alternate-exchange"] != "audit.unrouted" {
		t.Errorf("audit = %+v", x["audit"])
	}
	if x["orders.unrouted"].Arguments.Has("alternate-exchange") {
		t.Errorf("orders.unrouted = %+v", x["orders.unrouted"])
	}
}

func TestDeadLetterQueue(t *testing.T) {
	tests := []struct {
		name         string
		body         string
		wantOrigin   topology.Args
		wantQueues   []*topology.Queue
		wantBindings []*topology.Binding
	}{
		{
			name: "routing key defaults to the origin's name",
			body: `queues:
  orders.shipping:
    type: quorum
    dead_letter: {exchange: orders.dlx, queue: orders.shipping.dlq}`,
			wantOrigin: topology.Args{"x-dead-letter-exchange": "orders.dlx", "x-dead-letter-routing-key": "orders.shipping"},
			wantQueues: []*topology.Queue{{Name: "orders.shipping.dlq", Type: "quorum", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping"}},
			wantBindings: []*topology.Binding{
				{Source: "orders.dlx", Destination: "orders.shipping.dlq", DestinationType: "queue", RoutingKey: "orders.shipping"},
			},
		},
		{
			name: "explicit routing key is the binding key",
			body: `queues:
  orders.shipping:
    dead_letter: {exchange: dlx, routing_key: failed, queue: parked}`,
			wantOrigin:   topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "failed"},
			wantQueues:   []*topology.Queue{{Name: "parked", Type: "classic", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping"}},
			wantBindings: []*topology.Binding{{Source: "dlx", Destination: "parked", DestinationType: "queue", RoutingKey: "failed"}},
		},
		{
			// A DLQ keeps dead letters for someone to look at: a transient
			// origin does not make it lose them on the next restart.
			name: "the DLQ of a transient queue is durable",
			body: `queues:
  orders.shipping:
    durable: false
    dead_letter: {exchange: dlx, queue: parked}`,
			wantOrigin:   topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders.shipping"},
			wantQueues:   []*topology.Queue{{Name: "parked", Type: "classic", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping"}},
			wantBindings: []*topology.Binding{{Source: "dlx", Destination: "parked", DestinationType: "queue", RoutingKey: "orders.shipping"}},
		},
		{
			name: "the DLQ mapping of a transient queue is durable unless it says otherwise",
			body: `queues:
  orders.shipping:
    durable: false
    dead_letter: {exchange: dlx, queue: {name: parked, limits: {max_length: 10}}}`,
			wantOrigin: topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders.shipping"},
			wantQueues: []*topology.Queue{{Name: "parked", Type: "classic", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping",
				Arguments: topology.Args{"x-max-length": int64(10)}}},
			wantBindings: []*topology.Binding{{Source: "dlx", Destination: "parked", DestinationType: "queue", RoutingKey: "orders.shipping"}},
		},
		{
			name: "a transient DLQ is one the mapping asks for",
			body: `queues:
  orders.shipping:
    dead_letter: {exchange: dlx, queue: {name: parked, durable: false}}`,
			wantOrigin:   topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders.shipping"},
			wantQueues:   []*topology.Queue{{Name: "parked", Type: "classic", Durable: false, Role: topology.RoleDeadLetter, Origin: "orders.shipping"}},
			wantBindings: []*topology.Binding{{Source: "dlx", Destination: "parked", DestinationType: "queue", RoutingKey: "orders.shipping"}},
		},
		{
			name: "DLQ given as a mapping has its own settings",
			body: `queues:
  orders.shipping:
    type: quorum
    dead_letter:
      exchange: dlx
      queue: {name: orders.dlq, type: classic, limits: {max_length: 1000, message_ttl: 7d}}`,
			wantOrigin: topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders.shipping"},
			wantQueues: []*topology.Queue{{Name: "orders.dlq", Type: "classic", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping",
				Arguments: topology.Args{"x-max-length": int64(1000), "x-message-ttl": int64(604_800_000)}}},
			wantBindings: []*topology.Binding{{Source: "dlx", Destination: "orders.dlq", DestinationType: "queue", RoutingKey: "orders.shipping"}},
		},
		{
			name: "DLQ mapping without type inherits the origin's",
			body: `queues:
  orders.shipping:
    type: quorum
    dead_letter: {exchange: dlx, queue: {name: orders.dlq}}`,
			wantOrigin:   topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders.shipping"},
			wantQueues:   []*topology.Queue{{Name: "orders.dlq", Type: "quorum", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping"}},
			wantBindings: []*topology.Binding{{Source: "dlx", Destination: "orders.dlq", DestinationType: "queue", RoutingKey: "orders.shipping"}},
		},
		{
			name: "without an exchange dead letters use the default exchange, keyed by the DLQ's name",
			body: `queues:
  orders.shipping:
    dead_letter: {queue: orders.shipping.dlq}`,
			wantOrigin: topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.shipping.dlq"},
			wantQueues: []*topology.Queue{{Name: "orders.shipping.dlq", Type: "classic", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping"}},
		},
		{
			name: "a raw dead-letter exchange counts as set",
			body: `queues:
  orders.shipping:
    arguments: {x-dead-letter-exchange: dlx}
    dead_letter: {queue: orders.shipping.dlq}`,
			wantOrigin:   topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders.shipping"},
			wantQueues:   []*topology.Queue{{Name: "orders.shipping.dlq", Type: "classic", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping"}},
			wantBindings: []*topology.Binding{{Source: "dlx", Destination: "orders.shipping.dlq", DestinationType: "queue", RoutingKey: "orders.shipping"}},
		},
		{
			name: "a declared queue with the same type and durability is the DLQ",
			body: `queues:
  orders.shipping:
    dead_letter: {exchange: dlx, queue: orders.dlq}
  orders.dlq:
    limits: {max_length: 10}`,
			wantOrigin: topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders.shipping"},
			wantQueues: []*topology.Queue{{Name: "orders.dlq", Type: "classic", Durable: true, Role: topology.RoleDeadLetter, Origin: "orders.shipping",
				Arguments: topology.Args{"x-max-length": int64(10)}}},
			wantBindings: []*topology.Binding{{Source: "dlx", Destination: "orders.dlq", DestinationType: "queue", RoutingKey: "orders.shipping"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := mustLoad(t, vhostFile(tt.body))
			v := top.Vhosts["/"]
			if diff := cmp.Diff(tt.wantOrigin, v.Queues["orders.shipping"].Arguments); diff != "" {
				t.Errorf("origin arguments (-want +got):\n%s", diff)
			}
			for _, want := range tt.wantQueues {
				if diff := cmp.Diff(want, v.Queues[want.Name], ignoreMeta); diff != "" {
					t.Errorf("queue %s (-want +got):\n%s", want.Name, diff)
				}
			}
			if diff := cmp.Diff(tt.wantBindings, v.Bindings, ignoreMeta); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSharedDLQKeepsDeadLettersApart(t *testing.T) {
	// Two queues bound to the same key share one DLX and one DLQ; each
	// queue's dead letters carry its own name as routing key.
	top := mustLoad(t, vhostFile(`queues:
  billing:
    bindings: [{exchange: orders, routing_key: order.created}]
    dead_letter: {exchange: dlx, queue: all.dlq}
  shipping:
    bindings: [{exchange: orders, routing_key: order.created}]
    dead_letter: {exchange: dlx, queue: all.dlq}
`))
	v := top.Vhosts["/"]
	var keys []string
	for _, b := range v.BindingsTo("queue", "all.dlq") {
		keys = append(keys, b.Source+" "+b.RoutingKey)
	}
	if diff := cmp.Diff([]string{"dlx billing", "dlx shipping"}, keys); diff != "" {
		t.Errorf("DLQ bindings (-want +got):\n%s", diff)
	}
}

func TestRetryDelays(t *testing.T) {
	top := mustLoad(t, vhostFile(`queues:
  orders.shipping:
    type: quorum
    retry:
      delays: [250ms, 10s, 1m, 10m, 2h, 7d, 1500]
`))
	v := top.Vhosts["/"]
	tiers := []struct {
		suffix string
		ms     int64
	}{{"250ms", 250}, {"10s", 10_000}, {"1m", 60_000}, {"10m", 600_000}, {"2h", 7_200_000}, {"7d", 604_800_000}, {"1500ms", 1500}}
	for _, tier := range tiers {
		name := "orders.shipping.retry." + tier.suffix
		want := &topology.Queue{
			Name: name, Type: "quorum", Durable: true,
			Arguments: topology.Args{
				"x-message-ttl":             tier.ms,
				"x-dead-letter-exchange":    "",
				"x-dead-letter-routing-key": "orders.shipping",
			},
			Role: topology.RoleDelay, Origin: "orders.shipping", Delay: tier.ms,
		}
		if diff := cmp.Diff(want, v.Queues[name], ignoreMeta); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if len(v.Queues) != 1+len(tiers) {
		t.Errorf("queues: %v", v.QueueNames())
	}
	if len(v.Bindings) != 0 {
		t.Errorf("delay queues are reached through the default exchange, not bindings: %v", v.Bindings)
	}
	// The tier's TTL is an int64, as the broker compares it.
	if _, ok := v.Queues["orders.shipping.retry.10s"].Arguments["x-message-ttl"].(int64); !ok {
		t.Errorf("x-message-ttl is %T", v.Queues["orders.shipping.retry.10s"].Arguments["x-message-ttl"])
	}
}

func TestRetryAndDLQWithDefaults(t *testing.T) {
	top := mustLoad(t, vhostFile(`defaults:
  queue:
    retry: {delays: [10s]}
    dead_letter: {exchange: dlx, queue: "{queue}.dlq"}
queues:
  a:
  b: {retry: ~}
`))
	v := top.Vhosts["/"]
	want := []string{"a", "a.dlq", "a.retry.10s", "b", "b.dlq"}
	if diff := cmp.Diff(want, v.QueueNames()); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	// The DLQ and the delay queue get no dead_letter or retry of their own.
	if args := v.Queues["a.dlq"].Arguments; len(args) != 0 {
		t.Errorf("a.dlq arguments = %v", args)
	}
}

func TestPositionsAndIgnores(t *testing.T) {
	src := `version: 1
vhosts:
  /:
    exchanges:
      orders: {type: topic} # mqctl:ignore MQ402
    queues:
      # mqctl:ignore MQ101, MQ301
      events:
        bindings:
          - exchange: orders # mqctl:ignore MQ401
            routing_key: "#"
        dead_letter:
          exchange: dlx # mqctl:ignore MQ102
          queue: events.dlq # mqctl:ignore MQ301
        retry:
          # mqctl:ignore MQ201
          delays: [10s]
    bindings:
      - {source: orders, destination: audit, destination_type: exchange} # mqctl:ignore MQ401
    policies:
      cap: # mqctl:ignore MQ702
        pattern: x
        definition: {ha-mode: all}
`
	top := mustLoad(t, src)
	v := top.Vhosts["/"]
	type meta struct {
		Pos    string
		Ignore []string
	}
	m := func(x topology.Meta) meta { return meta{x.Pos.String(), x.Ignore} }
	got := map[string]meta{
		"exchange orders":       m(v.Exchanges["orders"].Meta),
		"queue events":          m(v.Queues["events"].Meta),
		"queue events.dlq":      m(v.Queues["events.dlq"].Meta),
		"queue retry":           m(v.Queues["events.retry.10s"].Meta),
		"policy cap":            m(v.Policies["cap"].Meta),
		"binding orders→events": m(v.BindingsTo("queue", "events")[0].Meta),
		"binding dlx→dlq":       m(v.BindingsTo("queue", "events.dlq")[0].Meta),
		"binding orders→audit":  m(v.BindingsTo("exchange", "audit")[0].Meta),
		"vhost":                 m(v.Meta),
	}
	want := map[string]meta{
		"exchange orders":       {"t.yaml:5:7", []string{"MQ402"}},
		"queue events":          {"t.yaml:8:7", []string{"MQ101", "MQ301", "MQ102"}},
		"queue events.dlq":      {"t.yaml:14:18", []string{"MQ301"}},
		"queue retry":           {"t.yaml:17:20", []string{"MQ201"}},
		"policy cap":            {"t.yaml:21:7", []string{"MQ702"}},
		"binding orders→events": {"t.yaml:10:13", []string{"MQ401"}},
		"binding dlx→dlq":       {"t.yaml:14:18", []string{"MQ301"}},
		"binding orders→audit":  {"t.yaml:19:9", []string{"MQ401"}},
		"vhost":                 {"t.yaml:3:3", nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
}

func TestNamesAreStrings(t *testing.T) {
	// Keys that YAML would type (404, true) are names all the same.
	top := mustLoad(t, vhostFile("queues:\n  404: {}\n  true: {}\n"))
	if diff := cmp.Diff([]string{"404", "true"}, top.Vhosts["/"].QueueNames()); diff != "" {
		t.Error(diff)
	}
}

func ExampleLoadBytes() {
	src := `version: 1
vhosts:
  /:
    queues:
      email:
        dead_letter: {exchange: dlx, queue: email.dlq}
`
	top, err := LoadBytes("topology.yaml", []byte(src), Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	v := top.Vhosts["/"]
	fmt.Println(v.QueueNames(), v.Queues["email"].Arguments.Canonical())
	// Output: [email email.dlq] {"x-dead-letter-exchange":"dlx","x-dead-letter-routing-key":"email"}
}

// TestGeneratedNamesTooLong: a queue name sugar generates — a delay tier
// (<queue>.retry.<delay>), a DLQ from a defaults template ({queue}.dlq) —
// longer than RabbitMQ takes is an error at the sugar that generates it,
// naming the generated queue and how to shorten it; at the limit it loads.
func TestGeneratedNamesTooLong(t *testing.T) {
	long := func(n int) string { return strings.Repeat("q", n) }
	tests := []struct {
		name, body, want string // want "" = loads
	}{
		{"delay tier over the limit", "queues:\n  " + long(250) + ":\n    retry: {delays: [10s]}",
			`t.yaml:6:26: queue "` + long(250) + `": retry.delays[0]: declares the delay queue "` + long(250) + `.retry.10s", whose name is 260 bytes long (RabbitMQ takes queue names of at most 255 bytes; shorten the queue's name to at most 245 bytes: its delay queues are named <queue>.retry.<delay>)`},
		{"delay tier at the limit", "queues:\n  " + long(245) + ":\n    retry: {delays: [10s]}", ""},
		{"delay tier from defaults", "defaults:\n  queue: {retry: {delays: [1m, 10s]}}\nqueues:\n  " + long(248) + ": {}",
			`t.yaml:5:36: queue "` + long(248) + `": retry.delays[1]: declares the delay queue "` + long(248) + `.retry.10s", whose name is 258 bytes long`},
		{"DLQ template", "defaults:\n  queue: {dead_letter: {queue: \"{queue}.dlq\"}}\nqueues:\n  " + long(253) + ": {}",
			`t.yaml:5:36: queue "` + long(253) + `": dead_letter.queue: declares the DLQ "` + long(253) + `.dlq", whose name is 257 bytes long (RabbitMQ takes queue names of at most 255 bytes; shorten the queue's name, or name the DLQ explicitly with a shorter name (dead_letter.queue: <name> on this queue))`},
		{"DLQ template as a mapping", "defaults:\n  queue: {dead_letter: {queue: {name: \"{queue}.dead\"}}}\nqueues:\n  " + long(252) + ": {}",
			`queue "` + long(252) + `": dead_letter.queue.name: declares the DLQ "` + long(252) + `.dead", whose name is 257 bytes long`},
		{"DLQ template at the limit", "defaults:\n  queue: {dead_letter: {queue: \"{queue}.dlq\"}}\nqueues:\n  " + long(251) + ": {}", ""},
		{"DLQ written by hand", "queues:\n  a:\n    dead_letter: {queue: " + long(256) + "}",
			`t.yaml:6:30: queue name is 256 bytes long (RabbitMQ takes queue names of at most 255 bytes; choose a shorter one)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := vhostFile(tt.body)
			_, err := LoadBytes("t.yaml", []byte(src), Options{})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("load failed:\n%s", errorLines(err))
			case tt.want != "" && err == nil:
				t.Fatalf("loaded; want %s", tt.want)
			case tt.want != "" && !strings.Contains(errorLines(err), tt.want):
				t.Errorf("errors:\n%s\nwant:\n%s", errorLines(err), tt.want)
			}
		})
	}
}
