package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Placement is where a queue lives in a cluster and whether its home node
// or a majority of its replicas can be reached, as the management API
// reports it.
//
// While a node is stopped, RabbitMQ reports (seen on 3.10.8 and 4.0.5):
//   - a classic queue whose home node it is: both list it with its node
//     and state "down"; 3.10 answers 404 to GET of it, leaves its bindings
//     out of every listing and refuses to bind it ("home node … is down or
//     inaccessible"); 4.0 answers GET with state "stopped" and no
//     statistics, lists its bindings, binds it, and deletes it when asked,
//     force-deleting the messages waiting on the stopped node's disk.
//   - a quorum queue that keeps a majority of its members: a leader among
//     the members online and state "running" (3.10 reports neither state
//     nor node until the new leader reports its statistics).
//   - a quorum queue without a majority: 4.0 state "minority" (the leader
//     still named on the stopped node), 3.10 no state and no leader; both
//     list its members and those online, report no messages, and delete it
//     when asked (forcing it after a timeout), messages and all.
//   - a stream without a majority: 4.0 as a quorum queue ("minority");
//     3.10 reports only the writer's node (no state, no members).
type Placement struct {
	Name  string
	Type  string // classic, quorum or stream
	State string // as reported: running, down, stopped, minority, … (may be empty)
	// Node is a classic queue's home node. RabbitMQ also reports the
	// leader's node here for a quorum queue.
	Node string
	// Down is true while a classic queue's home node is stopped: the
	// queue and its messages are on that node's disk (state "down" in a
	// listing, "stopped" from GET on 4.0).
	Down bool
	// Leader, Members and Online describe a quorum queue's (or stream's)
	// replicas: Online are the members reachable now.
	Leader  string
	Members []string
	Online  []string
	// NoServer are the members of a quorum queue whose node runs but
	// where no Raft server of the queue is registered, where the version
	// tells (rmqversion ListsServersOnline: 3.10); they are in Online,
	// which is about nodes. Nil elsewhere.
	NoServer []string
	// Stats is the queue's depth and consumers where the listing carried
	// them (QueuePlacements before 4.0, which lists with statistics
	// anyway); nil otherwise.
	Stats *QueueStats
	// Depth is the queue's depth where the listing carried the queue
	// totals without the statistics (QueuePlacements from 4.0): its
	// consumers are not counted there (Depth.Consumers is 0). nil
	// otherwise, and Depth.Known is false for a queue the broker has no
	// totals for yet.
	Depth *QueueStats
	// Owner describes the plugin the broker reports owns the queue
	// (internal_owner, 4.1+: it refuses to let clients delete the queue),
	// as Live.Owned does; "" for none. A read from the definitions
	// (SourceDefinitions) has no owners: the placements of the queues a
	// plan would delete or replace give theirs.
	Owner string
}

// NoMajority reports whether a quorum queue or stream has lost the
// majority of its members: the broker says "minority" (4.0), or half or
// fewer of the members it lists are online.
func (p Placement) NoMajority() bool {
	if p.Type != "quorum" && p.Type != "stream" {
		return false
	}
	if p.State == "minority" {
		return true
	}
	if len(p.Members) == 0 {
		return false
	}
	online := 0
	for _, m := range p.Members {
		for _, o := range p.Online {
			if m == o {
				online++
				break
			}
		}
	}
	return 2*online <= len(p.Members)
}

// Offline are the members of a quorum queue or stream that are not
// online, in the order the broker lists the members.
func (p Placement) Offline() []string {
	var off []string
	for _, m := range p.Members {
		if !slices.Contains(p.Online, m) {
			off = append(off, m)
		}
	}
	return off
}

// HomeNode is a classic queue's home node, "(unknown)" when the broker
// names none.
func (p Placement) HomeNode() string {
	if p.Node == "" {
		return "(unknown)"
	}
	return p.Node
}

// Replicated is the type of a quorum queue or stream, "quorum" when the
// broker names none (3.10 without a majority).
func (p Placement) Replicated() string {
	if p.Type == "" {
		return topology.QueueQuorum
	}
	return p.Type
}

// MembersOnline counts the members of a quorum queue or stream online:
// "1 of its 3 members online (down: n2, n3)".
func (p Placement) MembersOnline() string {
	off := p.Offline()
	down := ""
	if len(off) > 0 {
		down = " (down: " + strings.Join(off, ", ") + ")"
	}
	return fmt.Sprintf("%d of its %d members online%s", len(p.Members)-len(off), len(p.Members), down)
}

type placementJSON struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Node    string   `json:"node"`
	State   string   `json:"state"`
	Leader  string   `json:"leader"`
	Members []string `json:"members"`
	Online  []string `json:"online"`
	// With statistics (placementStatsColumns), or the queue totals
	// (the depth and its ready messages, placementTotalsColumns).
	Messages  *json.Number `json:"messages"`
	Ready     *json.Number `json:"messages_ready"`
	Consumers *json.Number `json:"consumers"`
	// InternalOwner: false, or the owner (4.1+; absent before).
	InternalOwner any `json:"internal_owner"`
}

func (q placementJSON) placement() Placement {
	classic := q.Type == "" || q.Type == "classic"
	return Placement{Name: q.Name, Type: q.Type, State: q.State, Node: q.Node,
		Down:   classic && (q.State == "down" || q.State == "stopped"),
		Leader: q.Leader, Members: q.Members, Online: q.Online, Owner: ownerOf(q.InternalOwner)}
}

const (
	placementColumns = "name,type,node,state,leader,members,online,internal_owner"
	// placementStatsColumns: the same with the depth and consumers, for
	// a listing made with statistics anyway.
	placementStatsColumns = placementColumns + ",messages,messages_ready,consumers"
	// placementTotalsColumns: the same with the depth, for a listing
	// without statistics but with the queue totals (enable_queue_totals),
	// which the broker keeps apart from the statistics and lists in a
	// fraction of their time (at 5,000 queues on 4.3.6: 0.39-0.47 s,
	// against 0.67-1.07 s for the depths and consumers with statistics).
	placementTotalsColumns = placementColumns + ",messages,messages_ready"
)

// QueuePlacement reads where queue name of vhost lives, with one GET
// /api/queues/{vhost}/{name} (no statistics columns). The error wraps
// ErrNotFound when the broker answers 404, which RabbitMQ 3.10 also does
// for a classic queue whose home node is down (QueuePlacements lists it),
// and ErrVhostNotFound when the vhost does not exist.
func (c *Client) QueuePlacement(ctx context.Context, vhost, name string) (Placement, error) {
	var q placementJSON
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost, name),
		query: url.Values{"columns": {placementColumns}},
		op:    fmt.Sprintf("read where queue %q in vhost %q lives", name, vhost), vhost: vhost}, &q); err != nil {
		return Placement{}, err
	}
	up, err := c.nodesUp(ctx)
	if err != nil {
		return Placement{}, err
	}
	p := q.placement()
	p.Online, p.NoServer = membersUp(p.Type, p.Members, p.Online, up)
	return p, nil
}

// nodesUp reads which nodes of the cluster run (GET /api/nodes), where a
// listing's "online" of a quorum queue are the members with a Raft server
// rather than those whose node runs (rmqversion ListsServersOnline, 3.10);
// nil on the other versions, and where the user may not read the nodes
// (the monitoring tag): the listings' "online" then stand as listed.
func (c *Client) nodesUp(ctx context.Context) (map[string]bool, error) {
	if !c.RabbitMQVersion().ListsServersOnline() {
		return nil, nil
	}
	if s, ok := ctx.Value(nodesSnapshotKey{}).(*nodesSnapshot); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.read[c] == nil {
			up, err := c.readNodesUp(ctx)
			if err != nil {
				return nil, err
			}
			if s.read == nil {
				s.read = map[*Client]*map[string]bool{}
			}
			s.read[c] = &up
		}
		return *s.read[c], nil
	}
	return c.readNodesUp(ctx)
}

// WithNodesSnapshot returns ctx under which a client reads which nodes run
// (nodesUp, on 3.10) once, and answers every listing after from that
// reading: a command that lists many vhosts, or one vhost again and again
// while it waits for statistics (status), takes one view of the cluster
// instead of one GET /api/nodes per listing. A failed read is not kept.
func WithNodesSnapshot(ctx context.Context) context.Context {
	return context.WithValue(ctx, nodesSnapshotKey{}, &nodesSnapshot{})
}

type nodesSnapshotKey struct{}

// nodesSnapshot is nodesUp's reading per client under WithNodesSnapshot.
type nodesSnapshot struct {
	mu   sync.Mutex
	read map[*Client]*map[string]bool
}

// readNodesUp is nodesUp's request.
func (c *Client) readNodesUp(ctx context.Context) (map[string]bool, error) {
	nodes, err := c.listNodes(ctx, "name,running", "read which nodes of the cluster run")
	var ae *APIError
	if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	up := map[string]bool{}
	for _, n := range nodes {
		if n.Running {
			up[n.Name] = true
		}
	}
	return up, nil
}

// ClusterNodes lists the names of the cluster's nodes, running or not
// (GET /api/nodes); nil where they cannot be read (a user without the
// monitoring tag, a failed request). A client that has listed the nodes
// already (ReadFacts, nodesUp) answers from that listing: the cluster's
// members do not change within a command.
func (c *Client) ClusterNodes(ctx context.Context) []string {
	c.nodesMu.Lock()
	listed := c.nodeNames
	c.nodesMu.Unlock()
	if listed != nil {
		return slices.Clone(listed)
	}
	nodes, err := c.listNodes(ctx, "name", "read the cluster's nodes")
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

// nodeJSON is a node of GET /api/nodes, with the columns asked for.
type nodeJSON struct {
	Name           string   `json:"name"`
	Running        bool     `json:"running"`
	EnabledPlugins []string `json:"enabled_plugins"`
	Applications   []struct {
		Name string `json:"name"`
	} `json:"applications"`
}

// listNodes is every listing of the cluster's nodes (GET /api/nodes) with
// columns (which include name), op naming it in errors; it keeps the
// nodes' names for ClusterNodes.
func (c *Client) listNodes(ctx context.Context, columns, op string) ([]nodeJSON, error) {
	var nodes []nodeJSON
	if err := c.do(ctx, &request{method: http.MethodGet, path: "nodes", query: url.Values{"columns": {columns}}, op: op}, &nodes); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	c.nodesMu.Lock()
	c.nodeNames = names
	c.nodesMu.Unlock()
	return nodes, nil
}

// membersUp reads the members of a quorum queue of type typ that a 3.10
// listing gives online (listed: those with a Raft server) against the
// nodes that run (up, from nodesUp): online are the members whose node
// runs, as from 4.0, and noServer those of them the listing leaves out,
// where no Raft server of the queue runs. With up nil (another version,
// or the nodes unread), or another type, online is listed.
func membersUp(typ string, members, listed []string, up map[string]bool) (online, noServer []string) {
	if up == nil || typ != topology.QueueQuorum {
		return listed, nil
	}
	for _, m := range members {
		if !up[m] {
			continue
		}
		online = append(online, m)
		if !slices.Contains(listed, m) {
			noServer = append(noServer, m)
		}
	}
	return online, noServer
}

// FindQueuePlacement is QueuePlacement with found false for a queue the
// broker does not have, and the placement of a classic queue whose home
// node is down on RabbitMQ 3.10, which answers 404 for it: its listing
// holds it.
func (c *Client) FindQueuePlacement(ctx context.Context, vhost, name string) (p Placement, found bool, err error) {
	p, err = c.QueuePlacement(ctx, vhost, name)
	if errors.Is(err, ErrNotFound) && !errors.Is(err, ErrVhostNotFound) {
		all, err := c.QueuePlacements(ctx, vhost, nil)
		if err != nil {
			return Placement{}, false, err
		}
		p, found = all[name]
		return p, found, nil
	}
	if err != nil {
		return Placement{}, false, err
	}
	return p, true, nil
}

// QueuePlacements lists where every queue of vhost lives, with one GET
// /api/queues/{vhost}: without the statistics where the version still
// reports placements then (rmqversion.Version.PlacementsWithoutStats),
// and with the depth of each queue from the queue totals
// (Placement.Depth) when depthOf names queues; otherwise with them, and
// then with each queue's depth and consumers too (Placement.Stats), which
// the listing computes anyway. The error wraps ErrVhostNotFound when the
// vhost does not exist.
//
// The listing with the queue totals leaves out the queues whose totals
// the broker cannot read: 3.10.8, 4.0.5 and 4.3.6 all leave out a quorum
// queue without a majority (internal/testcluster). When a queue of depthOf is
// not in it, the queues are listed once more without the totals, and
// those the first listing left out come from that one (without a depth):
// a queue left out must not read as a queue that does not exist.
func (c *Client) QueuePlacements(ctx context.Context, vhost string, depthOf []string) (map[string]Placement, error) {
	out := map[string]Placement{}
	if err := c.EachQueuePlacement(ctx, vhost, depthOf, func(p Placement) { out[p.Name] = p }); err != nil {
		return nil, err
	}
	return out, nil
}

// EachQueuePlacement is QueuePlacements handing each queue's placement
// to fn as the listing is read, instead of a map of them all: a caller
// that keeps a little of a few queues holds no more than that (a plan
// replacing 25,000 queues held the listing's 25,000 elements and a map
// of their placements, 8-10 MB, at the peak of its memory). A queue
// comes once, but for a listing read again after its answer was cut
// short: it comes again then, and the later reading stands.
func (c *Client) EachQueuePlacement(ctx context.Context, vhost string, depthOf []string, fn func(Placement)) error {
	withStats := !c.RabbitMQVersion().PlacementsWithoutStats()
	if len(depthOf) == 0 || withStats {
		return c.listPlacements(ctx, vhost, withStats, false, fn)
	}
	listed := map[string]struct{}{}
	err := c.listPlacements(ctx, vhost, false, true, func(p Placement) {
		listed[p.Name] = struct{}{}
		fn(p)
	})
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(depthOf, func(name string) bool { _, ok := listed[name]; return !ok }) {
		return nil
	}
	return c.listPlacements(ctx, vhost, false, false, func(p Placement) {
		if _, ok := listed[p.Name]; !ok {
			fn(p)
		}
	})
}

// eachOf decodes a list answer element by element, handing each to fn,
// leniently (see definitions.EachListElement), as listOf does into a
// list. An answer read again after it was cut short hands its elements
// to fn again.
type eachOf[T any] struct{ fn func(T) }

func (l eachOf[T]) decodeStream(dec *json.Decoder) error {
	return definitions.EachListElement(dec, l.fn)
}

// listPlacements is one listing of EachQueuePlacement: with the
// statistics (withStats), else with the queue totals (depth) or neither.
func (c *Client) listPlacements(ctx context.Context, vhost string, withStats, depth bool, fn func(Placement)) error {
	query := url.Values{"columns": {placementColumns}, "disable_stats": {"true"}}
	switch {
	case withStats:
		query = url.Values{"columns": {placementStatsColumns}}
	case depth:
		query = url.Values{"columns": {placementTotalsColumns}, "disable_stats": {"true"}, "enable_queue_totals": {"true"}}
	}
	// Which nodes run is read before the listing (it was after), so that
	// each queue is handed on as it is read.
	up, err := c.nodesUp(ctx)
	if err != nil {
		return err
	}
	return c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost),
		query: query,
		op:    fmt.Sprintf("list the queues of vhost %q and their nodes", vhost), vhost: vhost}, eachOf[placementJSON]{func(q placementJSON) {
		p := q.placement()
		p.Online, p.NoServer = membersUp(p.Type, p.Members, p.Online, up)
		st := depthJSON{Name: q.Name, Messages: q.Messages, Ready: q.Ready, Consumers: q.Consumers}.stats()
		switch {
		case withStats:
			p.Stats = &st
		case depth:
			st.Consumers = 0 // not counted in the totals
			p.Depth = &st
		}
		fn(p)
	}})
}
