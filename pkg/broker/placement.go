package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// Placement is where a queue lives in a cluster, as GET /api/queues/{vhost}
// reports it (RabbitMQ 3.10).
type Placement struct {
	Name string
	Type string // classic, quorum or stream
	// Node is a classic queue's home node. RabbitMQ also reports the
	// leader's node here for a quorum queue.
	Node string
	// Down is true while a classic queue's home node is stopped: the queue
	// and its messages are on that node's disk, the broker lists the queue
	// with state "down", answers 404 to GET/DELETE of it, refuses to
	// declare or bind it ("home node … is down or inaccessible"), and hides
	// its bindings from every listing and definitions export until the
	// node is back.
	Down bool
	// Leader, Members and Online describe a quorum queue's (or stream's)
	// replicas: Online are the members reachable now.
	Leader  string
	Members []string
	Online  []string
}

type placementJSON struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Node    string   `json:"node"`
	State   string   `json:"state"`
	Leader  string   `json:"leader"`
	Members []string `json:"members"`
	Online  []string `json:"online"`
}

const placementColumns = "name,type,node,state,leader,members,online"

// QueuePlacements lists where every queue of vhost lives, with one GET
// /api/queues/{vhost} (no statistics columns). The error wraps
// ErrVhostNotFound when the vhost does not exist.
func (c *Client) QueuePlacements(ctx context.Context, vhost string) (map[string]Placement, error) {
	var list []placementJSON
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost),
		query: url.Values{"columns": {placementColumns}},
		op:    fmt.Sprintf("list the queues of vhost %q and their nodes", vhost), vhost: vhost}, listOf[placementJSON]{&list}); err != nil {
		return nil, err
	}
	out := make(map[string]Placement, len(list))
	for _, q := range list {
		out[q.Name] = Placement{Name: q.Name, Type: q.Type, Node: q.Node, Down: q.State == "down",
			Leader: q.Leader, Members: q.Members, Online: q.Online}
	}
	return out, nil
}
