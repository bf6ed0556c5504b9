package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// What the kinds' requests (vhost.go, exchange.go, queue.go, binding.go,
// policy.go) share.

// getObject reads object name of kind k in vhost into out (GET
// /api/{APIPath}/{vhost}/{name}, only the given columns when not "").
// The single-object reads (GetVhost, GetExchange, GetQueue, GetPolicy)
// map it onto the model as ReadState does: apply uses them to tell whether
// a write whose outcome is unknown (ErrOutcomeUnknown) was carried out.
// Each error wraps ErrNotFound when the object (ErrVhostNotFound: its
// vhost) does not exist.
func (c *Client) getObject(ctx context.Context, k kind.Kind, vhost, name, columns string, out any) error {
	spec, ok := kind.Of(k)
	if !ok {
		return kind.Unknown("read", k)
	}
	r := &request{method: http.MethodGet, path: seg(spec.APIPath, vhost, name),
		op: fmt.Sprintf("read %s %q in vhost %q", spec.Label, name, vhost), vhost: vhost}
	if columns != "" {
		r.query = url.Values{"columns": {columns}}
	}
	return c.do(ctx, r, out)
}

// argsBody returns a as a JSON object body: normalised, never nil.
func argsBody(a topology.Args) map[string]any {
	out := map[string]any{}
	for k, v := range a.Normalized() {
		out[k] = v
	}
	return out
}
