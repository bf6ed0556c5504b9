// Package testcluster gives tests the three-node RabbitMQ cluster of
// scripts/cluster: its management endpoints and AMQP ports, a fresh vhost per
// test, and the means to stop and start one node in the middle of a test.
//
// Cluster tests run only when MQCTL_CLUSTER=1 (`make cluster-test` sets it);
// otherwise they skip, in CI too. With MQCTL_CLUSTER=1 a cluster that is not
// there, or not whole, fails the test: it is never skipped.
//
// Environment (as `scripts/cluster env` prints it): MQCTL_CLUSTER_SERVERS
// (the management APIs of c1, c2 and c3, comma-separated; default
// http://127.0.0.1:15681,…:15682,…:15683), MQCTL_CLUSTER_AMQP_URLS (their AMQP
// URLs, same order; default amqp://guest:guest@127.0.0.1:5681/ …),
// MQCTL_CLUSTER_HTTPS_SERVERS (their management APIs over HTTPS; default
// https://localhost:15691,…:15692,…:15693), MQCTL_CLUSTER_TLS_DIR (the CA
// the three nodes share; default .cluster/c1/tls in the repository),
// MQCTL_TEST_USERNAME / MQCTL_TEST_PASSWORD (an administrator; default
// guest/guest), MQCTL_CLUSTER_REPO (the checkout whose scripts/cluster
// started the nodes, for a clone tested against a cluster another checkout
// runs: scripts/cluster keeps its nodes' data under its own repository;
// default the repository of the tests). StopNode and StartNode run
// scripts/cluster for the version
// MQCTL_CLUSTER_RABBITMQ_VERSION names (as MQCTL_RABBITMQ_VERSION; 4.0 when
// unset), which reads its own MQCTL_CLUSTER_* port settings from the same
// environment.
package testcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// Defaults: what scripts/cluster starts.
const (
	DefaultServers      = "http://127.0.0.1:15681,http://127.0.0.1:15682,http://127.0.0.1:15683"
	DefaultHTTPSServers = "https://localhost:15691,https://localhost:15692,https://localhost:15693"
	DefaultAMQPURLs     = "amqp://guest:guest@127.0.0.1:5681/,amqp://guest:guest@127.0.0.1:5682/,amqp://guest:guest@127.0.0.1:5683/"
)

// Cluster is the running three-node cluster.
type Cluster struct {
	// Servers are the management API URLs of nodes 1, 2 and 3 (index 0 is
	// node 1).
	Servers []string
	// HTTPSServers are the management APIs over HTTPS, same order; their
	// certificates are signed by TLSDir/ca.pem.
	HTTPSServers []string
	TLSDir       string
	// AMQPURLs are the nodes' AMQP URLs without a vhost (credentials
	// included), e.g. amqp://guest:guest@127.0.0.1:5681/.
	AMQPURLs []string
	// Nodes are the Erlang node names, e.g. mqctl-c1@localhost, as the
	// management API reports them.
	Nodes []string

	Username, Password string

	repo   string
	client *http.Client
}

// Enabled reports whether cluster tests run (MQCTL_CLUSTER=1).
func Enabled() bool { return os.Getenv("MQCTL_CLUSTER") == "1" }

// New returns the cluster, or skips the test unless MQCTL_CLUSTER=1. It
// fails the test when the cluster is not whole: every node must answer and
// see all the nodes running.
func New(t testing.TB) *Cluster {
	t.Helper()
	if !Enabled() {
		t.Skip("cluster test: runs with MQCTL_CLUSTER=1 against the three nodes of scripts/cluster (make cluster-test)")
	}
	c := &Cluster{
		Servers:      split(envOr("MQCTL_CLUSTER_SERVERS", DefaultServers)),
		AMQPURLs:     split(envOr("MQCTL_CLUSTER_AMQP_URLS", DefaultAMQPURLs)),
		HTTPSServers: split(envOr("MQCTL_CLUSTER_HTTPS_SERVERS", DefaultHTTPSServers)),
		Username:     envOr("MQCTL_TEST_USERNAME", "guest"),
		Password:     envOr("MQCTL_TEST_PASSWORD", "guest"),
		client:       &http.Client{Timeout: 30 * time.Second},
	}
	if len(c.Servers) != 3 || len(c.AMQPURLs) != 3 || len(c.HTTPSServers) != 3 {
		t.Fatalf("MQCTL_CLUSTER_SERVERS, MQCTL_CLUSTER_AMQP_URLS and MQCTL_CLUSTER_HTTPS_SERVERS must name 3 nodes each, got %d, %d and %d",
			len(c.Servers), len(c.AMQPURLs), len(c.HTTPSServers))
	}
	repo, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	c.repo = envOr("MQCTL_CLUSTER_REPO", repo)
	c.TLSDir = envOr("MQCTL_CLUSTER_TLS_DIR", filepath.Join(c.repo, ".cluster", "c1", "tls"))
	if err := c.whole(context.Background()); err != nil {
		t.Fatalf("the cluster is not whole: %v\n  start it with scripts/cluster start (scripts/cluster status says which node is missing)", err)
	}
	return c
}

// whole checks that every node answers and sees all three running, and
// fills c.Nodes.
func (c *Cluster) whole(ctx context.Context) error {
	c.Nodes = make([]string, len(c.Servers))
	for i := range c.Servers {
		var ov struct {
			Node string `json:"node"`
		}
		if err := c.get(ctx, i+1, "overview?columns=node", &ov); err != nil {
			return err
		}
		c.Nodes[i] = ov.Node
		running, err := c.Running(ctx, i+1)
		if err != nil {
			return err
		}
		if len(running) != len(c.Servers) {
			return fmt.Errorf("node %d (%s) sees %d running nodes %v, not %d", i+1, ov.Node, len(running), running, len(c.Servers))
		}
	}
	return nil
}

// Running returns the nodes that node n (1-based) reports as running.
func (c *Cluster) Running(ctx context.Context, n int) ([]string, error) {
	var nodes []struct {
		Name    string `json:"name"`
		Running bool   `json:"running"`
	}
	if err := c.get(ctx, n, "nodes?columns=name,running", &nodes); err != nil {
		return nil, err
	}
	var out []string
	for _, x := range nodes {
		if x.Running {
			out = append(out, x.Name)
		}
	}
	return out, nil
}

// Version returns the RabbitMQ version node n reports, e.g. "4.0.5".
func (c *Cluster) Version(ctx context.Context, n int) (string, error) {
	var ov struct {
		Version string `json:"rabbitmq_version"`
	}
	if err := c.get(ctx, n, "overview?columns=rabbitmq_version", &ov); err != nil {
		return "", err
	}
	return ov.Version, nil
}

// Server returns node n's management API URL (n is 1, 2 or 3).
func (c *Cluster) Server(n int) string { return c.Servers[n-1] }

// ServerList returns the management API URLs of the given nodes,
// comma-separated, in that order: the value of --server.
func (c *Cluster) ServerList(nodes ...int) string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = c.Servers[n-1]
	}
	return strings.Join(out, ",")
}

// HTTPSServerList is ServerList over HTTPS.
func (c *Cluster) HTTPSServerList(nodes ...int) string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = c.HTTPSServers[n-1]
	}
	return strings.Join(out, ",")
}

// CACert is the CA that signed the three nodes' server certificates.
func (c *Cluster) CACert() string { return filepath.Join(c.TLSDir, "ca.pem") }

// AMQPURL returns node n's AMQP URL for vhost.
func (c *Cluster) AMQPURL(n int, vhost string) string {
	return strings.TrimRight(c.AMQPURLs[n-1], "/") + "/" + url.PathEscape(vhost)
}

// Node returns node n's Erlang name.
func (c *Cluster) Node(n int) string { return c.Nodes[n-1] }

// Vhost creates a vhost named mqctl-cluster-<test>-<random> through node 1
// (with full permissions for the test user) and deletes it, through any
// running node, when the test ends.
func (c *Cluster) Vhost(t testing.TB) string {
	t.Helper()
	name := testbroker.Name(t, "mqctl-cluster")
	ctx := context.Background()
	t.Cleanup(func() { c.DeleteVhost(t, name) })
	// A node that has not seen the new vhost's record yet fails to start
	// it, and node 1 answers 500 {failed_to_start_vhost_on_nodes,
	// [{Node, {error, {no_such_vhost, …}}}]} (4.3.6, in a cluster just
	// formed: CI on 5e37e1c). The PUT is idempotent: it starts the vhost
	// on the nodes again.
	for try := 1; ; try++ {
		err := c.Do(ctx, 1, http.MethodPut, "vhosts/"+url.PathEscape(name), map[string]any{"description": "mqctl cluster test " + t.Name()}, nil)
		var se *StatusError
		if err != nil && try < 10 && errors.As(err, &se) && se.Status == http.StatusInternalServerError && strings.Contains(se.Body, "failed_to_start_vhost_on_nodes") {
			t.Logf("create vhost %s, try %d: %v; again", name, try, err)
			time.Sleep(time.Duration(try) * 200 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("create vhost %s: %v", name, err)
		}
		break
	}
	perm := map[string]string{"configure": ".*", "write": ".*", "read": ".*"}
	if err := c.Do(ctx, 1, http.MethodPut, "permissions/"+url.PathEscape(name)+"/"+url.PathEscape(c.Username), perm, nil); err != nil {
		t.Fatalf("grant %s permissions on %s: %v", c.Username, name, err)
	}
	return name
}

// FreshVhostName returns a vhost name that does not exist yet (mqctl is to
// create it); the vhost is deleted, if it exists, when the test ends.
func (c *Cluster) FreshVhostName(t testing.TB) string {
	t.Helper()
	name := testbroker.Name(t, "mqctl-cluster")
	t.Cleanup(func() { c.DeleteVhost(t, name) })
	return name
}

// DeleteVhost deletes vhost through the first node that answers; a vhost
// that is not there is fine.
func (c *Cluster) DeleteVhost(t testing.TB, vhost string) {
	t.Helper()
	var errs []error
	for n := 1; n <= len(c.Servers); n++ {
		err := c.Do(context.Background(), n, http.MethodDelete, "vhosts/"+url.PathEscape(vhost), nil, nil)
		var se *StatusError
		if err == nil || (errors.As(err, &se) && se.Status == http.StatusNotFound) {
			return
		}
		errs = append(errs, err)
	}
	t.Errorf("delete test vhost %s: %v", vhost, errors.Join(errs...))
}

// StopNode stops node n with scripts/cluster stop-node and, when the test
// ends, starts it again should the test not have done so (the next test
// needs the whole cluster). Tests that stop nodes must not run in parallel:
// two nodes down would cost the quorum queues their majority.
func (c *Cluster) StopNode(t testing.TB, n int) {
	t.Helper()
	// Registered first, so that a stop that fails half way is undone too.
	t.Cleanup(func() {
		if _, err := c.Running(context.Background(), n); err == nil {
			return
		}
		if out, err := c.script("start-node", strconv.Itoa(n)); err != nil {
			t.Errorf("scripts/cluster start-node %d (after the test): %v\n%s", n, err, out)
		}
	})
	if out, err := c.script("stop-node", strconv.Itoa(n)); err != nil {
		t.Fatalf("scripts/cluster stop-node %d: %v\n%s", n, err, out)
	}
	// The script returns once the node's process is gone: a management API
	// still answering at node n's address means it stopped another cluster.
	if _, err := c.Running(context.Background(), n); err == nil {
		t.Fatalf("scripts/cluster stop-node %d returned, yet %s still answers: the script runs another cluster than the tests (MQCTL_CLUSTER_RABBITMQ_VERSION, MQCTL_CLUSTER_* ports)", n, c.Server(n))
	}
}

// StartNode starts node n again with scripts/cluster start-node, which
// returns once every running node sees it.
func (c *Cluster) StartNode(t testing.TB, n int) {
	t.Helper()
	if out, err := c.script("start-node", strconv.Itoa(n)); err != nil {
		t.Fatalf("scripts/cluster start-node %d: %v\n%s", n, err, out)
	}
}

func (c *Cluster) script(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.repo, "scripts", "cluster"), args...)
	cmd.Dir = c.repo
	// The script picks its cluster by MQCTL_RABBITMQ_VERSION (default 4.3);
	// `scripts/cluster env` names the version of the cluster it describes,
	// and in MQCTL_TEST_CLUSTER_ENV the variables that pin its nodes (port
	// offset, folder, ports): without them a cluster started with
	// MQCTL_PORT_OFFSET given inline was addressed on the default ports.
	cmd.Env = append(os.Environ(), strings.Fields(os.Getenv("MQCTL_TEST_CLUSTER_ENV"))...)
	if v := os.Getenv("MQCTL_CLUSTER_RABBITMQ_VERSION"); v != "" {
		cmd.Env = append(cmd.Env, "MQCTL_RABBITMQ_VERSION="+v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// StatusError is a management API answer other than 2xx.
type StatusError struct {
	Status int
	Body   string
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body) }

// Do sends a request to node n's management API (path relative to /api/,
// segments escaped) and decodes a JSON answer into out when non-nil.
func (c *Cluster) Do(ctx context.Context, n int, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Servers[n-1]+"/api/"+path, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(c.Username, c.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s on node %d: %w", method, path, n, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s on node %d: read the answer: %w", method, path, n, err)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s on node %d: %w", method, path, n, &StatusError{Status: resp.StatusCode, Body: strings.TrimSpace(string(raw))})
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s on node %d: %w", method, path, n, err)
	}
	return nil
}

func (c *Cluster) get(ctx context.Context, n int, path string, out any) error {
	return c.Do(ctx, n, http.MethodGet, path, nil, out)
}

// QueueInfo is what the management API reports about a queue's placement.
type QueueInfo struct {
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Arguments map[string]any `json:"arguments"`
	// Node is a classic queue's home node; Leader, Members and Online
	// describe a quorum queue's replicas.
	Node    string   `json:"node"`
	Leader  string   `json:"leader"`
	Members []string `json:"members"`
	Online  []string `json:"online"`
	// State is "running" (or "live"); while a node is stopped, "down" for
	// a classic queue living there (in a listing: GET answers 404 on 3.10,
	// "stopped" on 4.0), and on 4.0 "minority" for a quorum queue or
	// stream without a majority (3.10 reports no state).
	State string `json:"state"`
}

// Queues lists the queues of vhost as node n reports them.
func (c *Cluster) Queues(ctx context.Context, n int, vhost string) (map[string]QueueInfo, error) {
	var list []QueueInfo
	q := url.Values{"columns": {"name,type,arguments,node,leader,members,online,state"}}
	if err := c.get(ctx, n, "queues/"+url.PathEscape(vhost)+"?"+q.Encode(), &list); err != nil {
		return nil, err
	}
	out := make(map[string]QueueInfo, len(list))
	for _, x := range list {
		out[x.Name] = x
	}
	return out, nil
}

// QueuesWithTotals returns the names of the queues of vhost that node n
// lists with the queue totals and without the statistics
// (disable_stats=true&enable_queue_totals=true), as mqctl lists the
// depths of the queues at stake.
func (c *Cluster) QueuesWithTotals(ctx context.Context, n int, vhost string) ([]string, error) {
	var list []struct {
		Name string `json:"name"`
	}
	q := url.Values{"columns": {"name,messages"}, "disable_stats": {"true"}, "enable_queue_totals": {"true"}}
	if err := c.get(ctx, n, "queues/"+url.PathEscape(vhost)+"?"+q.Encode(), &list); err != nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = x.Name
	}
	slices.Sort(out)
	return out, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the repository for scripts/cluster: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "cluster")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no scripts/cluster above the working directory")
		}
		dir = parent
	}
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, strings.TrimRight(p, "/"))
		}
	}
	return out
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
