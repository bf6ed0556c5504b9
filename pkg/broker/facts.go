package broker

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// ReadFacts reads what the broker reports about itself that mqctl judges
// a file by, once per client: the deprecated features it denies (GET
// /api/deprecated-features, whose "state" 4.3 gives and 4.0.5 leaves
// out; 3.10 has no such endpoint), the exchange types it offers (GET
// /api/overview), its feature flags (GET /api/feature-flags) and the
// plugins running on every node that runs (GET /api/nodes). What the
// user may not read, or the version does not report, stays unknown: the
// version's table judges it. From then on RabbitMQVersion carries them
// (rmqversion.Version.WithFacts).
//
// A call while another reads waits for that read (a plan reads the facts
// beside the state and needs them before the state is in) and reads
// again only if that read failed.
func (c *Client) ReadFacts(ctx context.Context) (*rmqversion.Facts, error) {
	c.factsMu.Lock()
	if c.facts != nil {
		defer c.factsMu.Unlock()
		return c.facts, nil
	}
	if under := c.factsRead; under != nil {
		c.factsMu.Unlock()
		select {
		case <-under:
			return c.ReadFacts(ctx)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	done := make(chan struct{})
	c.factsRead = done
	c.factsMu.Unlock()
	defer func() {
		c.factsMu.Lock()
		c.factsRead = nil
		c.factsMu.Unlock()
		close(done)
	}()
	var a factAnswers
	if err := a.read(ctx, c); err != nil {
		return nil, err
	}
	f := a.facts()
	c.factsMu.Lock()
	defer c.factsMu.Unlock()
	c.facts = f
	return f, nil
}

// factAnswers are the broker's answers the facts are read from, each
// with its error.
type factAnswers struct {
	overview struct {
		ExchangeTypes []struct {
			Name string `json:"name"`
		} `json:"exchange_types"`
	}
	deprecated []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	flags []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	nodes []nodeJSON
	errs  [4]error
}

// read asks for the four answers at once: a plan waits for them, and on a
// busy node one at a time took longer than the vhost's own definitions
// read beside them. An answer that refuses (404: no such endpoint before
// 3.13, 3.10.8 answers 406 through this client; 401/403: a user who may
// not read it) leaves its facts unknown; no answer at all is an error,
// and so is any failure of the overview, which every version has.
func (a *factAnswers) read(ctx context.Context, c *Client) error {
	reads := [3]*request{
		{method: http.MethodGet, path: "overview", query: url.Values{"columns": {"exchange_types"}, "disable_stats": {"true"}}, op: "read the broker's exchange types"},
		{method: http.MethodGet, path: "deprecated-features", op: "read the broker's deprecated features"},
		{method: http.MethodGet, path: "feature-flags", op: "read the broker's feature flags"},
	}
	into := [3]any{&a.overview, &a.deprecated, &a.flags}
	var wg sync.WaitGroup
	for i := range reads {
		wg.Go(func() { a.errs[i] = c.do(ctx, reads[i], into[i]) })
	}
	wg.Go(func() {
		a.nodes, a.errs[3] = c.listNodes(ctx, "name,running,enabled_plugins,applications", "read the broker's plugins")
	})
	wg.Wait()
	if a.errs[0] != nil {
		return a.errs[0]
	}
	for _, err := range a.errs[1:] {
		var ae *APIError
		if err != nil && !(errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500) {
			return err
		}
	}
	return nil
}

// facts are what the answers say.
func (a *factAnswers) facts() *rmqversion.Facts {
	f := &rmqversion.Facts{}
	for _, t := range a.overview.ExchangeTypes {
		f.ExchangeTypes = append(f.ExchangeTypes, t.Name)
	}
	if a.errs[1] == nil {
		for _, d := range a.deprecated {
			switch d.State {
			case "denied":
				f.Denied = setFact(f.Denied, d.Name, true)
			case "permitted":
				f.Denied = setFact(f.Denied, d.Name, false)
			}
		}
	}
	if a.errs[2] == nil {
		f.FeatureFlags = map[string]bool{}
		for _, fl := range a.flags {
			f.FeatureFlags[fl.Name] = fl.State == "enabled"
		}
	}
	if a.errs[3] == nil {
		f.Plugins = pluginsEverywhere(a.nodes)
	}
	f.Sort()
	return f
}

// pluginsEverywhere are the plugins running on every node of nodes that
// runs (a node that is down reports none): what the cluster can be
// counted on for whichever node a request reaches. A node's plugins are
// the rabbitmq_* applications it runs (GET /api/nodes applications: those
// enabled and those they depend on, such as rabbitmq_federation_common
// from 4.2), or, where it does not list them, those enabled. The first
// node listed alone named a plugin enabled there only (and missed one
// enabled on every node but that one). nil when no node runs.
func pluginsEverywhere(nodes []nodeJSON) []string {
	var out []string
	first := true
	for _, n := range nodes {
		if !n.Running {
			continue
		}
		plugins := n.EnabledPlugins
		if len(n.Applications) > 0 {
			plugins = nil
			for _, a := range n.Applications {
				if strings.HasPrefix(a.Name, "rabbitmq_") {
					plugins = append(plugins, a.Name)
				}
			}
		}
		if first {
			out, first = append([]string{}, plugins...), false
			continue
		}
		out = slices.DeleteFunc(out, func(p string) bool { return !slices.Contains(plugins, p) })
	}
	return out
}

func setFact(m map[string]bool, k string, v bool) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = v
	return m
}
