package lint

// builtinAnalyzers is mqctl's rule catalogue (SPEC §6). IDs and names are
// stable: they appear in configuration files, ignore comments and CI.
func builtinAnalyzers() []*Analyzer {
	return []*Analyzer{
		{ID: "MQ101", Name: "no-dead-letter-exchange", Severity: Warning,
			Summary: "a queue with no dead-letter exchange (not DLQs themselves, not delay queues)", Run: runNoDLX},
		{ID: "MQ102", Name: "dead-letter-exchange-missing", Severity: Error,
			Summary: "a dead-letter exchange that is not declared", Run: runDLXMissing},
		{ID: "MQ103", Name: "dead-letters-unrouted", Severity: Error,
			Summary: "dead letters that route to no queue: nothing is bound for the queue's dead-letter routing key(s)", Run: runDLUnrouted},
		{ID: "MQ104", Name: "dead-letters-cross-delivered", Severity: Warning,
			Summary: "dead letters of one queue reaching another queue's DLQ or a working queue", Run: runDLCrossDelivered},
		{ID: "MQ105", Name: "dead-letter-loop", Severity: Warning,
			Summary: "a dead-letter path that loops back without a delay", Run: runDLLoop},
		{ID: "MQ201", Name: "delay-return-misrouted", Severity: Error,
			Summary: "a delay queue whose expired messages route nowhere, or to more than the queue that sent them", Run: runDelayMisrouted},
		{ID: "MQ202", Name: "delay-without-queue-ttl", Severity: Warning,
			Summary: "a delay queue without a queue-level TTL (per-message expiration: head-of-line blocking)", Run: runDelayNoTTL},
		{ID: "MQ301", Name: "unbounded-queue", Severity: Info,
			Summary: "an unbounded queue: no length limit and no TTL, by argument or policy", Run: runUnbounded},
		{ID: "MQ302", Name: "silent-overflow", Severity: Warning,
			Summary: "a length limit with drop-head overflow and no dead-letter exchange: overflow discards silently", Run: runSilentOverflow},
		{ID: "MQ401", Name: "binding-undeclared-end", Severity: Error,
			Summary: "a binding whose source or destination is not declared", Run: runBindingEnds},
		{ID: "MQ402", Name: "exchange-unbound", Severity: Warning,
			Summary: "an exchange with no bindings and no alternate exchange: publishes are dropped", Run: runExchangeUnbound},
		{ID: "MQ501", Name: "unsupported-queue-feature", Severity: Error,
			Summary: "an argument or property the queue type does not support", Run: runUnsupported},
		{ID: "MQ502", Name: "too-many-priorities", Severity: Warning,
			Summary: "x-max-priority above 10", Run: runPriority},
		{ID: "MQ601", Name: "command-routing-key", Severity: Info,
			Summary: "a topic routing key that names a command (send.email) rather than an event (email.sent)", Run: runCommandKey},
		{ID: "MQ701", Name: "reserved-name", Severity: Error,
			Summary: "a name with the reserved amq. prefix", Run: runReservedName},
		{ID: "MQ702", Name: "classic-mirroring-policy", Severity: Warning,
			Summary: "a policy with classic-mirroring keys (ha-*), removed in RabbitMQ 4.0", Run: runMirroring},
	}
}
