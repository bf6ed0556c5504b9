// Package gentopo generates large topologies for benchmarks: n working
// queues, each with its own DLQ (dead_letter.queue sugar) and one binding
// on a topic exchange — 2n queues and 2n bindings once expanded — and
// renders an expanded vhost as a RabbitMQ definitions document, so that
// mqctl apply can be compared with the broker's own definitions import.
package gentopo

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// YAML returns an mqctl file declaring n working queues (each with a DLQ
// and a binding) in vhost.
func YAML(vhost string, n int) string {
	var sb strings.Builder
	sb.Grow(n * 220)
	fmt.Fprintf(&sb, "# generated: %d working queues, each with its own DLQ\nversion: 1\nvhosts:\n  %q:\n", n, vhost)
	sb.WriteString("    exchanges:\n      events: { type: topic }\n      events.dlx: { type: direct }\n    queues:\n")
	for i := 0; i < n; i++ {
		q := fmt.Sprintf("svc%03d.q%05d", i%100, i)
		fmt.Fprintf(&sb, "      %s:\n        bindings: [{ exchange: events, routing_key: \"svc%03d.event%d.#\" }]\n", q, i%100, i)
		fmt.Fprintf(&sb, "        dead_letter: { exchange: events.dlx, queue: %s.dlq }\n", q)
		sb.WriteString("        limits: { max_length: 10000, overflow: reject-publish }\n")
	}
	return sb.String()
}

// ReplaceYAML is YAML(vhost, n) with every working queue's max_length and
// both exchanges' types changed (benchrun's replace plan): a plan from
// YAML replaces n queues and 2 exchanges, and takes down and restores all
// 2n bindings; its flows have every class of messages of exchange events
// reach all n working queues, and every queue's dead letters all n DLQs.
func ReplaceYAML(vhost string, n int) string {
	y := YAML(vhost, n)
	y = strings.Replace(y, "events: { type: topic }", "events: { type: headers }", 1)
	y = strings.Replace(y, "events.dlx: { type: direct }", "events.dlx: { type: fanout }", 1)
	return strings.ReplaceAll(y, "max_length: 10000,", "max_length: 20000,")
}

// Objects is the number of objects YAML(vhost, n) expands into: 2n queues,
// 2n bindings and 2 exchanges.
func Objects(n int) int { return 4*n + 2 }

// Definitions renders vhost v as the body of POST /api/definitions/{vhost}.
func Definitions(v *topology.Vhost) ([]byte, error) {
	type obj = map[string]any
	var exchanges, queues, bindings []obj
	for _, n := range v.ExchangeNames() {
		e := v.Exchanges[n]
		exchanges = append(exchanges, obj{"name": n, "type": e.Type, "durable": e.Durable, "auto_delete": e.AutoDelete, "internal": e.Internal, "arguments": table(e.Arguments)})
	}
	for _, n := range v.QueueNames() {
		q := v.Queues[n]
		args := table(q.Arguments)
		args["x-queue-type"] = q.Type
		queues = append(queues, obj{"name": n, "durable": q.Durable, "auto_delete": q.AutoDelete, "arguments": args})
	}
	for _, b := range v.Bindings {
		bindings = append(bindings, obj{"source": b.Source, "destination": b.Destination, "destination_type": b.DestinationType, "routing_key": b.RoutingKey, "arguments": table(b.Arguments)})
	}
	return json.Marshal(obj{"exchanges": exchanges, "queues": queues, "bindings": bindings})
}

func table(a topology.Args) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	return out
}
