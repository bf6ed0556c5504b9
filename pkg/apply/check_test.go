package apply

import (
	"errors"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	ttl := func(ms int64) topology.Args { return topology.Args{"x-message-ttl": ms} }
	// replaceQueue: q's TTL changes (a policy could set it instead).
	replaceQueue := func() *plan.Plan {
		return diff(vhost(queue("q", ttl(1000))), vhost(queue("q", ttl(2000))))
	}
	// replaceType: q becomes a quorum queue (no policy can do that).
	replaceType := func() *plan.Plan {
		q := queue("q", nil)
		q.Type = topology.QueueQuorum
		return diff(vhost(queue("q", nil)), vhost(q))
	}
	deleteQueue := func() *plan.Plan { return diff(vhost(queue("q", nil)), vhost()) }
	// rename: queue "old q" becomes "new", its two bindings with it.
	rename := func(keepNew bool) *plan.Plan {
		have := vhost(exchange("x", "topic"), queue("old q", nil), bind("x", "queue", "old q", "a.#"), bind("x", "queue", "old q", "b"))
		want := vhost(exchange("x", "topic"), queue("new", nil), bind("x", "queue", "new", "a.#"), bind("x", "queue", "new", "b"))
		if keepNew {
			have.Queues["new"] = queue("new", nil)
		}
		p := diff(have, want)
		for i := range p.Changes {
			if p.Changes[i].Name == "old q" {
				p.Changes[i].Messages = 3
			}
		}
		return p
	}
	stake := func(p *plan.Plan, msgs, consumers int64) *plan.Plan {
		for i := range p.Changes {
			p.Changes[i].Messages, p.Changes[i].Consumers = msgs, consumers
		}
		return p
	}
	tests := []struct {
		name string
		p    *plan.Plan
		opts Options
		want []string // substrings of the refusal; none: no refusal
		not  []string // must not appear
	}{
		{name: "replace refused without --allow-replace, naming the field and a way around",
			p: replaceQueue(),
			want: []string{`queue "q" in vhost "v" must be replaced`, "field arguments.x-message-ttl changed",
				"under a new queue name", "set message-ttl with a policy rather than as arguments", "pass --allow-replace", "nothing was changed: 1 change refused"},
			not: []string{"--allow-data-loss"}},
		{name: "a lower TTL: a policy gives it in place",
			p:    diff(vhost(queue("q", ttl(2000))), vhost(queue("q", ttl(1000)))),
			want: []string{"leave the queue's arguments as they were and set message-ttl: 1000 with a policy", "the smaller of its value and the argument's applies", "pass --allow-replace"}},
		{name: "a type change names the type and a new queue name as the way around",
			p:    replaceType(),
			want: []string{"field type changed", "under a new queue name", "pass --allow-replace"}},
		{name: "an empty queue is replaced with --allow-replace", p: replaceQueue(), opts: Options{AllowReplace: true}},
		{name: "a queue with messages needs --allow-data-loss as well: both refusals listed",
			p: stake(replaceQueue(), 3, 0),
			want: []string{"pass --allow-replace", "would be replaced but holds 3 messages and has 0 consumers", "pass --allow-data-loss", "2 changes refused",
				"drain it first (or keep them: declare the new settings under a new queue name with the same bindings, and plan: it says how to move the messages there)"}},
		{name: "a queue with messages is not replaced with --allow-replace alone",
			p: stake(replaceQueue(), 1, 0), opts: Options{AllowReplace: true},
			want: []string{`queue "q" in vhost "v" would be replaced but holds 1 message and has 0 consumers`, "--allow-data-loss"},
			not:  []string{"--allow-replace"}},
		// An empty queue's consumers keep it: draining is no fix, stopping
		// them is (the application that consumes it may declare it again).
		{name: "a queue with a consumer is not deleted",
			p: stake(deleteQueue(), 0, 1),
			want: []string{`queue "q" in vhost "v" would be deleted but holds 0 messages and has 1 consumer:`,
				"stop its consumers first (an application that consumes it may declare it again when it starts: change that too), or pass --allow-data-loss to cancel them"},
			not: []string{"drain", "drop them"}},
		{name: "a queue with messages and no consumer is drained",
			p:    stake(deleteQueue(), 4, 0),
			want: []string{`would be deleted but holds 4 messages and has 0 consumers: drain it first, or pass --allow-data-loss to drop them`},
			not:  []string{"stop its consumers"}},
		{name: "a queue with messages and consumers",
			p:    stake(deleteQueue(), 4, 2),
			want: []string{`would be deleted but holds 4 messages and has 2 consumers: stop its consumers and drain it first`, "or pass --allow-data-loss to drop the messages and cancel the consumers"}},
		{name: "a queue renamed in the file: its messages are moved to the new one first",
			p:    rename(false),
			want: []string{`queue "old q" in vhost "v" would be deleted but holds 3 messages and has 0 consumers: its bindings move to queue "new", which this plan creates: to keep its messages, apply once with both queues in the file, move the messages across (mqctl dlq replay 'old q' --vhost v --to-exchange '' --routing-key new), then apply this file; or pass --allow-data-loss to drop them`},
			not:  []string{"drain"}},
		{name: "its bindings moved onto a queue that exists: move the messages now",
			p:    rename(true),
			want: []string{`its bindings move to queue "new": to keep its messages, move them across first (mqctl dlq replay 'old q' --vhost v --to-exchange '' --routing-key new), then apply`},
			not:  []string{"which this plan creates", "drain"}},
		{name: "bindings spread over two queues: no one successor",
			p: func() *plan.Plan {
				have := vhost(exchange("x", "topic"), queue("q", nil), bind("x", "queue", "q", "a"), bind("x", "queue", "q", "b"))
				want := vhost(exchange("x", "topic"), queue("qa", nil), queue("qb", nil), bind("x", "queue", "qa", "a"), bind("x", "queue", "qb", "b"))
				return stake(diff(have, want), 2, 0)
			}(),
			want: []string{"would be deleted but holds 2 messages and has 0 consumers: drain it first"},
			not:  []string{"dlq replay"}},
		{name: "a stream's depth that could only be bounded is said so",
			p: func() *plan.Plan {
				p := stake(deleteQueue(), 1, 0)
				p.Changes[0].MessagesAtLeast = true
				return p
			}(),
			want: []string{`would be deleted but holds at least 1 message and has 0 consumers`}},
		{name: "--allow-data-loss lets a delete through", p: stake(deleteQueue(), 5, 2), opts: Options{AllowDataLoss: true}},
		{name: "an empty, unused queue is deleted without flags", p: deleteQueue()},
		{name: "both flags let everything through", p: stake(replaceType(), 9, 9), opts: Options{AllowReplace: true, AllowDataLoss: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.p, tc.opts)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("not refused; want %q", tc.want)
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("error does not wrap ErrRefused: %v", err)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("refusal does not say %q:\n%v", s, err)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(err.Error(), s) {
					t.Errorf("refusal says %q, which does not apply:\n%v", s, err)
				}
			}
		})
	}
}
