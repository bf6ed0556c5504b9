package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// LinkState is what the broker reports of a link that moves messages
// between queues or brokers: a dynamic shovel (GET /api/shovels/{vhost})
// or a federation link (GET /api/federation-links/{vhost}).
type LinkState struct {
	// Name is the shovel's name, or the federation link's upstream.
	Name string
	// Target is what a federation link federates ("exchange x", "queue
	// q"); "" for a shovel.
	Target string
	// State is the broker's word: running, starting, terminated (a shovel),
	// error, shutdown (a federation link), …
	State string
	// Reason says why a link is not running, as the broker says it, with
	// the passwords of URIs masked; "" when it gives none.
	Reason string
}

// ListShovelStates lists the state of every dynamic shovel of vhost the
// shovel plugin runs (rabbitmq_shovel_management). A shovel that keeps
// failing may be missing from the list (4.0.5 leaves out one that cannot
// connect; 3.10.8 lists it as starting). The error wraps ErrNotFound when
// the broker has no such endpoint, and ErrVhostNotFound when the vhost does
// not exist.
func (c *Client) ListShovelStates(ctx context.Context, vhost string) ([]LinkState, error) {
	var list []struct {
		Name   string          `json:"name"`
		Type   string          `json:"type"`
		State  string          `json:"state"`
		Reason json.RawMessage `json:"reason"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("shovels", vhost),
		op: fmt.Sprintf("list the shovels of vhost %q", vhost), vhost: vhost}, &list); err != nil {
		return nil, err
	}
	var out []LinkState
	for _, s := range list {
		if s.Type != "" && s.Type != "dynamic" {
			continue // a static shovel, of the broker's configuration
		}
		out = append(out, LinkState{Name: s.Name, State: s.State, Reason: reasonText(s.Reason)})
	}
	return out, nil
}

// ListFederationLinks lists the federation links of vhost
// (rabbitmq_federation_management): one per upstream and federated
// exchange or queue. Errors as for ListShovelStates.
func (c *Client) ListFederationLinks(ctx context.Context, vhost string) ([]LinkState, error) {
	var list []struct {
		Upstream string          `json:"upstream"`
		Type     string          `json:"type"`
		Exchange string          `json:"exchange"`
		Queue    string          `json:"queue"`
		Status   string          `json:"status"`
		Error    json.RawMessage `json:"error"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("federation-links", vhost),
		op: fmt.Sprintf("list the federation links of vhost %q", vhost), vhost: vhost}, &list); err != nil {
		return nil, err
	}
	out := make([]LinkState, 0, len(list))
	for _, l := range list {
		target := "exchange " + l.Exchange
		if l.Type == "queue" {
			target = "queue " + l.Queue
		}
		out = append(out, LinkState{Name: l.Upstream, Target: target, State: l.Status, Reason: reasonText(l.Error)})
	}
	return out, nil
}

// reasonText is a reason the broker gives as a JSON string or as a term
// printed some other way, as text with URI passwords masked.
func reasonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		s = string(raw)
	}
	// RabbitMQ quotes an Erlang string inside the JSON one
	// ("\"failed to connect to source\"").
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"`))
	return MaskURL(s)
}
