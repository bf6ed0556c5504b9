package lint

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// fromYAML replaces the builder's topology with the one the loader expands
// from vhost "/"'s body, so that the cases see the sugar as users write it.
func fromYAML(body string) func(b *builder) {
	return func(b *builder) {
		var sb strings.Builder
		sb.WriteString("version: 1\nvhosts:\n  /:\n")
		for line := range strings.SplitSeq(strings.TrimRight(body, "\n"), "\n") {
			sb.WriteString("    " + line + "\n")
		}
		t, err := loader.LoadBytes("topology.yaml", []byte(sb.String()), loader.Options{})
		if err != nil {
			panic(err)
		}
		b.t, b.v = t, t.Vhosts["/"]
	}
}

// retryFormCases: MQ203 on each target version (RabbitMQ 3.10, 4.0, 4.2,
// 4.3).
func retryFormCases() []ruleCase {
	on := func(v string) Options { return Options{Version: rmqversion.MustParse(v)} }
	const dlx = "exchanges:\n  jobs.dlx: {type: direct}\nqueues:\n"
	quorumTiers := fromYAML(dlx + `  jobs:
    type: quorum
    dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}
    retry: {delays: [10s, 1m, 10m]}
`)
	backoff := func(retry string) func(b *builder) {
		return fromYAML(dlx + `  jobs:
    type: quorum
    dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}
    retry: ` + retry + "\n")
	}
	withoutMQ101 := func(v string) Options {
		return Options{Version: rmqversion.MustParse(v), Rules: map[string]string{"MQ101": "off"}}
	}
	return []ruleCase{
		{name: "4.3: a quorum queue's delay tiers could be the broker's delayed retry, with the trade-off", id: "MQ203",
			build: quorumTiers, opts: on("4.3"), fire: []string{"jobs"}, quiet: []string{"jobs.dlq", "jobs.retry.10s"}, severity: Info,
			contains: []string{
				`quorum queue "jobs" makes its retries wait in delay queues (jobs.retry.10s, jobs.retry.1m and jobs.retry.10m). On RabbitMQ 4.3 the broker can make them wait itself: retry: {backoff: {min: 10s, max: 10m}, attempts: <tries before dead-lettering>} in place of delays`,
				"no delay queues to declare and watch", "instead of publishing it to a tier",
				"the wait grows linearly, min × the message's failed deliveries up to max (10s, 20s, 30s, … up to 10m), not in the steps of the tiers",
				"never on a basic.nack", "once every node of the cluster runs 4.3",
			}},
		{name: "4.3: a quorum queue's delay tiers and its own delivery limit: the attempts that keep the limit, in its place", id: "MQ203",
			build: fromYAML(dlx + `  jobs:
    type: quorum
    delivery_limit: 3
    dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}
    retry: {delays: [10s, 1m]}
`), opts: on("4.3"), fire: []string{"jobs"}, severity: Info,
			contains: []string{`retry: {backoff: {min: 10s, max: 1m}, attempts: 4} in place of delays and of its delivery limit 3, which attempts sets (x-delivery-limit = attempts - 1)`}},
		{name: "tiers written as plain queues are tiers too", id: "MQ203",
			build: fromYAML(`queues:
  work: {type: quorum, dead_letter: {exchange: "", routing_key: work.dlq}}
  work.dlq: {type: quorum}
  work.wait: {type: quorum, limits: {message_ttl: 30s}, dead_letter: {exchange: "", routing_key: work}}
`), opts: on("4.3"), fire: []string{"work"}, quiet: []string{"work.wait", "work.dlq"},
			contains: []string{"(work.wait)", "retry: {backoff: {min: 30s}, attempts:"}},
		{name: "a classic queue's tiers are its only way: nothing to say", id: "MQ203",
			build: fromYAML(dlx + `  jobs:
    dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}
    retry: {delays: [10s, 1m]}
`), opts: on("4.3")},
		{name: "before 4.3 tiers are the only way: nothing to say", id: "MQ203",
			build: quorumTiers, opts: on("4.0")},
		{name: "4.2 neither", id: "MQ203", build: quorumTiers, opts: on("4.2")},

		{name: "backoff with attempts and a dead-letter exchange on 4.3", id: "MQ203",
			build: backoff("{backoff: {min: 1s, max: 1m}, attempts: 5}"), opts: on("4.3")},
		{name: "4.3.0 has delayed retry too (only its policy keys came in 4.3.1)", id: "MQ203",
			build: backoff("{backoff: {min: 1s, max: 1m}, attempts: 5}"), opts: on("4.3.0")},
		{name: "backoff with delivery_limit instead of attempts", id: "MQ203",
			build: fromYAML(dlx + `  jobs:
    type: quorum
    delivery_limit: 4
    dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}
    retry: {backoff: {min: 1s}}
`), opts: on("4.3")},
		{name: "backoff without attempts: the default limit of 20 ends the retries at the 21st failure", id: "MQ203",
			build: backoff("{backoff: {min: 1s, max: 1m}}"), opts: on("4.3"), fire: []string{"jobs"}, severity: Warning,
			contains: []string{`quorum queue "jobs" delays its retries (retry.backoff), but it sets no attempts (no delivery limit): on RabbitMQ 4.3 quorum queues' default delivery limit of 20 applies, so the 21st failed delivery dead-letters the message to exchange "jobs.dlx", after 210s of waiting in all (1s, 2s, 3s, … up to 1m). Set retry.attempts to the number of tries you mean`}},
		{name: "the same with the arguments written out: set delivery_limit", id: "MQ203",
			build: fromYAML(dlx + `  jobs:
    type: quorum
    dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}
    arguments: {x-delayed-retry-type: all, x-delayed-retry-min: 10000}
`), opts: on("4.3"), fire: []string{"jobs"},
			contains: []string{"delays its retries (x-delayed-retry-*)", "after 200s of waiting in all (10s each time)", "Set delivery_limit to the number of tries you mean, less one"}},
		{name: "backoff, attempts, no dead-letter exchange: MQ101's error says it", id: "MQ203",
			build: fromYAML("queues:\n  jobs: {type: quorum, retry: {backoff: {min: 1s}, attempts: 3}}\n"), opts: on("4.3")},
		{name: "MQ101 off: MQ203 says the message is lost", id: "MQ203",
			build: fromYAML("queues:\n  jobs: {type: quorum, retry: {backoff: {min: 1s}, attempts: 3}}\n"), opts: withoutMQ101("4.3"), fire: []string{"jobs"},
			contains: []string{"the 3rd failed delivery drops the message: the queue has no dead-letter exchange, so it is lost"}},
		{name: "no attempts and no dead-letter exchange", id: "MQ203",
			build: fromYAML("queues:\n  jobs: {type: quorum, retry: {backoff: {min: 1s}}}\n"), opts: on("4.3"), fire: []string{"jobs"},
			contains: []string{"the 21st failed delivery drops the message: the queue has no dead-letter exchange", "and give the queue a dead-letter exchange to keep what fails"}},
		{name: "when: returned: waits that never grow, returns that never count", id: "MQ203",
			build: backoff("{backoff: {min: 5s, max: 1m}, when: returned, attempts: 5}"), opts: on("4.3"), fire: []string{"jobs"}, severity: Warning,
			contains: []string{"with when: returned (x-delayed-retry-type returned) only the returns that are not failed deliveries wait", "is redelivered at once", "retried every 5s for ever", "Use when: failed"}},
		// The fix names where the type is set: written as an argument,
		// or by a policy (whose type beats the queue's own).
		{name: "x-delayed-retry-type returned as an argument: the argument's fix", id: "MQ203",
			build: fromYAML(dlx + "  jobs: {type: quorum, dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}, delivery_limit: 4, arguments: {x-delayed-retry-type: returned, x-delayed-retry-min: 100}}\n"),
			opts:  on("4.3"), fire: []string{"jobs"},
			contains: []string{"with x-delayed-retry-type returned only the returns", "Set x-delayed-retry-type to failed for a wait that grows"}},
		{name: "delayed-retry-type returned from a policy: the policy's fix", id: "MQ203",
			build: fromYAML(dlx + "  jobs: {type: quorum, dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}, delivery_limit: 4, arguments: {x-delayed-retry-type: failed, x-delayed-retry-min: 100}}\n" +
				"policies:\n  slow: {pattern: ^jobs$, apply_to: quorum_queues, definition: {delayed-retry-type: returned, delayed-retry-min: 100}}\n"),
			opts: on("4.3"), fire: []string{"jobs"},
			contains: []string{`with policy "slow"'s delayed-retry-type returned only the returns`, `Set policy "slow"'s delayed-retry-type to failed for a wait that grows`}},

		{name: "backoff on 4.0: ignored by the broker, an error; tiers are the only way", id: "MQ203",
			build: backoff("{backoff: {min: 1s, max: 1m}, attempts: 5}"), opts: on("4.0"), fire: []string{"jobs"}, severity: Error,
			contains: []string{`quorum queue "jobs" asks for the broker's delayed retry (retry.backoff), which RabbitMQ 4.0 does not have`,
				"ignores them and redelivers a message its consumer rejects at once, so its 5 attempts are spent in a burst",
				"Here delay queues are the only way to make a retry wait: write retry: {delays: [1s, 1m]} instead", "or target RabbitMQ 4.3"}},
		{name: "backoff on 4.0 without attempts: the default limit's 21", id: "MQ203",
			build: backoff("{backoff: {min: 1s}}"), opts: on("4.0"), fire: []string{"jobs"},
			contains: []string{"its 21 attempts are spent in a burst", "write retry: {delays: [1s]} instead"}},
		{name: "backoff on 3.10 without attempts: no limit at all", id: "MQ203",
			build: backoff("{backoff: {min: 1s}}"), opts: on("3.10"), fire: []string{"jobs"}, severity: Error,
			contains: []string{"which RabbitMQ 3.10 does not have", "redelivers a message its consumer rejects at once, again and again"}},
		{name: "backoff on 4.2", id: "MQ203",
			build: backoff("{backoff: {min: 1s}, attempts: 2}"), opts: on("4.2"), fire: []string{"jobs"}, severity: Error},
		// One cause, one finding: MQ504 leaves backoff to MQ203 ...
		{name: "MQ504 leaves retry.backoff on 4.0 to MQ203", id: "MQ504",
			build: backoff("{backoff: {min: 1s}, attempts: 2}"), opts: on("4.0")},
		// ... unless MQ203 is off.
		{name: "MQ504 reports it with MQ203 off", id: "MQ504",
			build: backoff("{backoff: {min: 1s}, attempts: 2}"), opts: Options{Version: rmqversion.MustParse("4.0"), Rules: map[string]string{"MQ203": "off"}},
			fire: []string{"jobs"}, contains: []string{"which RabbitMQ 4.0 stores and ignores"}},
		// delivery_limit: unlimited (x-delivery-limit -1): no limit from
		// 4.0, the first return dead-letters the message on 3.10.
		{name: "unlimited delivery limit on 3.10: the first return ends it", id: "MQ203",
			build: fromYAML(dlx + "  jobs: {type: quorum, dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}, delivery_limit: unlimited}\n"), opts: on("3.10"), fire: []string{"jobs"}, severity: Warning,
			contains: []string{`quorum queue "jobs" has a negative delivery limit (its delivery_limit unlimited, or -1: x-delivery-limit -1)`, "which RabbitMQ 4.0+ reads as no limit", "on RabbitMQ 3.10 it dead-letters a message the first time it comes back", "Leave the delivery limit out on this version"}},
		{name: "raw x-delivery-limit -1 on 3.10 without a dead-letter exchange: dropped", id: "MQ203",
			build: fromYAML("queues:\n  jobs: {type: quorum, arguments: {x-delivery-limit: -1}}\n"), opts: on("3.10"), fire: []string{"jobs"},
			contains: []string{"on RabbitMQ 3.10 it drops a message the first time it comes back"}},
		{name: "unlimited delivery limit on 4.0: no limit", id: "MQ203",
			build: fromYAML(dlx + "  jobs: {type: quorum, dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}, delivery_limit: -1}\n"), opts: on("4.0")},
		{name: "unlimited delivery limit on 4.3: no limit", id: "MQ203",
			build: fromYAML(dlx + "  jobs: {type: quorum, dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}, delivery_limit: unlimited}\n"), opts: on("4.3")},
		{name: "MQ504 has nothing to say of backoff on 4.3", id: "MQ504",
			build: backoff("{backoff: {min: 1s, max: 1m}, attempts: 5}"), opts: on("4.3")},
	}
}

// The advice on 4.3 is an info, so a file with tiers passes `lint` at the
// default --fail-on error; backoff on 4.0 fails it.
func TestRetryFormSeverities(t *testing.T) {
	b := newBuilder()
	fromYAML("exchanges:\n  dlx: {type: direct}\nqueues:\n  q: {type: quorum, dead_letter: {exchange: dlx, queue: q.dlq}, retry: {delays: [10s]}}\n")(b)
	if fs := only(b.run(t, Options{}), "MQ203"); len(fs) != 1 || fs[0].Severity != Info || fs[0].RabbitMQVersion != "4.3" {
		t.Errorf("default target (4.3): %+v", fs)
	}
	b = newBuilder()
	fromYAML("exchanges:\n  dlx: {type: direct}\nqueues:\n  q: {type: quorum, dead_letter: {exchange: dlx, queue: q.dlq}, retry: {backoff: {min: 1s}, attempts: 3}}\n")(b)
	fs := only(b.run(t, Options{Version: rmqversion.MustParse("4.0"), Rules: map[string]string{"MQ203": "warning"}}), "MQ203")
	if len(fs) != 1 || fs[0].Severity != Warning {
		t.Errorf("a severity the user sets wins over the raised one: %+v", fs)
	}
}

func TestWaitSteps(t *testing.T) {
	for _, tt := range []struct {
		lo, hi int64
		want   string
	}{
		{1000, 60000, "1s, 2s, 3s, … up to 1m"},
		{1000, 2000, "1s, 2s"},
		{1000, 2500, "1s, 2s, 2500ms"},
		{10000, 10000, "10s each time"},
		{500, 0, "500ms each time"},
		{5000, 1000, "1s each time"}, // min(5000 × n, 1000)
	} {
		if got := waitSteps(tt.lo, tt.hi, 3); got != tt.want {
			t.Errorf("waitSteps(%d, %d) = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
	for n, want := range map[int64]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		if got := loader.Ordinal(n); got != want {
			t.Errorf("loader.Ordinal(%d) = %q", n, got)
		}
	}
}
