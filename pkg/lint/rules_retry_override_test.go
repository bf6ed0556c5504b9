package lint

import "github.com/mqctl/mqctl/pkg/rmqversion"

// retryOverrideCases: MQ204, a policy or operator policy that changes the
// delayed retry a quorum queue's own arguments ask for.
func retryOverrideCases() []ruleCase {
	on := func(v string) Options { return Options{Version: rmqversion.MustParse(v)} }
	const head = "exchanges:\n  dlx: {type: direct}\nqueues:\n"
	const w1 = `  w1:
    type: quorum
    dead_letter: {exchange: dlx, queue: w1.dlq}
    retry: {backoff: {min: 5s, max: 1m}, attempts: 3}
`
	return []ruleCase{
		{name: "a policy's delayed-retry-type disabled turns off the queue's retry.backoff", id: "MQ204",
			build: fromYAML(head + w1 + `policies:
  no-retry: {pattern: "^w1$", definition: {delayed-retry-type: disabled}}
`), opts: on("4.3"), fire: []string{"w1"}, quiet: []string{"w1.dlq"}, severity: Warning,
			contains: []string{
				`quorum queue "w1" asks for delayed retry (retry.backoff: failed, waiting 5s, 10s, 15s, … up to 1m), but policy "no-retry" (topology.yaml:`,
				`) sets delayed-retry-type disabled (a policy's delayed-retry-type applies over the queue's own, an operator policy's over both)`,
				"its delayed retry is off: a message its consumer rejects is redelivered at once, so its 3 attempts are spent in a burst",
				`Delete policy "no-retry", which sets nothing else and applies to no other queue of the file`,
				"retry: {delays: [5s, 1m]}",
			}},
		{name: "the same policy with other settings: remove the key, the rest stays", id: "MQ204",
			build: fromYAML(head + w1 + `policies:
  cap: {pattern: "^w1$", definition: {max-length: 100, delayed-retry-type: disabled}}
`), opts: on("4.3"), fire: []string{"w1"},
			contains: []string{`Remove delayed-retry-type from policy "cap" (its other settings, max-length, stay in force)`}},
		{name: "a policy over several queues lowers min and max: narrow its pattern, or remove the keys", id: "MQ204",
			build: fromYAML(head + w1 + `  w2: {type: quorum, dead_letter: {exchange: dlx, queue: w2.dlq}}
policies:
  caps: {pattern: "^w", apply_to: quorum_queues, definition: {max-length: 1000, delayed-retry-min: 1000, delayed-retry-max: 20000}}
`), opts: on("4.3"), fire: []string{"w1"}, quiet: []string{"w2", "w1.dlq"},
			contains: []string{
				`policy "caps" (topology.yaml:`, `) sets delayed-retry-min 1s, delayed-retry-max 20s`,
				"a retry waits 1s, 2s, 3s, … up to 20s, not 5s, 10s, 15s, … up to 1m",
				`Narrow policy "caps"'s pattern "^w" so that it leaves "w1" out ("w1" then takes no max-length from it either), or remove delayed-retry-min and delayed-retry-max from it if w1.dlq, w2 and w2.dlq do without them too`,
			}},
		{name: "an operator policy's type beats the policy's and the queue's; its min raises the policy's", id: "MQ204",
			build: fromYAML(head + w1 + `policies:
  p: {pattern: "^w1$", definition: {delayed-retry-type: disabled, delayed-retry-min: 1000}}
operator_policies:
  ops: {pattern: "^w1$", definition: {delayed-retry-type: all, delayed-retry-min: 2000}}
`), opts: on("4.3"), fire: []string{"w1"},
			contains: []string{
				`policy "p" (topology.yaml:`, `sets delayed-retry-type disabled, delayed-retry-min 1s, and operator policy "ops"`,
				"the returns that wait are all of them (all), not failed deliveries alone",
				"a retry waits 2s, 4s, 6s, … up to 1m, not 5s, 10s, 15s, … up to 1m",
			}},
		{name: "an operator policy that sets the queue's own type back leaves the policy's type without effect", id: "MQ204",
			build: fromYAML(head + w1 + `policies:
  p: {pattern: "^w1$", definition: {delayed-retry-type: disabled}}
operator_policies:
  ops: {pattern: "^w1$", definition: {delayed-retry-type: failed, delayed-retry-min: 5000}}
`), opts: on("4.3")},
		{name: "raw arguments without a max: a policy's max makes the wait grow", id: "MQ204",
			build: fromYAML(head + `  w2:
    type: quorum
    dead_letter: {exchange: dlx, queue: w2.dlq}
    arguments: {x-delayed-retry-type: failed, x-delayed-retry-min: 5000, x-delivery-limit: 4}
policies:
  p: {pattern: "^w2$", definition: {delayed-retry-max: 20000}}
`), opts: on("4.3"), fire: []string{"w2"},
			contains: []string{"(x-delayed-retry-*: failed, waiting 5s each time)", "a retry waits 5s, 10s, 15s, … up to 20s, not 5s each time", "the smallest delayed-retry-max applies, where the queue sets none too"}},
		{name: "a policy's larger min and max do not apply: nothing to say", id: "MQ204",
			build: fromYAML(head + w1 + `policies:
  p: {pattern: "^w1$", definition: {delayed-retry-min: 10000, delayed-retry-max: 120000}}
`), opts: on("4.3")},
		{name: "a policy's returned type is MQ203's", id: "MQ204",
			build: fromYAML(head + w1 + `policies:
  p: {pattern: "^w1$", definition: {delayed-retry-type: returned, delayed-retry-min: 5000}}
`), opts: on("4.3")},
		{name: "before 4.3 there is no delayed retry to override", id: "MQ204",
			build: fromYAML(head + `  w2:
    type: quorum
    dead_letter: {exchange: dlx, queue: w2.dlq}
    arguments: {x-delayed-retry-type: failed, x-delayed-retry-min: 5000}
policies:
  p: {pattern: "^w2$", definition: {max-length: 10}}
`), opts: on("4.0")},
	}
}
