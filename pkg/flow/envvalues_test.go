package flow

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestFlowWordsHideEnvValues: a flow's words showed a short value the
// files took from the environment in plain ("its length limit is now 99
// messages" where the file says x-max-length: ${N}), where the plan's
// field changes show ${N}: they now show what the file wrote, with the
// unit after it, and a literal value of another field stays as it is.
func TestFlowWordsHideEnvValues(t *testing.T) {
	env := func(key, value, raw string) topology.EnvValue {
		return topology.EnvValue{Key: key, Value: value, Raw: raw}
	}
	stream := func(name string, args topology.Args) obj {
		return func(v *topology.Vhost) {
			v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueStream, Durable: true, Arguments: args.Normalized()}
		}
	}
	tests := []struct {
		name          string
		before, after *topology.Topology
		env           []topology.EnvValue
		want          []string // in the text
		notWant       []string
	}{
		{name: "a lower length limit", before: topo(queue("q", topology.Args{"x-max-length": 1000})), after: topo(queue("q", topology.Args{"x-max-length": 99})),
			env: []topology.EnvValue{env("x-max-length", "99", "${N}")}, want: []string{"its length limit is now ${N} messages (was 1000 messages)"}, notWant: []string{"99"}},
		{name: "a limit from limits.max_length, in bytes too", before: topo(queue("q", nil)), after: topo(queue("q", topology.Args{"x-max-length": 7, "x-max-length-bytes": 4096, "x-overflow": "reject-publish"})),
			env: []topology.EnvValue{env("max_length", "7", "${N}"), env("max_length_bytes", "4096", "${B}")}, want: []string{"${N} messages or ${B} bytes"}, notWant: []string{" 7 ", "4096"}},
		{name: "a TTL, before and after", before: topo(queue("q", topology.Args{"x-message-ttl": 60000})), after: topo(queue("q", topology.Args{"x-message-ttl": 1500})),
			env: []topology.EnvValue{env("x-message-ttl", "1500", "${TTL}")}, want: []string{"its messages now expire after ${TTL} ms (was 1m; x-message-ttl)"}, notWant: []string{"1500", "1.5s"}},
		{name: "a TTL by policy", before: topo(queue("q", nil)), after: topo(queue("q", nil), policy("ttl", "^q$", "queues", topology.Args{"message-ttl": 1500})),
			env: []topology.EnvValue{env("message-ttl", "1500", "${TTL}")}, want: []string{"its messages now expire after ${TTL} ms (policy \"ttl\"'s message-ttl)"}, notWant: []string{"1500", "1.5s"}},
		{name: "an expiry", before: topo(queue("q", nil)), after: topo(queue("q", topology.Args{"x-expires": 5000})),
			env: []topology.EnvValue{env("x-expires", "5000", "${EXP}")}, want: []string{"unused for ${EXP} ms (x-expires)", "deleted with the queue once it has been unused for ${EXP} ms"}, notWant: []string{"5000", "5s"}},
		{name: "a delivery limit", before: topo(quorum("q", topology.Args{"x-delivery-limit": 10})), after: topo(quorum("q", topology.Args{"x-delivery-limit": 3})),
			env: []topology.EnvValue{env("x-delivery-limit", "3", "${DL}")}, want: []string{"its delivery limit is now ${DL} (was 10)"}, notWant: []string{" 3 "}},
		{name: "a new delivery limit", before: topo(queue("q", nil)), after: topo(quorum("q", topology.Args{"x-delivery-limit": 3})),
			env: []topology.EnvValue{env("x-delivery-limit", "3", "${DL}")}, want: []string{"${DL}"}, notWant: []string{" 3 "}},
		{name: "a stream's retention", before: topo(stream("s", nil)), after: topo(stream("s", topology.Args{"x-max-age": "2D"})),
			env: []topology.EnvValue{env("x-max-age", "2D", "${AGE}")}, want: []string{"kept within its retention of ${AGE}"}, notWant: []string{"2D", "2d"}},
		{name: "a delay tier's delay", before: topo(delayTier("q.retry", "q", 30000), queue("q", nil)), after: topo(delayTier("q.retry", "q", 30000)),
			env: []topology.EnvValue{env("x-message-ttl", "30000", "${DELAY}")}, want: []string{"through delay tier \"q.retry\" (${DELAY} ms)"}, notWant: []string{"30000", "30s"}},
		{name: "a literal of the queue's own, the same as another queue's value from the environment", before: topo(queue("q", topology.Args{"x-max-length": 1000}), queue("r", nil)), after: topo(queue("q", topology.Args{"x-max-length": 99}), queue("r", topology.Args{"x-max-length": 99})),
			env:  []topology.EnvValue{env("x-max-length", "99", "${N}"), {Key: "max_length", Value: "99", Raw: "99", Literal: true, Kind: "queue", Vhost: "/", Object: "q"}},
			want: []string{"its length limit is now 99 messages (was 1000 messages)", "it now has a length limit of ${N} messages"}},
		{name: "a literal of another field stays", before: topo(queue("q", topology.Args{"x-max-length": 1000})), after: topo(queue("q", topology.Args{"x-max-length": 99})),
			env: []topology.EnvValue{env("x-delivery-limit", "99", "${DL}")}, want: []string{"its length limit is now 99 messages"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{Env: topology.NewEnvValues(tc.env)})
			var sb strings.Builder
			if err := WriteText(&sb, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			text := sb.String()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the text does not say %q:\n%s", w, text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(text, w) {
					t.Errorf("the text shows %q, a value from the environment:\n%s", w, text)
				}
			}
		})
	}
}
