package topology

// PolicySetting is a setting of a policy (of every kind of policy) beside
// its definition, described once for every stage that compares, prints,
// exports, writes or tries it: Key is its name in topology.yaml and in
// plans, APIKey in a definitions file and the management API, Default
// what RabbitMQ takes when it is not given (nil: none, the setting is
// required), Value its value in p as RabbitMQ holds it (an apply-to
// left out is "all"), and Text is true for free text (a pattern, a
// regular expression), which views quote. A policy's definition is its
// arguments, compared and shown key by key.
type PolicySetting struct {
	Key, APIKey string
	Default     any
	Value       func(p *Policy) any
	Text        bool
}

// PolicySettings are a policy's settings, in the order the plan compares
// and prints them (an ownership record's prints hash them in this order).
var PolicySettings = []PolicySetting{
	{Key: "pattern", APIKey: "pattern", Value: func(p *Policy) any { return p.Pattern }, Text: true},
	{Key: "apply_to", APIKey: "apply-to", Default: "all", Value: func(p *Policy) any { return p.AppliesTo() }},
	{Key: "priority", APIKey: "priority", Default: 0, Value: func(p *Policy) any { return p.Priority }},
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

// IsDefault reports whether v, a value of s, is the one RabbitMQ takes
// when s is not given.
func (s PolicySetting) IsDefault(v any) bool { return s.Default != nil && v == s.Default }
