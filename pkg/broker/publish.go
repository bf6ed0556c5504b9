package broker

// This file publishes a message through the management API
// (POST /api/exchanges/{vhost}/{exchange}/publish): the broker's own
// AMQP client publishes it, mandatory and with publisher confirms, and the
// answer says whether a queue took it. What that path offers that an AMQP
// client in Go does not is the order of a table's fields: the broker
// builds the headers from the JSON object in key order (up to 32 fields,
// rabbit_misc:to_amqp_table/1), as it builds a binding's arguments
// declared through the API, so a header's nested table matches a
// binding's equal one every time (topology.HasMultiFieldTable).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// Publishing is a message to publish through the management API.
type Publishing struct {
	Exchange, RoutingKey string
	// MessageID, Expiration and ContentType are its properties of those
	// names ("" for none).
	MessageID, Expiration, ContentType string
	// Headers are its headers (topology.Normalize's types); see
	// HeadersPublishable.
	Headers map[string]any
	// Body is the payload, sent as a string.
	Body string
}

// ErrPublishRefused is the error of a message a queue refused (a
// publisher confirm's nack: a length limit with overflow reject-publish).
var ErrPublishRefused = errors.New("a queue refused the message")

// HeadersPublishable reports whether the management API can publish
// headers h with the AMQP types an AMQP client would give them: long
// (int64), double (float64), long string, boolean, array and table, at
// any depth. It cannot send a void (the broker refuses a JSON null) or
// any other type.
func HeadersPublishable(h map[string]any) bool {
	var ok func(v any) bool
	ok = func(v any) bool {
		switch x := v.(type) {
		case int64, string, bool:
			return true
		case float64:
			return !math.IsInf(x, 0) && !math.IsNaN(x)
		case []any:
			return !slices.ContainsFunc(x, func(e any) bool { return !ok(e) })
		case map[string]any:
			for _, e := range x {
				if !ok(e) {
					return false
				}
			}
			return true
		}
		return false
	}
	return ok(h)
}

// Publish publishes m into vhost through the management API and reports
// whether a queue took it (false: returned as unroutable). A queue's
// refusal is ErrPublishRefused. It is never sent twice: a request whose
// outcome is unknown is an error.
func (c *Client) Publish(ctx context.Context, vhost string, m Publishing) (bool, error) {
	if !HeadersPublishable(m.Headers) {
		return false, fmt.Errorf("publish to exchange %q in vhost %q: the management API cannot send these headers with their AMQP types (a null, or a type JSON has not)", m.Exchange, vhost)
	}
	var sb strings.Builder
	sb.WriteString(`{"properties":{`)
	sep := ""
	for _, p := range [][2]string{{"message_id", m.MessageID}, {"expiration", m.Expiration}, {"content_type", m.ContentType}} {
		if p[1] != "" {
			sb.WriteString(sep + strconv.Quote(p[0]) + ":" + jsonString(p[1]))
			sep = ","
		}
	}
	if len(m.Headers) > 0 {
		sb.WriteString(sep + `"headers":`)
		writeTypedJSON(&sb, m.Headers)
	}
	sb.WriteString(`},"routing_key":` + jsonString(m.RoutingKey) + `,"payload":` + jsonString(m.Body) + `,"payload_encoding":"string"}`)
	name := m.Exchange
	if name == "" {
		name = "amq.default"
	}
	var out struct {
		Routed bool `json:"routed"`
	}
	err := c.do(ctx, &request{method: http.MethodPost, path: seg("exchanges", vhost, name, "publish"), body: json.RawMessage(sb.String()),
		op: fmt.Sprintf("publish to exchange %q in vhost %q", m.Exchange, vhost), vhost: vhost}, &out)
	var api *APIError
	if errors.As(err, &api) && api.Status == http.StatusBadRequest && strings.Contains(api.Reason, "Check queue limits") {
		return false, fmt.Errorf("%w: %w", ErrPublishRefused, err)
	}
	return out.Routed, err
}

// writeTypedJSON writes v (HeadersPublishable) as JSON that the broker
// reads back with the same AMQP types: a float64 keeps a fraction or an
// exponent (1.0, not 1, which would come back a long).
func writeTypedJSON(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case int64:
		sb.WriteString(strconv.FormatInt(x, 10))
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		sb.WriteString(s)
	case string:
		sb.WriteString(jsonString(x))
	case bool:
		sb.WriteString(strconv.FormatBool(x))
	case []any:
		sb.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeTypedJSON(sb, e)
		}
		sb.WriteByte(']')
	case map[string]any:
		sb.WriteByte('{')
		for i, k := range topology.Args(x).Keys() {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(jsonString(k) + ":")
			writeTypedJSON(sb, x[k])
		}
		sb.WriteByte('}')
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
