package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestQueueExpiries: the queues a plan's policy changes give an expiry
// they did not have, or a shorter one, named with the policies that do
// it; a longer expiry, a queue the plan deletes and a stream are left
// out.
func TestQueueExpiries(t *testing.T) {
	policy := func(name, pattern string, ms int64) *topology.Policy {
		return queuePolicy(name, pattern, topology.Args{"expires": ms})
	}
	put := putPolicy
	cur := func() *topology.Topology {
		top := topology.New()
		v := topology.NewVhost("v")
		for _, q := range []*topology.Queue{
			{Name: "plain", Durable: true},
			{Name: "quorum", Type: topology.QueueQuorum, Durable: true},
			{Name: "own", Durable: true, Arguments: topology.Args{"x-expires": int64(1000)}},
			{Name: "stream", Type: topology.QueueStream, Durable: true},
			{Name: "gone", Durable: true},
		} {
			v.Queues[q.Name] = q
		}
		top.Vhosts["v"] = v
		return top
	}
	for _, tc := range []struct {
		name    string
		changes []plan.Change
		want    []expiry
	}{
		{
			name:    "an expiry on every queue",
			changes: []plan.Change{put(kind.Policy, policy("exp", ".*", 60000))},
			want: []expiry{
				{vhost: "v", queue: "gone", ms: 60000, by: `policy "exp"`},
				{vhost: "v", queue: "plain", ms: 60000, by: `policy "exp"`},
				{vhost: "v", queue: "quorum", ms: 60000, by: `policy "exp"`},
			},
		},
		{
			name:    "shorter than the queue's own",
			changes: []plan.Change{put(kind.OperatorPolicy, policy("ops", "^own$", 500))},
			want:    []expiry{{vhost: "v", queue: "own", ms: 500, by: `operator policy "ops"`}},
		},
		{
			name: "a queue the plan deletes",
			changes: []plan.Change{
				put(kind.Policy, policy("exp", "^gone$", 60000)),
				{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: "gone", Before: plan.Of(&topology.Queue{Name: "gone", Durable: true})},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := queueExpiries(&plan.Plan{Changes: tc.changes}, cur())
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(expiry{})); d != "" {
				t.Errorf("expiries (-want +got):\n%s", d)
			}
		})
	}
	x := expiry{vhost: "v", queue: "jobs", ms: 600000, by: `policy "exp"`, messages: 3}
	if got, want := x.String(), `policy "exp": queue "jobs" in vhost "v" gets an expiry of 10m0s (expires), and it holds 3 messages and has no consumer: RabbitMQ deletes the queue, with its messages, once it has been unused that long`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
