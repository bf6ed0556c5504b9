package broker

// The requests of every kind of policy (kind.PolicyKinds): put, delete
// and read one, at its kind's APIPath.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// PutPolicy creates or updates p, a policy of kind k (kind.PolicyKinds:
// an operator policy needs the administrator tag), in vhost.
func (c *Client) PutPolicy(ctx context.Context, k kind.Kind, vhost string, p *topology.Policy) error {
	spec, err := policySpec(k, "write")
	if err != nil {
		return err
	}
	body := map[string]any{topology.PolicyDefinitionKey: argsBody(p.Definition)}
	for _, s := range topology.PolicySettings {
		body[s.APIKey] = s.Value(p)
	}
	return c.do(ctx, &request{method: http.MethodPut, path: seg(spec.APIPath, vhost, p.Name), body: body,
		op: fmt.Sprintf("set %s %q in vhost %q", spec.Label, p.Name, vhost), vhost: vhost}, nil)
}

// DeletePolicy deletes the policy of kind k named name; the error wraps
// ErrNotFound when it does not exist.
func (c *Client) DeletePolicy(ctx context.Context, k kind.Kind, vhost, name string) error {
	spec, err := policySpec(k, "delete")
	if err != nil {
		return err
	}
	return c.do(ctx, &request{method: http.MethodDelete, path: seg(spec.APIPath, vhost, name),
		op: fmt.Sprintf("delete %s %q in vhost %q", spec.Label, name, vhost), vhost: vhost}, nil)
}

// policySpec is the spec of k, a kind of policy; an error for another.
func policySpec(k kind.Kind, stage string) (kind.Spec, error) {
	spec, ok := kind.Of(k)
	if !ok || !spec.Policy {
		return kind.Spec{}, kind.Unknown("policy "+stage, k)
	}
	return spec, nil
}

// GetPolicy reads the policy of kind k (kind.PolicyKinds) named name in
// vhost.
func (c *Client) GetPolicy(ctx context.Context, k kind.Kind, vhost, name string) (*topology.Policy, error) {
	if _, err := policySpec(k, "read"); err != nil {
		return nil, err
	}
	var p policyJSON
	if err := c.getObject(ctx, k, vhost, name, "", &p); err != nil {
		return nil, err
	}
	p.Name = name
	return definitions.MapPolicy(p), nil
}
