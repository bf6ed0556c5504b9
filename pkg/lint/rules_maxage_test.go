package lint

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// maxAgeListCases: MQ507, a policy's max-age written as a list, which
// every version takes and no stream reads as an age: an error before
// 3.13.1 (the node's stream retention crashes on it until the node shuts
// down: measured on 3.10.8), a warning after (nothing is trimmed by age:
// measured on 4.0.5 and 4.3.6).
func maxAgeListCases() []ruleCase {
	listPolicy := func(b *builder) {
		b.typed("log", topology.QueueStream, topology.Args{argMaxAge: "1D"})
		b.typed("audit", topology.QueueStream, nil)
		b.typed("other", topology.QueueStream, nil)
		b.queue("work", topology.Args{argMaxLen: 10})
		b.policy("age", "^(log|audit|work)$", topology.Args{"max-age": []any{"7", "D"}})
	}
	var cases []ruleCase
	for _, ver := range []string{"4.3", "4.0", "3.13.1"} {
		cases = append(cases, ruleCase{name: "max-age a list on " + ver, id: "MQ507", build: listPolicy,
			opts: Options{Version: rmqversion.MustParse(ver)}, fire: []string{"age"}, severity: Warning,
			contains: []string{`policy "age" sets max-age ["7", "D"], a list: RabbitMQ ` + rmqversion.MustParse(ver).String() + ` takes the policy, but a stream reads a max-age only from one string`,
				"the streams the policy applies to keep every message for ever as far as age goes, their own x-max-age included",
				"It applies to stream audit and stream log here.", `Write it as one string, "7D": a list is no age to a stream`},
			absent: []string{"shuts down", "Plan refuses"}})
	}
	for _, ver := range []string{"3.10", "3.12", "3.13.0"} {
		cases = append(cases, ruleCase{name: "max-age a list on " + ver, id: "MQ507", build: listPolicy,
			opts: Options{Version: rmqversion.MustParse(ver)}, fire: []string{"age"}, severity: Error,
			contains: []string{"RabbitMQ " + rmqversion.MustParse(ver).String() + " takes the policy, but", "the node's stream retention process crashes on it (badarith in osiris_log:eval_age/2), again and again, until its supervisor gives up and the whole node shuts down",
				"It applies to stream audit and stream log here. Plan refuses to declare it; where the broker already holds it, plan says it is in force and to fix it at once. Write it as one string, \"7D\""}})
	}
	return append(cases,
		ruleCase{name: "max-age a list of one age, no stream", id: "MQ507",
			build: func(b *builder) {
				b.queue("work", nil)
				b.policy("age", ".*", topology.Args{"max-age": []any{"12h"}})
			},
			fire: []string{"age"}, contains: []string{`sets max-age ["12h"], a list`, "It applies to no stream of the file yet.", `Write it as one string, "12h"`}},
		ruleCase{name: "max-age one string", id: "MQ507",
			build: func(b *builder) {
				b.typed("log", topology.QueueStream, nil)
				b.policy("age", ".*", topology.Args{"max-age": "7D"})
			}},
		// A list the broker refuses is MQ501's, with the same fix.
		ruleCase{name: "max-age a list the broker refuses", id: "MQ507",
			opts: Options{Version: rmqversion.MustParse("3.10")},
			build: func(b *builder) {
				b.typed("log", topology.QueueStream, nil)
				b.policy("age", ".*", topology.Args{"max-age": []any{"1", "week"}})
			}},
		ruleCase{name: "max-age a list the broker refuses, MQ501", id: "MQ501",
			opts: Options{Version: rmqversion.MustParse("3.10")},
			build: func(b *builder) {
				b.typed("log", topology.QueueStream, nil)
				b.policy("age", ".*", topology.Args{"max-age": []any{"1", "week"}})
			},
			fire: []string{"age"}, contains: []string{`policy "age" sets max-age ["1", "week"]: RabbitMQ 3.10 refuses the whole policy (HTTP 400 "Validation failed": ["1", "week"] is not a valid max age`, `Write it as one string, an age such as "7D"`}},
		// Operator policies take no max-age: MQ501 reports the key.
		ruleCase{name: "max-age a list in an operator policy", id: "MQ507",
			build: func(b *builder) {
				b.typed("log", topology.QueueStream, nil)
				b.v.OperatorPolicies["age"] = &topology.Policy{Name: "age", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"max-age": []any{"7", "D"}}}
			}},
	)
}

// TestMaxAgeListIsNoRetention: a stream whose only age is a policy's
// max-age written as a list has no retention, which MQ507 says (naming
// the stream and the fix) and MQ301 then does not say again; with MQ507
// off, MQ301 says it. The list does not hide the stream's other retention:
// a stream with max-length-bytes is bounded.
func TestMaxAgeListIsNoRetention(t *testing.T) {
	b := newBuilder()
	b.typed("log", topology.QueueStream, topology.Args{argMaxAge: "1D"})
	b.typed("sized", topology.QueueStream, topology.Args{argMaxBytes: 1_000_000})
	b.policy("age", "^(log|sized)$", topology.Args{"max-age": []any{"7", "D"}})
	for _, ver := range []string{"4.3", "4.0", "3.10"} {
		fs := b.run(t, Options{Version: rmqversion.MustParse(ver)})
		if got := only(fs, "MQ301"); len(got) != 0 {
			t.Errorf("%s: MQ301 says what MQ507 says: %s", ver, describe(got))
		}
		if got := only(fs, "MQ507"); len(got) != 1 || !strings.Contains(got[0].Message, "It applies to stream log and stream sized here.") {
			t.Errorf("%s: MQ507 = %s, want one finding naming both streams", ver, describe(got))
		}
		fs = b.run(t, Options{Version: rmqversion.MustParse(ver), Rules: map[string]string{"MQ507": "off"}})
		if got := only(fs, "MQ301"); len(got) != 1 || got[0].Object.Name != "log" || !strings.Contains(got[0].Message, `stream "log" has no retention limit`) {
			t.Errorf("%s, MQ507 off: MQ301 = %s, want stream log to have no retention (the list overrides its x-max-age 1D)", ver, describe(got))
		}
	}
}
