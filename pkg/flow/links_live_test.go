package flow

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestFederationLinkGoneAgainstBroker checks what a removed federation
// upstream's Link says on the broker of the run, the upstream being
// another exchange (or queue) of the test's vhost: an exchange's link
// consumes from a queue it declares on the upstream ("federation: origin
// -> node:vhost:fx"), which the broker deletes with the link, with what
// it holds, unless the upstream's resource-cleanup-mode is never, which
// keeps it; a queue's link consumes from the upstream's own queue, which
// keeps its messages. The same on 4.3.6, 4.0.5 and 3.10.8
// (rabbit_federation_exchange_link terminate at v4.3.5, v4.0.5, v3.10.8).
// Before, the flows said what the upstream held for an exchange's link
// stayed there.
func TestFederationLinkGoneAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	for _, tc := range []struct {
		name    string
		cleanup string // the upstream's resource-cleanup-mode ("": the default)
		queues  bool   // federate a queue, not an exchange
		kept    bool   // the upstream keeps the queue the link consumed from
		effect  string // in the Link's Effect
	}{
		{name: "exchange", effect: `is deleted with the link, with the messages it holds not yet federated (resource-cleanup-mode never would keep it); a link that is not running then (still starting, or reconnecting) leaves it there`},
		{name: "exchange, resource-cleanup-mode never", cleanup: "never", kept: true, effect: `stays there (resource-cleanup-mode never)`},
		{name: "queue", queues: true, kept: true, effect: `each federated queue's namesake on the upstream keeps what it holds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vh := b.Vhost(t)
			api := func(method, path string, body any) {
				t.Helper()
				var raw []byte
				if body != nil {
					var err error
					if raw, err = json.Marshal(body); err != nil {
						t.Fatal(err)
					}
				}
				status, answer, err := b.API(method, path, raw)
				// RabbitMQ's federation plugin (3.10.8 and 4.3.6 alike) can
				// answer a parameter's change with 500 when another vhost's
				// link stops at that moment (rabbit_federation_link_sup:stop/3,
				// badmatch {error,not_found}): asked again, the change is
				// made, or was (a DELETE then finds nothing).
				for try := 1; err == nil && status == http.StatusInternalServerError && try < 3; try++ {
					time.Sleep(200 * time.Millisecond)
					if status, answer, err = b.API(method, path, raw); method == http.MethodDelete && status == http.StatusNotFound {
						status = http.StatusNoContent
					}
				}
				if err != nil || status >= 300 {
					t.Fatalf("%s /api/%s: %d %s %v", method, path, status, answer, err)
				}
			}
			v := url.PathEscape(vh)
			up := map[string]any{"uri": b.AMQPURL(vh)}
			objs := []obj{}
			var policy map[string]any
			if tc.queues {
				up["queue"] = "origin"
				api(http.MethodPut, "queues/"+v+"/origin", map[string]any{"durable": true})
				api(http.MethodPut, "queues/"+v+"/fq", map[string]any{"durable": true})
				policy = map[string]any{"pattern": "^fq$", "apply-to": "queues", "definition": map[string]any{"federation-upstream": "up"}}
				objs = append(objs, queue("origin", nil), queue("fq", nil), federationPolicy("fed", "^fq$", "queues"))
			} else {
				up["exchange"] = "origin"
				api(http.MethodPut, "exchanges/"+v+"/origin", map[string]any{"type": "fanout", "durable": true})
				api(http.MethodPut, "exchanges/"+v+"/fx", map[string]any{"type": "fanout", "durable": true})
				policy = map[string]any{"pattern": "^fx$", "apply-to": "exchanges", "definition": map[string]any{"federation-upstream": "up"}}
				objs = append(objs, exchange("origin", "fanout", nil), exchange("fx", "fanout", nil), federationPolicy("fed", "^fx$", "exchanges"))
			}
			settings := topology.Args{"uri": b.AMQPURL(vh)}
			if tc.cleanup != "" {
				up["resource-cleanup-mode"] = tc.cleanup
				settings["resource-cleanup-mode"] = tc.cleanup
			}
			api(http.MethodPut, "parameters/federation-upstream/"+v+"/up", map[string]any{"value": up})
			api(http.MethodPut, "policies/"+v+"/fed", policy)

			// What the link consumes from on the upstream: the queue an
			// exchange's link declares there, or the upstream queue.
			linkQueue := func() string {
				if tc.queues {
					return "origin"
				}
				for _, q := range queueNames(t, b, vh) {
					if strings.HasPrefix(q, "federation: origin -> ") {
						return q
					}
				}
				return ""
			}
			// Running: a link still starting is killed without cleaning
			// up (it traps exits only once set up), which the flows say.
			var consumed string
			waitFor(t, "a running federation link", func() bool {
				consumed = linkQueue()
				return consumed != "" && runningLinks(t, b, vh) > 0
			})
			// A message the upstream holds for the link: published to the
			// queue it consumes from (nothing consumes fq, so a queue's
			// link moves none of it).
			ch := b.Channel(t, vh)
			if dc, err := ch.PublishWithDeferredConfirm("", consumed, false, false, amqp.Publishing{Body: []byte("held")}); err != nil || !dc.Wait() {
				t.Fatalf("publish to %q: %v", consumed, err)
			}

			d := Compare(topo(append(objs, upstream("up", settings))...), topo(objs...), Options{})
			if len(d.Links) != 1 || !strings.Contains(d.Links[0].Effect, tc.effect) {
				t.Fatalf("links: %s\nwant one whose effect says %q", show(t, d.Links), tc.effect)
			}

			api(http.MethodDelete, "parameters/federation-upstream/"+v+"/up", nil)
			waitFor(t, "the link to stop", func() bool { return linkCount(t, b, vh) == 0 })
			if tc.kept {
				// The link is gone: what it left is settled.
				if !hasQueue(t, b, vh, consumed) {
					t.Errorf("RabbitMQ %s deleted queue %q with the link; the flows say it keeps it", b.Version(), consumed)
				}
				return
			}
			waitFor(t, fmt.Sprintf("queue %q to go with the link", consumed), func() bool { return !hasQueue(t, b, vh, consumed) })
		})
	}
}

// federationPolicy federates the objects of pattern from upstream "up".
func federationPolicy(name, pattern, applyTo string) obj {
	return policy(name, pattern, applyTo, topology.Args{"federation-upstream": "up"})
}

// queueNames lists the queues of vhost vh.
func queueNames(t *testing.T, b *testbroker.Broker, vh string) []string {
	t.Helper()
	var qs []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b.GetAPI(t, "queues/"+url.PathEscape(vh)+"?columns=name"), &qs); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, q := range qs {
		out = append(out, q.Name)
	}
	return out
}

// hasQueue reports whether vhost vh has queue q.
func hasQueue(t *testing.T, b *testbroker.Broker, vh, q string) bool {
	t.Helper()
	return slices.Contains(queueNames(t, b, vh), q)
}

// runningLinks counts the federation links of vhost vh whose status is
// running.
func runningLinks(t *testing.T, b *testbroker.Broker, vh string) int {
	t.Helper()
	var links []struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(b.GetAPI(t, "federation-links/"+url.PathEscape(vh)), &links); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range links {
		if l.Status == "running" {
			n++
		}
	}
	return n
}

// linkCount counts the federation links of vhost vh, whatever their
// state (rabbitmq_federation_management).
func linkCount(t *testing.T, b *testbroker.Broker, vh string) int {
	t.Helper()
	var links []json.RawMessage
	if err := json.Unmarshal(b.GetAPI(t, "federation-links/"+url.PathEscape(vh)), &links); err != nil {
		t.Fatal(err)
	}
	return len(links)
}

// waitFor waits (at most 30 s) until done, and fails the test after.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}
