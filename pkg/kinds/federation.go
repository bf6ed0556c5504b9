package kinds

import (
	"context"
	"fmt"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ListShaped is implemented by a Named kind whose items the file writes
// as lists of mappings (federation_upstream_sets: {name: [{upstream: a},
// …]}): ListKey names the one setting of the item that holds the list,
// ElemFields are the fields of each mapping in it, and ValidateElem checks
// one mapping as Validator checks an item.
type ListShaped interface {
	ListKey() string
	ElemFields() []Field
	ValidateElem(settings topology.Args) []Problem
}

// federationShared are the keys rabbit_federation_parameters'
// shared_validation accepts in an upstream and in each member of an
// upstream set (which overrides the upstream's), measured on the beams of
// 3.10.8 and 4.0.5: both accept the same keys but ha-policy (3.10 only:
// 4.0 answers "Unrecognised terms") and queue-type (4.0 only, refused by
// 3.10).
var federationShared = []Field{
	{Name: "exchange", Type: String, Help: "the upstream exchange to federate from (default: the federated exchange's own name)"},
	{Name: "queue", Type: String, Help: "the upstream queue to federate from (default: the federated queue's own name)"},
	{Name: "consumer-tag", Type: String, Help: "the consumer tag of a queue federation link"},
	{Name: "prefetch-count", Type: Int, Help: "the most unacknowledged messages per link (default 1000)"},
	{Name: "reconnect-delay", Type: Number, Help: "seconds to wait before reconnecting after a failure (default 5)"},
	{Name: "max-hops", Type: Int, Min: 1, Help: "the most federation links a message may cross (default 1)"},
	{Name: "expires", Type: Int, Min: 1, Help: "milliseconds the upstream's queue lives after the link goes away (exchange federation; default: for ever)"},
	{Name: "message-ttl", Type: Int, Help: "milliseconds a message waits in the upstream's queue (exchange federation; default: for ever)"},
	{Name: "trust-user-id", Type: Bool, Help: "pass on the user-id of messages from the upstream"},
	{Name: "ack-mode", Type: String, Help: "on-confirm (the default), on-publish or no-ack"},
	{Name: "resource-cleanup-mode", Type: String, Help: "default or never (keep the upstream's queue when the link goes away)"},
	{Name: "bind-nowait", Type: Bool, Help: "bind the upstream's queue without waiting for the answer"},
	{Name: "channel-use-mode", Type: String, Help: "multiple (the default) or single (one channel for the link's consumer and its commands)"},
	{Name: "ha-policy", Type: String, Help: "the ha-policy of the upstream's queue (RabbitMQ 3.10; 4.0 refuses it)"},
	{Name: "queue-type", Type: String, Help: "classic (the default) or quorum: the type of the upstream's queue (RabbitMQ 4.0; 3.10 refuses it)"},
}

func validateFederation(s topology.Args) []Problem {
	var out []Problem
	out = append(out, oneOf(s, "ack-mode", ackModes...)...)
	out = append(out, oneOf(s, "resource-cleanup-mode", "default", "never")...)
	out = append(out, oneOf(s, "channel-use-mode", "multiple", "single")...)
	out = append(out, oneOf(s, "queue-type", "classic", "quorum")...)
	for _, f := range []string{"prefetch-count", "message-ttl"} {
		if n, ok := s.Int(f); ok && n < 0 {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%d is negative", n), Hint: "expected an integer of at least 0"})
		}
	}
	if n, ok := s["reconnect-delay"].(float64); ok && n < 0 {
		out = append(out, Problem{Field: "reconnect-delay", Msg: fmt.Sprintf("%v is negative", n), Hint: "expected a number of at least 0"})
	} else if n, ok := s.Int("reconnect-delay"); ok && n < 0 {
		out = append(out, Problem{Field: "reconnect-delay", Msg: fmt.Sprintf("%d is negative", n), Hint: "expected a number of at least 0"})
	}
	return out
}

// federationUpstream is a federation upstream (SPEC §9:
// federation_upstreams: {name: {uri: …}}), the runtime parameter of
// component "federation-upstream": uri (a secret: it usually holds
// credentials) and the shared keys.
type federationUpstream struct{}

var upstreamParam = parameter{k: kind.FederationUpstream, component: "federation-upstream"}

func (federationUpstream) Spec() kind.Spec { return spec(kind.FederationUpstream) }
func (federationUpstream) Shape() Shape    { return Named }

func (federationUpstream) Fields() []Field {
	return append([]Field{{Name: "uri", Type: Strings, Help: "the upstream broker's URI, or a list of URIs tried in turn (take one with credentials from ${VARIABLE})"}}, federationShared...)
}

func (federationUpstream) Validate(s topology.Args) []Problem {
	var out []Problem
	if len(missing(kind.FederationUpstream, s)) > 0 {
		out = append(out, Problem{Msg: `missing required field "uri"`, Hint: `add uri: "${UPSTREAM_URI}" (amqp://user:password@host/vhost)`})
	} else if l, ok := s["uri"].([]any); ok && len(l) == 0 {
		out = append(out, Problem{Field: "uri", Msg: "the list of URIs is empty", Hint: "give at least one URI"})
	}
	return append(out, validateFederation(s)...)
}

func (federationUpstream) Read(ctx context.Context, api API, vhost string) ([]*topology.Item, error) {
	return upstreamParam.Read(ctx, api, vhost)
}
func (federationUpstream) Write(ctx context.Context, api API, vhost string, have, want *topology.Item) error {
	return upstreamParam.Write(ctx, api, vhost, have, want)
}
func (federationUpstream) Delete(ctx context.Context, api API, vhost string, have *topology.Item) error {
	return upstreamParam.Delete(ctx, api, vhost, have)
}

// UpstreamSetList is the setting of a federation upstream set that holds
// its members: a list of mappings, each {upstream: name, …overrides}.
const UpstreamSetList = "upstreams"

// federationUpstreamSet is a federation upstream set (SPEC §9:
// federation_upstream_sets: {name: [{upstream: dc2}, …]}), the runtime
// parameter of component "federation-upstream-set", whose value is the
// list itself. Both versions keep the members in the order written.
type federationUpstreamSet struct{}

var upstreamSetParam = parameter{k: kind.FederationUpstreamSet, component: "federation-upstream-set", list: UpstreamSetList}

func (federationUpstreamSet) Spec() kind.Spec { return spec(kind.FederationUpstreamSet) }
func (federationUpstreamSet) Shape() Shape    { return Named }

// Fields: the item's one setting, the list (ListShaped has its members').
func (federationUpstreamSet) Fields() []Field {
	return []Field{{Name: UpstreamSetList, Type: Table, Help: "the set's members"}}
}

func (federationUpstreamSet) ListKey() string { return UpstreamSetList }

func (federationUpstreamSet) ElemFields() []Field {
	return append([]Field{{Name: "upstream", Type: String, Help: "the name of a federation upstream of the vhost"}}, federationShared...)
}

func (federationUpstreamSet) ValidateElem(s topology.Args) []Problem {
	var out []Problem
	if u, ok := s.String("upstream"); !ok {
		out = append(out, Problem{Msg: `missing required field "upstream"`, Hint: "add upstream: the name of one of the vhost's federation_upstreams"})
	} else if u == "" {
		out = append(out, Problem{Field: "upstream", Msg: "must not be empty", Hint: "name one of the vhost's federation_upstreams"})
	}
	return append(out, validateFederation(s)...)
}

func (federationUpstreamSet) Read(ctx context.Context, api API, vhost string) ([]*topology.Item, error) {
	return upstreamSetParam.Read(ctx, api, vhost)
}
func (federationUpstreamSet) Write(ctx context.Context, api API, vhost string, have, want *topology.Item) error {
	return upstreamSetParam.Write(ctx, api, vhost, have, want)
}
func (federationUpstreamSet) Delete(ctx context.Context, api API, vhost string, have *topology.Item) error {
	return upstreamSetParam.Delete(ctx, api, vhost, have)
}

// Members returns the members of upstream set it (ListKey's list), each
// a mapping; nil when it holds none.
func Members(it *topology.Item) []map[string]any {
	l, _ := it.Settings[UpstreamSetList].([]any)
	var out []map[string]any
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
