package kind

import "fmt"

// federationShared are the keys rabbit_federation_parameters'
// shared_validation accepts in an upstream and in each member of an
// upstream set (which overrides the upstream's), measured on the beams of
// 3.10.8 and 4.0.5: both accept the same keys but ha-policy (3.10 only:
// 4.0 answers "Unrecognised terms") and queue-type (4.0 only, refused by
// 3.10).
var federationShared = []Field{
	{Name: "exchange", Type: FieldString, Help: "the upstream exchange to federate from (default: the federated exchange's own name)"},
	{Name: "queue", Type: FieldString, Help: "the upstream queue to federate from (default: the federated queue's own name)"},
	{Name: "consumer-tag", Type: FieldString, Help: "the consumer tag of a queue federation link"},
	{Name: "prefetch-count", Type: FieldInt, Help: "the most unacknowledged messages per link (default 1000)"},
	{Name: "reconnect-delay", Type: FieldNumber, Help: "seconds to wait before reconnecting after a failure (default 5)"},
	{Name: "max-hops", Type: FieldInt, Min: 1, Help: "the most federation links a message may cross (default 1)"},
	{Name: "expires", Type: FieldInt, Min: 1, Help: "milliseconds the upstream's queue lives after the link goes away (exchange federation; default: for ever)"},
	{Name: "message-ttl", Type: FieldInt, Help: "milliseconds a message waits in the upstream's queue (exchange federation; default: for ever)"},
	{Name: "trust-user-id", Type: FieldBool, Help: "pass on the user-id of messages from the upstream"},
	{Name: "ack-mode", Type: FieldString, Enum: ackModes, Help: "on-confirm (the default), on-publish or no-ack"},
	{Name: "resource-cleanup-mode", Type: FieldString, Enum: cleanupModes, Help: "default or never (keep the upstream's queue when the link goes away)"},
	{Name: "bind-nowait", Type: FieldBool, Help: "bind the upstream's queue without waiting for the answer"},
	{Name: "channel-use-mode", Type: FieldString, Enum: channelUseModes, Help: "multiple (the default) or single (one channel for the link's consumer and its commands)"},
	{Name: "ha-policy", Type: FieldString, Help: "the ha-policy of the upstream's queue (RabbitMQ 3.10; 4.0 refuses it)"},
	{Name: "queue-type", Type: FieldString, Enum: upstreamQueueTypes, Help: "classic (the default) or quorum: the type of the upstream's queue (RabbitMQ 4.0; 3.10 refuses it)"},
}

// The values of the shared keys that take one of a few.
var (
	cleanupModes       = []string{"default", "never"}
	channelUseModes    = []string{"multiple", "single"}
	upstreamQueueTypes = []string{"classic", "quorum"}
)

func validateFederation(s map[string]any) []Problem {
	var out []Problem
	out = append(out, oneOf(s, "ack-mode", ackModes...)...)
	out = append(out, oneOf(s, "resource-cleanup-mode", cleanupModes...)...)
	out = append(out, oneOf(s, "channel-use-mode", channelUseModes...)...)
	out = append(out, oneOf(s, "queue-type", upstreamQueueTypes...)...)
	for _, f := range []string{"prefetch-count", "message-ttl"} {
		if n, ok := integer(s, f); ok && n < 0 {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%d is negative", n), Hint: "expected an integer of at least 0"})
		}
	}
	if n, ok := s["reconnect-delay"].(float64); ok && n < 0 {
		out = append(out, Problem{Field: "reconnect-delay", Msg: fmt.Sprintf("%v is negative", n), Hint: "expected a number of at least 0"})
	} else if n, ok := integer(s, "reconnect-delay"); ok && n < 0 {
		out = append(out, Problem{Field: "reconnect-delay", Msg: fmt.Sprintf("%d is negative", n), Hint: "expected a number of at least 0"})
	}
	return out
}

// upstreamItem is a federation upstream (SPEC §9: federation_upstreams:
// {name: {uri: …}}), the runtime parameter of component
// "federation-upstream": uri (a secret: it usually holds credentials) and
// the shared keys.
var upstreamItem = &ItemSpec{
	Shape: Named,
	Doc: "The vhost's federation upstreams (SPEC §9) by name, set in place: runtime parameters federation-upstream. queue-type needs RabbitMQ 4.0; ha-policy is 3.10 only. " +
		"A URI may hold credentials: take it from a ${VARIABLE}.",
	Fields:   append([]Field{{Name: "uri", Type: FieldStrings, Help: "the upstream broker's URI, or a list of URIs tried in turn (take one with credentials from ${VARIABLE})"}}, federationShared...),
	Validate: validateUpstream,
}

// upstreamRequired are the settings without which the broker refuses an
// upstream (Spec.Required).
var upstreamRequired = []string{"uri"}

func validateUpstream(s map[string]any) []Problem {
	var out []Problem
	if len(missing(upstreamRequired, s)) > 0 {
		out = append(out, Problem{Msg: `missing required field "uri"`, Hint: `add uri: "${UPSTREAM_URI}" (amqp://user:password@host/vhost)`})
	} else if l, ok := s["uri"].([]any); ok && len(l) == 0 {
		out = append(out, Problem{Field: "uri", Msg: "the list of URIs is empty", Hint: "give at least one URI"})
	}
	out = append(out, uriProblems(s, "uri")...)
	return append(out, validateFederation(s)...)
}

// UpstreamSetList is the setting of a federation upstream set that holds
// its members: a list of mappings, each {upstream: name, …overrides}.
const UpstreamSetList = "upstreams"

// upstreamSetItem is a federation upstream set (SPEC §9:
// federation_upstream_sets: {name: [{upstream: dc2}, …]}), the runtime
// parameter of component "federation-upstream-set", whose value is the
// list itself. Both versions keep the members in the order written. Its
// one setting is the list (List has its members' fields).
var upstreamSetItem = &ItemSpec{
	Shape:  Named,
	Doc:    "The vhost's federation upstream sets (SPEC §9) by name, set in place: each a list of members, {upstream: name, …}.",
	Fields: []Field{{Name: UpstreamSetList, Type: FieldTable, Help: "the set's members"}},
	List: &ListSpec{
		Key:      UpstreamSetList,
		Required: []string{"upstream"},
		Doc:      "one member of a federation upstream set: an upstream of the vhost and settings overriding its own",
		Fields:   append([]Field{{Name: "upstream", Type: FieldString, Help: "the name of a federation upstream of the vhost"}}, federationShared...),
		Validate: validateUpstreamSetMember,
	},
}

func validateUpstreamSetMember(s map[string]any) []Problem {
	var out []Problem
	if u, ok := str(s, "upstream"); !ok {
		out = append(out, Problem{Msg: `missing required field "upstream"`, Hint: "add upstream: the name of one of the vhost's federation_upstreams"})
	} else if u == "" {
		out = append(out, Problem{Field: "upstream", Msg: "must not be empty", Hint: "name one of the vhost's federation_upstreams"})
	}
	return append(out, validateFederation(s)...)
}

// UpstreamSetMembers returns the members of an upstream set of settings
// (UpstreamSetList's list), each a mapping; nil when it holds none.
func UpstreamSetMembers(settings map[string]any) []map[string]any {
	l, _ := settings[UpstreamSetList].([]any)
	var out []map[string]any
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
