package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// deadLetterVhost is vhost v with: a fanout dlx bound to dlq; an exchange
// void with no binding; a quorum queue alo that dead-letters at least once
// by policy; a queue delay with a TTL whose expired messages go by policy
// to dlx; a queue jobs and its delay tier, which returns messages to it by
// the default exchange.
func deadLetterVhost() *topology.Topology {
	top := topology.New()
	v := topology.NewVhost("v")
	v.Exchanges["dlx"] = &topology.Exchange{Name: "dlx", Type: "fanout", Durable: true}
	v.Exchanges["void"] = &topology.Exchange{Name: "void", Type: "direct", Durable: true}
	for _, q := range []*topology.Queue{
		{Name: "dlq", Durable: true},
		{Name: "alo", Type: topology.QueueQuorum, Durable: true},
		{Name: "delay", Durable: true, Arguments: topology.Args{"x-message-ttl": int64(60000)}},
		{Name: "jobs", Durable: true},
		{Name: "jobs.retry.1m", Durable: true, Arguments: topology.Args{"x-message-ttl": int64(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "jobs"}},
		{Name: "timed", Durable: true},
		{Name: "untimed", Durable: true},
	} {
		v.Queues[q.Name] = q
	}
	v.Bindings = append(v.Bindings, &topology.Binding{Source: "dlx", DestinationType: topology.DestQueue, Destination: "dlq"})
	v.Policies["alo"] = queuePolicy("alo", "^alo$", topology.Args{"dead-letter-exchange": "void", "dead-letter-strategy": "at-least-once", "overflow": "reject-publish"})
	v.Policies["delay-dl"] = queuePolicy("delay-dl", "^delay$", topology.Args{"dead-letter-exchange": "dlx"})
	v.Policies["timed"] = queuePolicy("timed", "^timed$", topology.Args{"message-ttl": int64(8000), "dead-letter-exchange": "dlx"})
	v.Policies["untimed-dl"] = queuePolicy("untimed-dl", "^untimed$", topology.Args{"dead-letter-exchange": "dlx"})
	top.Vhosts["v"] = v
	return top
}

// update is a plan's change of policy p of vhost v to def.
func update(p *topology.Policy, def topology.Args) plan.Change {
	after := *p
	after.Definition = def
	return plan.Change{Action: plan.Update, Kind: kind.Policy, Vhost: "v", Name: p.Name, Before: plan.Of(p), After: plan.Of(&after)}
}

// TestAtLeastOnceEndings: the quorum queues whose policy changes end
// at-least-once dead-lettering are those that had it and lose one of its
// conditions; a new dead-letter exchange keeps it.
func TestAtLeastOnceEndings(t *testing.T) {
	alo := deadLetterVhost().Vhosts["v"].Policies["alo"]
	renamed := *alo
	renamed.Name = "alo2"
	for _, tc := range []struct {
		name    string
		change  plan.Change
		changes []plan.Change
		want    []ending
	}{
		// Apply writes policies before it deletes those the plan drops
		// (make before break): the queue has one or the other throughout.
		// Before the late deletes (kind.LatePhase) it had neither
		// meanwhile.
		{name: "the policy renamed", changes: []plan.Change{
			{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "alo", Before: plan.Of(alo)},
			putPolicy(kind.Policy, &renamed),
		}, want: nil},
		{name: "the strategy taken away", change: update(alo, topology.Args{"dead-letter-exchange": "void", "overflow": "reject-publish"}), want: []ending{{vhost: "v", queue: "alo", by: `policy "alo"`}}},
		{name: "overflow drop-head", change: update(alo, topology.Args{"dead-letter-exchange": "void", "dead-letter-strategy": "at-least-once", "overflow": "drop-head"}), want: []ending{{vhost: "v", queue: "alo", by: `policy "alo"`}}},
		{name: "the policy deleted", change: plan.Change{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "alo", Before: plan.Of(alo)}, want: []ending{{vhost: "v", queue: "alo", by: `policy "alo"`}}},
		{name: "another dead-letter exchange", change: update(alo, topology.Args{"dead-letter-exchange": "dlx", "dead-letter-strategy": "at-least-once", "overflow": "reject-publish"}), want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes := tc.changes
			if changes == nil {
				changes = []plan.Change{tc.change}
			}
			got := atLeastOnceEndings(&plan.Plan{Changes: changes}, deadLetterVhost())
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(ending{})); d != "" {
				t.Errorf("endings (-want +got):\n%s", d)
			}
		})
	}
}

// TestQueueExpirings: the queues with a TTL whose expired messages a plan
// makes RabbitMQ drop, where they reached a queue before: by a policy
// change, by deleting the queue a delay tier returns them to, by deleting
// the binding that routed them. A queue whose expired messages were
// dropped already is none of the plan's doing.
func TestQueueExpirings(t *testing.T) {
	v := deadLetterVhost().Vhosts["v"]
	deleteQueue := func(name string) plan.Change {
		return plan.Change{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: name, Before: plan.Of(v.Queues[name])}
	}
	for _, tc := range []struct {
		name    string
		changes []plan.Change
		want    []expiring
	}{
		{"the dead-letter exchange's policy deleted", []plan.Change{{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "delay-dl", Before: plan.Of(v.Policies["delay-dl"])}},
			[]expiring{{vhost: "v", queue: "delay", ttl: 60000, why: "no dead-letter exchange"}}},
		{"a dead-letter exchange that routes nowhere", []plan.Change{update(v.Policies["delay-dl"], topology.Args{"dead-letter-exchange": "void"})},
			[]expiring{{vhost: "v", queue: "delay", ttl: 60000, why: `dead-letter exchange "void" routes them to no queue`}}},
		{"the queue a delay tier returns messages to deleted", []plan.Change{deleteQueue("jobs")},
			[]expiring{{vhost: "v", queue: "jobs.retry.1m", ttl: 60000, why: `dead-letter exchange "" routes them, with key "jobs", to no queue`}}},
		{"the DLQ's binding deleted", []plan.Change{{Action: plan.Delete, Kind: kind.Binding, Vhost: "v", Name: plan.BindingName(v.Bindings[0]), Before: plan.BindingObject{Binding: v.Bindings[0]}}},
			[]expiring{
				{vhost: "v", queue: "delay", ttl: 60000, why: `dead-letter exchange "dlx" routes them to no queue`},
				{vhost: "v", queue: "timed", ttl: 8000, why: `dead-letter exchange "dlx" routes them to no queue`},
			}},
		// What a queue holds keeps the expiry it got on arrival: deleting
		// the policy that gave both the TTL and the dead-letter exchange
		// drops the messages as they expire (measured on 4.3.6: 3 messages
		// in a classic and in a quorum queue gone 8 s after, none in the
		// DLQ); a TTL that comes as the dead-letter exchange goes expires
		// none of the messages held (they arrived without one).
		{"the policy giving the TTL and the dead-letter exchange deleted", []plan.Change{{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "timed", Before: plan.Of(v.Policies["timed"])}},
			[]expiring{{vhost: "v", queue: "timed", ttl: 8000, why: "no dead-letter exchange"}}},
		{"a TTL in place of the dead-letter exchange", []plan.Change{update(v.Policies["untimed-dl"], topology.Args{"message-ttl": int64(1000)})}, nil},
		{"the delay tier deleted with its queue", []plan.Change{deleteQueue("jobs"), deleteQueue("jobs.retry.1m")}, nil},
		{"a queue created", []plan.Change{{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "new", After: plan.Of(&topology.Queue{Name: "new", Durable: true})}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := queueExpirings(&plan.Plan{Changes: tc.changes}, deadLetterVhost())
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(expiring{})); d != "" {
				t.Errorf("expirings (-want +got):\n%s", d)
			}
		})
	}
}

// TestDeadLetterFate: dropped only where no message key reaches a queue.
func TestDeadLetterFate(t *testing.T) {
	v := deadLetterVhost().Vhosts["v"]
	v.Queues["keyed"] = &topology.Queue{Name: "keyed", Durable: true, Arguments: topology.Args{"x-dead-letter-exchange": "dlx2"}}
	v.Exchanges["dlx2"] = &topology.Exchange{Name: "dlx2", Type: "direct", Durable: true}
	v.Bindings = append(v.Bindings, &topology.Binding{Source: "dlx2", DestinationType: topology.DestQueue, Destination: "dlq", RoutingKey: "other"})
	sim := route.New(v)
	if f := deadLetterFate(sim, "keyed", route.Rejected); f.dropped {
		t.Errorf("a message's own key may reach dlq through dlx2: %+v", f)
	}
	if f := deadLetterFate(sim, "delay", route.Expired); f.dropped {
		t.Errorf("delay's dead letters reach dlq: %+v", f)
	}
	if f := deadLetterFate(sim, "jobs", route.Rejected); !f.dropped || f.configured || f.why != "no dead-letter exchange" {
		t.Errorf("jobs has no dead-letter exchange: %+v", f)
	}
	if f := deadLetterFate(sim, "alo", route.Rejected); f.dropped {
		t.Errorf("alo keeps its dead letters (at least once): %+v", f)
	}
}

// TestStreamRetentions: the streams a plan's policy changes give a
// retention they did not have, or a tighter one.
func TestStreamRetentions(t *testing.T) {
	cur := func() *topology.Topology {
		top := topology.New()
		v := topology.NewVhost("v")
		v.Queues["log"] = &topology.Queue{Name: "log", Type: topology.QueueStream, Durable: true}
		v.Queues["aged"] = &topology.Queue{Name: "aged", Type: topology.QueueStream, Durable: true, Arguments: topology.Args{"x-max-age": "7D"}}
		v.Queues["plain"] = &topology.Queue{Name: "plain", Durable: true}
		top.Vhosts["v"] = v
		return top
	}
	put := func(pattern string, def topology.Args) plan.Change {
		return putPolicy(kind.Policy, &topology.Policy{Name: "keep", Pattern: pattern, ApplyTo: "streams", Definition: def})
	}
	for _, tc := range []struct {
		name   string
		change plan.Change
		want   []retention
	}{
		{"a size", put("^log$", topology.Args{"max-length-bytes": int64(1000)}), []retention{{vhost: "v", stream: "log", by: `policy "keep"`, key: "max-length-bytes", value: "1000", segment: defaultSegment}}},
		{"an age", put("^log$", topology.Args{"max-age": "1h"}), []retention{{vhost: "v", stream: "log", by: `policy "keep"`, key: "max-age", value: "1h", segment: defaultSegment}}},
		// A policy's retention wins over the stream's own argument
		// (rabbit_stream_queue policy_precedence/2): a shorter age is a
		// tighter retention, a longer one looser.
		{"an age below the stream's own", put("^aged$", topology.Args{"max-age": "1h"}), []retention{{vhost: "v", stream: "aged", by: `policy "keep"`, key: "max-age", value: "1h", segment: defaultSegment}}},
		{name: "an age above the stream's own", change: put("^aged$", topology.Args{"max-age": "30D"}), want: nil},
		// A max-age written as a list is no age to a stream (route's
		// effective settings, rmqversion.ListMaxAge), though it beats the
		// stream's own: nothing trimmed, so no retention to weigh.
		{name: "an age written as a list", change: put("^log$", topology.Args{"max-age": []any{"1", "h"}}), want: nil},
		{name: "an age written as a list over the stream's own", change: put("^aged$", topology.Args{"max-age": []any{"1", "h"}}), want: nil},
		{name: "a queue is no stream", change: plan.Change{Action: plan.Create, Kind: kind.Policy, Vhost: "v", Name: "keep", After: plan.Of(queuePolicy("keep", "^plain$", topology.Args{"max-length-bytes": int64(1)}))}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := streamRetentions(&plan.Plan{Changes: []plan.Change{tc.change}}, cur())
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(retention{})); d != "" {
				t.Errorf("retentions (-want +got):\n%s", d)
			}
		})
	}
	for _, tc := range []struct {
		a, b any
		want bool
	}{{"1h", "7D", true}, {"7D", "1h", false}, {"1Y", "12M", false}, {"60s", "1m", false}, {"bogus", "1h", true}} {
		if got := tighter("x-max-age", tc.a, tc.b); got != tc.want {
			t.Errorf("tighter(%v, %v) = %v", tc.a, tc.b, got)
		}
	}
}

// TestRetentionKeepsAll: a retention surely removes nothing when its size
// is at least what the stream's segments can hold, or its age longer than
// the oldest message's.
func TestRetentionKeepsAll(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	for _, tc := range []struct {
		r     retention
		first int64
		want  bool
	}{
		{retention{key: "max-length-bytes", value: "10000000000", segment: 50000, segments: 4, segmentsKnown: true}, 0, true},
		{retention{key: "max-length-bytes", value: "100000", segment: 50000, segments: 4, segmentsKnown: true}, 0, false},
		{retention{key: "max-length-bytes", value: "10000000000", segment: 50000}, 0, false}, // segments not reported
		{retention{key: "max-age", value: "1h", segments: 4, segmentsKnown: true}, now.Add(-10 * time.Minute).UnixMilli(), true},
		{retention{key: "max-age", value: "1h", segments: 4, segmentsKnown: true}, now.Add(-2 * time.Hour).UnixMilli(), false},
		{retention{key: "max-age", value: "1h", segments: 4, segmentsKnown: true}, 0, false},                                                     // oldest not known
		{retention{key: "max-age", value: "10m", segments: 4, segmentsKnown: true}, now.Add(-9*time.Minute - 30*time.Second).UnixMilli(), false}, // within the leeway
	} {
		if got := tc.r.keepsAll(tc.first, now); got != tc.want {
			t.Errorf("%+v, oldest %d: keepsAll = %v, want %v", tc.r, tc.first, got, tc.want)
		}
	}
}
