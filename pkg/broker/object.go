package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

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
	r := &request{method: http.MethodGet, path: seg(append(strings.Split(spec.APIPath, "/"), vhost, name)...),
		op: fmt.Sprintf("read %s %q in vhost %q", spec.Label, name, vhost), vhost: vhost}
	if columns != "" {
		r.query = url.Values{"columns": {columns}}
	}
	return c.do(ctx, r, out)
}

// Exists reports whether vhost holds an object of kind k named name, for
// any kind the management API keeps by name in a vhost (its APIPath):
// asked of the broker, not of a state read. A kind that is not one of
// many in a vhost by name (kind.Kind.InVhostByName: a vhost, what a vhost
// holds once as its limits, the broker's own kinds), one named by its
// ends (kind.Spec.NamedByEnds: a binding), one a vhost holds by another
// key than a name (a permission, by user), or one that mqctl does not
// know, is an error, as is any answer but the object or 404 (ErrNotFound;
// a vhost that does not exist is no error: it holds nothing).
func (c *Client) Exists(ctx context.Context, k kind.Kind, vhost, name string) (bool, error) {
	if spec, ok := kind.Of(k); !ok || !k.InVhostByName() || spec.NamedByEnds || (spec.Item != nil && spec.Item.Shape != kind.Named) {
		return false, kind.Unknown("lookup by name", k)
	}
	var named struct {
		Name string `json:"name"`
	}
	switch err := c.getObject(ctx, k, vhost, name, "name", &named); {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// argsBody returns a as a JSON object body: normalised, never nil.
func argsBody(a topology.Args) map[string]any {
	out := map[string]any{}
	for k, v := range a.Normalized() {
		out[k] = v
	}
	return out
}
