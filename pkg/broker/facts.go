package broker

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// ReadFacts reads what the broker reports about itself that mqctl judges
// a file by, once per client: the deprecated features it denies (GET
// /api/deprecated-features, whose "state" 4.3 gives and 4.0.5 leaves
// out; 3.10 has no such endpoint), the exchange types it offers (GET
// /api/overview), its feature flags (GET /api/feature-flags) and the
// plugins enabled on the node that answers (GET /api/nodes). What the
// user may not read, or the version does not report, stays unknown: the
// version's table judges it. From then on RabbitMQVersion carries them
// (rmqversion.Version.WithFacts).
func (c *Client) ReadFacts(ctx context.Context) (*rmqversion.Facts, error) {
	c.factsMu.Lock()
	if c.facts != nil {
		defer c.factsMu.Unlock()
		return c.facts, nil
	}
	c.factsMu.Unlock()
	f := &rmqversion.Facts{}
	// An answer that refuses (404: no such endpoint before 3.13, 3.10.8
	// answers 406 through this client; 401/403: a user who may not read
	// it) leaves the fact unknown; no answer at all is an error.
	unknown := func(err error) bool {
		var ae *APIError
		return errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500
	}

	var ov struct {
		ExchangeTypes []struct {
			Name string `json:"name"`
		} `json:"exchange_types"`
	}
	q := url.Values{"columns": {"exchange_types"}, "disable_stats": {"true"}}
	if err := c.do(ctx, &request{method: http.MethodGet, path: "overview", query: q, op: "read the broker's exchange types"}, &ov); err != nil {
		return nil, err
	}
	if len(ov.ExchangeTypes) > 0 {
		for _, t := range ov.ExchangeTypes {
			f.ExchangeTypes = append(f.ExchangeTypes, t.Name)
		}
	}

	var deprecated []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	switch err := c.do(ctx, &request{method: http.MethodGet, path: "deprecated-features", op: "read the broker's deprecated features"}, &deprecated); {
	case err == nil:
		for _, d := range deprecated {
			switch d.State {
			case "denied":
				f.Denied = setFact(f.Denied, d.Name, true)
			case "permitted":
				f.Denied = setFact(f.Denied, d.Name, false)
			}
		}
	case !unknown(err):
		return nil, err
	}

	var flags []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	switch err := c.do(ctx, &request{method: http.MethodGet, path: "feature-flags", op: "read the broker's feature flags"}, &flags); {
	case err == nil:
		f.FeatureFlags = map[string]bool{}
		for _, fl := range flags {
			f.FeatureFlags[fl.Name] = fl.State == "enabled"
		}
	case !unknown(err):
		return nil, err
	}

	var nodes []struct {
		EnabledPlugins []string `json:"enabled_plugins"`
	}
	nq := url.Values{"columns": {"name,enabled_plugins"}}
	switch err := c.do(ctx, &request{method: http.MethodGet, path: "nodes", query: nq, op: "read the broker's plugins"}, &nodes); {
	case err == nil && len(nodes) > 0:
		f.Plugins = append([]string{}, nodes[0].EnabledPlugins...)
	case err != nil && !unknown(err):
		return nil, err
	}
	f.Sort()

	c.factsMu.Lock()
	defer c.factsMu.Unlock()
	if c.facts == nil {
		c.facts = f
	}
	return c.facts, nil
}

func setFact(m map[string]bool, k string, v bool) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = v
	return m
}
