package lint

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// loadVhost expands a one-vhost file body (under "vhosts: {/: …}").
func loadVhost(t *testing.T, body string) *topology.Topology {
	t.Helper()
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	src := "version: 1\nvhosts:\n  /:\n    " + strings.Join(lines, "\n    ") + "\n"
	top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
	if err != nil {
		t.Fatalf("load:\n%s\n%v", src, err)
	}
	return top
}

type roleRow struct {
	Role       topology.QueueRole
	From       []string
	ReturnsTo  []string
	Delay      int64
	Collects   []string
	NamedDLQ   bool
	NamedDLQOf string
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		body string
		want map[string]roleRow
	}{
		{
			name: "sugar: DLQ pair and delay tiers",
			body: `exchanges:
  orders: { type: topic }
  orders.dlx: { type: topic }
queues:
  orders.shipping:
    bindings: [{ exchange: orders, routing_key: order.created }]
    dead_letter: { exchange: orders.dlx, queue: orders.shipping.dlq }
    retry: { delays: [10s] }
`,
			want: map[string]roleRow{
				"orders.shipping":           {Role: topology.RoleWorking},
				"orders.shipping.dlq":       {Role: topology.RoleDeadLetter, From: []string{"orders.shipping"}},
				"orders.shipping.retry.10s": {Role: topology.RoleDelay, ReturnsTo: []string{"orders.shipping"}, Delay: 10000},
			},
		},
		{
			name: "hand-written DLQ through the default exchange",
			body: `queues:
  work: { arguments: { x-dead-letter-exchange: "", x-dead-letter-routing-key: work.failed } }
  work.failed: {}
`,
			want: map[string]roleRow{
				"work":        {Role: topology.RoleWorking},
				"work.failed": {Role: topology.RoleDeadLetter, From: []string{"work"}},
			},
		},
		{
			name: "dead letters keep the binding's key and reach the DLQ bound for it",
			body: `exchanges:
  jobs: { type: direct }
  jobs.dlx: { type: direct }
queues:
  a:
    bindings: [{ exchange: jobs, routing_key: a }]
    arguments: { x-dead-letter-exchange: jobs.dlx }
  b:
    bindings: [{ exchange: jobs, routing_key: b }]
    arguments: { x-dead-letter-exchange: jobs.dlx }
  parked: { bindings: [{ exchange: jobs.dlx, routing_key: a }, { exchange: jobs.dlx, routing_key: b }] }
`,
			want: map[string]roleRow{
				"a":      {Role: topology.RoleWorking},
				"b":      {Role: topology.RoleWorking},
				"parked": {Role: topology.RoleDeadLetter, From: []string{"a", "b"}},
			},
		},
		{
			name: "hand-written delay tier: TTL, expired messages back to a working queue",
			body: `exchanges:
  jobs: { type: direct }
queues:
  work: { bindings: [{ exchange: jobs, routing_key: work }] }
  work.wait:
    arguments: { x-message-ttl: 30000, x-dead-letter-exchange: "", x-dead-letter-routing-key: work }
`,
			want: map[string]roleRow{
				"work":      {Role: topology.RoleWorking},
				"work.wait": {Role: topology.RoleDelay, ReturnsTo: []string{"work"}, Delay: 30000},
			},
		},
		{
			name: "a working queue with a TTL that expires into its DLQ is no delay tier",
			body: `exchanges:
  jobs: { type: direct }
  jobs.dlx: { type: direct }
queues:
  work:
    bindings: [{ exchange: jobs, routing_key: work }]
    arguments: { x-message-ttl: 3600000, x-dead-letter-exchange: jobs.dlx }
  work.dlq: { bindings: [{ exchange: jobs.dlx, routing_key: work }] }
`,
			want: map[string]roleRow{
				"work":     {Role: topology.RoleWorking},
				"work.dlq": {Role: topology.RoleDeadLetter, From: []string{"work"}},
			},
		},
		{
			name: "hand-written delay tiers back to the work exchange, whatever their keys",
			body: `exchanges:
  orders: { type: topic }
  orders.retry: { type: direct }
queues:
  orders.shipping: { bindings: [{ exchange: orders, routing_key: order.created }] }
  orders.retry.10s:
    bindings: [{ exchange: orders.retry, routing_key: 10s }]
    arguments: { x-message-ttl: 10000, x-dead-letter-exchange: orders }
  orders.retry.1m:
    bindings: [{ exchange: orders.retry, routing_key: 1m }]
    arguments: { x-message-ttl: 60000, x-dead-letter-exchange: orders }
`,
			want: map[string]roleRow{
				"orders.shipping":  {Role: topology.RoleWorking},
				"orders.retry.10s": {Role: topology.RoleDelay, Delay: 10000},
				"orders.retry.1m":  {Role: topology.RoleDelay, Delay: 60000},
			},
		},
		{
			name: "a delay queue whose dead-letter exchange is also published to",
			body: `exchanges:
  delay: { type: topic }
  render: { type: topic }
queues:
  delay:
    bindings: [{ exchange: delay, routing_key: "#" }]
    arguments: { x-message-ttl: 2000, x-dead-letter-exchange: render, x-dead-letter-routing-key: delayed.render }
  render: { bindings: [{ exchange: render, routing_key: "#.render" }] }
  me-render: { bindings: [{ exchange: render, routing_key: "#.me-render" }] }
`,
			want: map[string]roleRow{
				"delay":     {Role: topology.RoleDelay, ReturnsTo: []string{"render"}, Delay: 2000},
				"render":    {Role: topology.RoleWorking},
				"me-render": {Role: topology.RoleWorking},
			},
		},
		{
			name: "collectors of unroutable messages and DLQs by name",
			body: `exchanges:
  orders: { type: topic, alternate_exchange: orders.unrouted }
  orders.unrouted: { type: fanout }
  parking: { type: direct }
queues:
  work: { bindings: [{ exchange: orders, routing_key: "#" }] }
  unrouted: { bindings: [{ exchange: orders.unrouted }] }
  work.dlq: { bindings: [{ exchange: parking, routing_key: work }] }
  lost-dead-letters: {}
`,
			want: map[string]roleRow{
				"work":              {Role: topology.RoleWorking},
				"unrouted":          {Role: topology.RoleWorking, Collects: []string{"orders"}},
				"work.dlq":          {Role: topology.RoleWorking, NamedDLQ: true, NamedDLQOf: "work"},
				"lost-dead-letters": {Role: topology.RoleWorking, NamedDLQ: true},
			},
		},
		{
			name: "a queue named as a DLQ that an alternate exchange fills is a collector",
			body: `exchanges:
  sda: { type: topic }
  sda.dead: { type: topic }
  jobs: { type: direct, alternate_exchange: jobs.unrouted }
  jobs.unrouted: { type: fanout }
  parking: { type: direct }
queues:
  ingest: { bindings: [{ exchange: sda, routing_key: ingest }] }
  catch_all.dead: { bindings: [{ exchange: sda.dead, routing_key: "#" }] }
  work: { bindings: [{ exchange: jobs, routing_key: work }] }
  work.dlq: { bindings: [{ exchange: jobs.unrouted }] }
  mixed.dead: { bindings: [{ exchange: jobs.unrouted }, { exchange: parking, routing_key: mixed }] }
policies:
  sda-ae: { pattern: "^sda$", apply_to: exchanges, definition: { alternate-exchange: sda.dead } }
`,
			want: map[string]roleRow{
				"ingest":         {Role: topology.RoleWorking},
				"catch_all.dead": {Role: topology.RoleWorking, Collects: []string{"sda"}},
				"work":           {Role: topology.RoleWorking},
				"work.dlq":       {Role: topology.RoleWorking, Collects: []string{"jobs"}},
				"mixed.dead":     {Role: topology.RoleWorking, NamedDLQ: true},
			},
		},
		{
			name: "dead letters that route nowhere make no DLQ",
			body: `exchanges:
  jobs.dlx: { type: direct }
queues:
  work: { arguments: { x-dead-letter-exchange: jobs.dlx } }
  other: {}
`,
			want: map[string]roleRow{
				"other": {Role: topology.RoleWorking},
				"work":  {Role: topology.RoleWorking},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := loadVhost(t, tc.body)
			got := map[string]roleRow{}
			for q, ri := range Roles(top.Vhosts["/"]) {
				got[q] = roleRow{Role: ri.Role, From: ri.From, ReturnsTo: ri.ReturnsTo, Delay: ri.DelayMS, Collects: ri.Collects, NamedDLQ: ri.NamedDLQ, NamedDLQOf: ri.NamedDLQOf}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
		})
	}
}
