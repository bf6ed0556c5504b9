package topology

// PolicySettings are a policy's settings beside its definition (of every
// kind of policy), in the order the plan compares and prints them (an
// ownership record's prints hash them in this order): PolicyDefinition's.
var PolicySettings = []Setting[*Policy]{
	{Key: "pattern", APIKey: "pattern", Value: func(p *Policy) any { return p.Pattern }, Set: func(p *Policy, v any) { p.Pattern = v.(string) },
		Text: true, Help: "a regular expression matched against object names", Example: `"^orders\\."`},
	{Key: "apply_to", APIKey: "apply-to", Default: "all", Value: func(p *Policy) any { return p.AppliesTo() }, Set: func(p *Policy, v any) { p.ApplyTo = v.(string) },
		Values: []string{"queues", "exchanges", "all", "classic_queues", "quorum_queues", "streams"}},
	{Key: "priority", APIKey: "priority", Default: 0, Value: func(p *Policy) any { return p.Priority }, Set: func(p *Policy, v any) { p.Priority = v.(int) }},
}

// PolicyDefinitionKey is the name of a policy's definition, the same in
// topology.yaml, in plans, in a definitions file and in the management
// API.
const PolicyDefinitionKey = "definition"

// AppliesTo is what p applies to as RabbitMQ holds it: ApplyTo, or "all"
// when it is left out.
func (p *Policy) AppliesTo() string {
	if p.ApplyTo == "" {
		return "all"
	}
	return p.ApplyTo
}
