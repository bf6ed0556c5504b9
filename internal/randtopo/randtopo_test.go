package randtopo

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

func yamlOf(t *testing.T, c *Case) string {
	t.Helper()
	var buf bytes.Buffer
	if err := export.WriteYAML(&buf, c.Topology(), export.Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A seed names one case: a failure printed with its seed can be rerun.
func TestGenerateIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		a, b := Generate(seed, "v", 40), Generate(seed, "v", 40)
		if ya, yb := yamlOf(t, a), yamlOf(t, b); ya != yb {
			t.Fatalf("seed %d: two topologies:\n%s\n---\n%s", seed, ya, yb)
		}
		if !reflect.DeepEqual(a.Messages, b.Messages) {
			t.Fatalf("seed %d: two message lists", seed)
		}
	}
	if yamlOf(t, Generate(1, "v", 1)) == yamlOf(t, Generate(2, "v", 1)) {
		t.Errorf("seeds 1 and 2 give the same topology")
	}
}

// The YAML printed with a disagreement must reproduce the case: it loads
// as an mqctl file into the same topology.
func TestGeneratedYAMLLoadsBack(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		c := Generate(seed, "v", 0)
		y := yamlOf(t, c)
		got, err := loader.LoadBytes("case.yaml", []byte(y), loader.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, y)
		}
		p := plan.Diff(got, plan.Current{Live: topology.Live{State: c.Topology()}})
		for _, ch := range p.Changes {
			t.Errorf("seed %d: loading the YAML back changes %s %s %q", seed, ch.Action, ch.Kind, ch.Name)
		}
	}
}

// The CI run (seeds 1–60, 40 messages each) covers everything the
// differential test is meant to prove.
func TestGenerateCoversTheFeatures(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 60; seed++ {
		c := Generate(seed, "v", 40)
		v := c.Vhost
		for _, x := range v.Exchanges {
			seen["exchange "+x.Type] = true
			if x.Internal {
				seen["internal exchange"] = true
			}
			if x.Arguments.Has("alternate-exchange") {
				seen["alternate exchange argument"] = true
			}
		}
		for _, q := range v.Queues {
			seen["queue "+q.Type] = true
			dlx, hasDLX := q.Arguments.String("x-dead-letter-exchange")
			switch {
			case hasDLX && q.Arguments.Has("x-dead-letter-routing-key"):
				seen["dead-letter exchange with routing key"] = true
			case hasDLX:
				seen["dead-letter exchange without routing key"] = true
			}
			if hasDLX && dlx == "" {
				seen["dead letters through the default exchange"] = true
			}
			if ttl, ok := q.Arguments.Int("x-message-ttl"); ok && ttl < ExpiresAtOnce {
				seen["queue TTL that expires"] = true
			}
			if n, ok := q.Arguments.Int("x-max-length"); ok && n == 0 {
				seen["queue length limit of 0"] = true
			}
		}
		for _, p := range v.Policies {
			for _, k := range p.Definition.Keys() {
				seen["policy "+k] = true
			}
		}
		for _, p := range v.OperatorPolicies {
			for _, k := range p.Definition.Keys() {
				seen["operator policy "+k] = true
			}
		}
		for _, b := range v.Bindings {
			src := "exchange " + (&gen{v: v}).exchangeType(b.Source)
			if b.DestinationType == topology.DestExchange {
				seen["exchange-to-exchange binding"] = true
				if reaches(v, b.Destination, b.Source) {
					seen["exchange binding cycle"] = true
				}
			}
			switch src {
			case "exchange topic":
				for _, w := range strings.Split(b.RoutingKey, ".") {
					if w == "*" || w == "#" || w == "" {
						seen["topic pattern word "+fmt.Sprintf("%q", w)] = true
					}
				}
				switch hashes, stars := topicWildcards(b.RoutingKey); {
				case hashes == 2 && stars > 0:
					seen["topic pattern with two # and a *"] = true
				case hashes == 2:
					seen["topic pattern with two #"] = true
				case hashes == 1 && stars > 0:
					seen["topic pattern with # and *"] = true
				}
			case "exchange headers":
				m, _ := b.Arguments.String("x-match")
				seen["headers x-match "+fmt.Sprintf("%q", m)] = true
				for _, val := range b.Arguments {
					switch val.(type) {
					case nil:
						seen["headers void criterion"] = true
					case []any:
						seen["headers array criterion"] = true
					}
				}
			}
		}
		for _, m := range c.Messages {
			switch {
			case m.Exchange == "":
				seen["publish to the default exchange"] = true
			case m.Exchange == MissingExchange:
				seen["publish to a missing exchange"] = true
			case v.Exchanges[m.Exchange] != nil && v.Exchanges[m.Exchange].Internal:
				seen["publish to an internal exchange"] = true
			}
			if strings.Contains(m.RoutingKey, "..") || strings.HasPrefix(m.RoutingKey, ".") || strings.HasSuffix(m.RoutingKey, ".") {
				seen["routing key with an empty word"] = true
			}
			if m.Expiration == "0" {
				seen["per-message expiration"] = true
			}
			for k, val := range m.Headers {
				switch k {
				case "CC", "BCC":
					seen[fmt.Sprintf("%s header %T", k, val)] = true
				default:
					seen[fmt.Sprintf("header value %T", val)] = true
				}
			}
		}
	}
	want := []string{
		"exchange direct", "exchange fanout", "exchange topic", "exchange headers", "internal exchange",
		"alternate exchange argument", "policy alternate-exchange",
		"queue classic", "queue quorum",
		"dead-letter exchange with routing key", "dead-letter exchange without routing key", "dead letters through the default exchange",
		"policy dead-letter-exchange", "policy dead-letter-routing-key", "policy message-ttl", "queue TTL that expires",
		"queue length limit of 0", "policy max-length", "policy queue-mode", "operator policy message-ttl", "operator policy max-length",
		"exchange-to-exchange binding", "exchange binding cycle",
		`topic pattern word "*"`, `topic pattern word "#"`, `topic pattern word ""`,
		"topic pattern with two #", "topic pattern with # and *", "topic pattern with two # and a *",
		`headers x-match ""`, `headers x-match "all"`, `headers x-match "any"`, `headers x-match "all-with-x"`, `headers x-match "any-with-x"`,
		"headers void criterion", "headers array criterion",
		"CC header []interface {}", "BCC header []interface {}", "CC header string",
		"publish to the default exchange", "publish to a missing exchange", "publish to an internal exchange",
		"routing key with an empty word", "per-message expiration",
		"header value string", "header value int32", "header value int64", "header value float64", "header value float32",
		"header value bool", "header value <nil>", "header value []interface {}",
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no case of the CI run has: %s", w)
		}
	}
}

// No generated topic binding key has more than two # words: RabbitMQ
// 4.3.5+ refuses them, and so does mqctl's lint on every version.
func TestGeneratedTopicKeysHaveAtMostTwoHashes(t *testing.T) {
	for seed := uint64(1); seed <= 5000; seed++ {
		c := Generate(seed, "v", 0)
		for _, b := range c.Vhost.Bindings {
			if (&gen{v: c.Vhost}).exchangeType(b.Source) != "topic" {
				continue
			}
			if hashes, _ := topicWildcards(b.RoutingKey); hashes > 2 {
				t.Errorf("seed %d: topic binding %s -> %s has the key %q: %d # words, RabbitMQ 4.3.5+ refuses more than two", seed, b.Source, b.Destination, b.RoutingKey, hashes)
			}
		}
	}
}

// topicWildcards counts the # and * words of a topic binding key.
func topicWildcards(key string) (hashes, stars int) {
	for _, w := range splitWords(key) {
		switch w {
		case "#":
			hashes++
		case "*":
			stars++
		}
	}
	return hashes, stars
}

// reaches reports whether exchange from reaches exchange to through
// exchange-to-exchange bindings.
func reaches(v *topology.Vhost, from, to string) bool {
	seen := map[string]bool{}
	work := []string{from}
	for len(work) > 0 {
		x := work[0]
		work = work[1:]
		if x == to {
			return true
		}
		if seen[x] {
			continue
		}
		seen[x] = true
		for _, b := range v.BindingsFrom(x) {
			if b.DestinationType == topology.DestExchange {
				work = append(work, b.Destination)
			}
		}
	}
	return false
}
