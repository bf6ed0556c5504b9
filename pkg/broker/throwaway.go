package broker

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Throwaway vhosts are the vhosts mqctl makes for itself, for a moment:
// apply's preflight (pkg/preflight) declares the plan's shapes in one.
// They are named ThrowawayPrefix + a creation time and a random part, and
// tagged ThrowawayTag, so that nobody takes one for theirs; VhostNames
// leaves them out, so no plan, export or status ever shows one.
const (
	ThrowawayPrefix = "mqctl-preflight-"
	ThrowawayTag    = "mqctl-preflight"
)

// IsThrowaway reports whether vhost name is one of mqctl's throwaway
// vhosts (by name alone: its tag says the same).
func IsThrowaway(name string) bool { return strings.HasPrefix(name, ThrowawayPrefix) }

// ThrowawayVhosts lists the throwaway vhosts on the broker: named and
// tagged as mqctl names and tags them.
func (c *Client) ThrowawayVhosts(ctx context.Context) ([]VhostInfo, error) {
	infos, err := c.listVhosts(ctx)
	if err != nil {
		return nil, err
	}
	var out []VhostInfo
	for name, info := range infos {
		if IsThrowaway(name) && hasTag(info.Tags, ThrowawayTag) {
			out = append(out, info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func hasTag(tags []string, tag string) bool {
	for _, t := range tags {
		if t == tag {
			return true
		}
	}
	return false
}

// VhostConnections counts the client connections open to vhost.
func (c *Client) VhostConnections(ctx context.Context, vhost string) (int, error) {
	var list []struct {
		Name string `json:"name"`
	}
	if err := c.GetJSON(ctx, &list, fmt.Sprintf("list the connections of vhost %q", vhost), vhost, "vhosts", vhost, "connections"); err != nil {
		return 0, err
	}
	return len(list), nil
}
