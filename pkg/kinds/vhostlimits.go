package kinds

import (
	"context"
	"fmt"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// vhostLimits are a vhost's limits (SPEC §9): one item per vhost, named
// after it, whose settings are the limits set. The management API keeps
// each limit on its own: GET /api/vhost-limits/{vhost} lists them as
// [{"vhost": v, "value": {"max-queues": 10, …}}]; PUT and DELETE
// /api/vhost-limits/{vhost}/{limit} set ({"value": n}) and clear one.
type vhostLimits struct{}

func (vhostLimits) Spec() kind.Spec { return spec(kind.VhostLimits) }
func (vhostLimits) Shape() Shape    { return Single }

func (vhostLimits) Fields() []Field {
	return []Field{
		{Name: "max-connections", Type: Int, Min: -1, Help: "the most client connections the vhost accepts (-1: no limit, 0: none)"},
		{Name: "max-queues", Type: Int, Min: -1, Help: "the most queues the vhost holds (-1: no limit, 0: none)"},
	}
}

func (vhostLimits) Read(ctx context.Context, api API, vhost string) ([]*topology.Item, error) {
	var list []struct {
		Vhost string         `json:"vhost"`
		Value map[string]any `json:"value"`
	}
	if err := api.GetJSON(ctx, &list, fmt.Sprintf("read the limits of vhost %q", vhost), vhost, "vhost-limits", vhost); err != nil {
		return nil, err
	}
	settings := topology.Args{}
	for _, l := range list {
		for k, v := range l.Value {
			settings[k] = v
		}
	}
	if len(settings) == 0 {
		return nil, nil
	}
	return []*topology.Item{{Kind: kind.VhostLimits, Name: vhost, Settings: settings.Normalized()}}, nil
}

func (vhostLimits) Write(ctx context.Context, api API, vhost string, have, want *topology.Item) error {
	return writeLimits(ctx, api, "vhost", vhost, vhost, []string{"vhost-limits", vhost}, have, want)
}

func (vhostLimits) Delete(ctx context.Context, api API, vhost string, have *topology.Item) error {
	return writeLimits(ctx, api, "vhost", vhost, vhost, []string{"vhost-limits", vhost}, have, &topology.Item{Name: have.Name})
}
