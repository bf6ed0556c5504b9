package flow

import (
	"reflect"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestTrimming: a stream given a retention it did not have, or a tighter
// one, by policy or argument, loses its oldest segments past it, read or
// not (measured on 4.3.6, engine's retention); before, the flows said no
// message went anywhere else. A looser retention, or a classic queue's
// byte limit, is no trimming.
func TestTrimming(t *testing.T) {
	stream := func(args topology.Args) obj {
		return func(v *topology.Vhost) {
			v.Queues["s"] = &topology.Queue{Name: "s", Type: topology.QueueStream, Durable: true, Arguments: args.Normalized()}
		}
	}
	keep := func(def topology.Args) obj { return policy("keep", "^s$", "queues", def) }
	const fate = ": RabbitMQ removes its oldest segments, whole, past it, whether consumers have read them or not, and a consumer behind them loses them (never the segment it writes to: a stream of one segment loses none)"
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []Trimming
	}{
		{name: "a policy gives it a size",
			before: topo(stream(nil)), after: topo(stream(nil), keep(topology.Args{"max-length-bytes": 1000000})),
			want: []Trimming{{Vhost: "/", Queue: "s", After: "1000000 bytes", Cause: "it now keeps 1000000 bytes (policy \"keep\"'s max-length-bytes)" + fate}}},
		{name: "a tighter age",
			before: topo(stream(nil), keep(topology.Args{"max-age": "7D"})), after: topo(stream(nil), keep(topology.Args{"max-age": "1D"})),
			want: []Trimming{{Vhost: "/", Queue: "s", Before: "7d", After: "1d", Cause: "it now keeps 1d (policy \"keep\"'s max-age)" + fate}}},
		{name: "the same age spelled otherwise", before: topo(stream(nil), keep(topology.Args{"max-age": "7D"})), after: topo(stream(nil), keep(topology.Args{"max-age": "168h"}))},
		// A policy's max-age written as a list is no age to a stream
		// (rabbit_stream_queue:max_age/1; measured on 4.0.5 and 4.3.6),
		// and it beats the stream's own: no trimming, and one string
		// after it trims.
		{name: "a max-age written as a list over the stream's own", before: topo(stream(topology.Args{"x-max-age": "7D"})), after: topo(stream(topology.Args{"x-max-age": "7D"}), keep(topology.Args{"max-age": []any{"1", "D"}}))},
		{name: "from a max-age written as a list to one string",
			before: topo(stream(nil), keep(topology.Args{"max-age": []any{"1", "D"}})), after: topo(stream(nil), keep(topology.Args{"max-age": "1D"})),
			want: []Trimming{{Vhost: "/", Queue: "s", After: "1d", Cause: "it now keeps 1d (policy \"keep\"'s max-age)" + fate}}},
		{name: "a looser size", before: topo(stream(nil), keep(topology.Args{"max-length-bytes": 1000})), after: topo(stream(nil), keep(topology.Args{"max-length-bytes": 5000}))},
		{name: "a classic queue's byte limit is no retention", before: topo(queue("s", nil)), after: topo(queue("s", nil), keep(topology.Args{"max-length-bytes": 1000}))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			if !reflect.DeepEqual(d.Trimming, tc.want) {
				t.Errorf("trimming:\ngot  %s\nwant %s", show(t, d.Trimming), show(t, tc.want))
			}
			if len(tc.want) > 0 && !d.LosesMessages() {
				t.Errorf("LosesMessages() = false")
			}
		})
	}
}
