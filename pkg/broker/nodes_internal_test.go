package broker

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNodesListedOnce: the cluster's nodes are listed (GET /api/nodes) by
// one function, and a client that has listed them (the facts a plan reads
// first, the nodes that run on 3.10) gives ClusterNodes, which a saved
// plan records, from that listing: a plan asks /api/nodes once.
func TestNodesListedOnce(t *testing.T) {
	t.Parallel()
	const nodes = `[{"name":"rabbit@a","running":true,"enabled_plugins":["rabbitmq_management"]},{"name":"rabbit@b","running":false}]`
	ctx := context.Background()
	tests := []struct {
		name    string
		version string
		nodes   string // the answer to GET /api/nodes
		before  func(*Client) error
		want    []string
		asked   int // GET /api/nodes in all
	}{
		{"ClusterNodes alone lists", "4.3.6", nodes, nil, []string{"rabbit@a", "rabbit@b"}, 1},
		{"after the facts (4.3)", "4.3.6", nodes, func(c *Client) error { _, err := c.ReadFacts(ctx); return err }, []string{"rabbit@a", "rabbit@b"}, 1},
		{"after the facts (3.10)", "3.10.8", nodes, func(c *Client) error { _, err := c.ReadFacts(ctx); return err }, []string{"rabbit@a", "rabbit@b"}, 1},
		{"after the nodes that run (3.10)", "3.10.8", nodes, func(c *Client) error { _, err := c.nodesUp(ctx); return err }, []string{"rabbit@a", "rabbit@b"}, 1},
		// 4.0+ needs not the nodes that run: nothing listed, ClusterNodes asks.
		{"after the nodes that run (4.3)", "4.3.6", nodes, func(c *Client) error { _, err := c.nodesUp(ctx); return err }, []string{"rabbit@a", "rabbit@b"}, 1},
		// A user without the monitoring tag: the facts leave the plugins
		// unknown, nothing is kept, and ClusterNodes asks and has none.
		{"facts refused", "4.3.6", `403 {"error":"not_authorised","reason":"Not monitor user"}`, func(c *Client) error { _, err := c.ReadFacts(ctx); return err }, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, asked := fakeVersionAsked(t, tt.version, `["administrator"]`, map[string]string{"/api/nodes": tt.nodes})
			if tt.before != nil {
				if err := tt.before(c); err != nil {
					t.Fatal(err)
				}
			}
			got := c.ClusterNodes(ctx)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ClusterNodes (-want +got):\n%s", diff)
			}
			if n := len(slices.DeleteFunc(asked(), func(p string) bool { return p != "/api/nodes" })); n != tt.asked {
				t.Errorf("GET /api/nodes asked %d times, want %d: %v", n, tt.asked, asked())
			}
		})
	}
}
