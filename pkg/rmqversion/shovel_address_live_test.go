package rmqversion_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/kind"
)

// TestAMQP10AddressesAgainstBroker: an amqp10 shovel whose address the
// offline check refuses never runs, and one it takes runs, on the broker
// of the run (both ends on the broker's own AMQP 1.0 listener, in a vhost
// with queue q1, "a b" and direct exchange x1). The broker takes every
// address when the shovel is written; only the shovel's state tells:
// 4.3.6 terminates a refused one (bad_address, bad_address_string,
// not-found), 4.0.5 keeps starting it again. 3.10.8 reads only address v1
// (/queue/q1 …), so no v2 address runs there: the check, judging the v2
// form, takes the well-formed ones all the same (another broker of the
// file's target may be the peer).
func TestAMQP10AddressesAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	raw := b.Vhost(t)
	vh := url.PathEscape(raw)
	for path, body := range map[string]string{
		"queues/" + vh + "/q1":         `{"durable":true}`,
		"queues/" + vh + "/a%20b":      `{"durable":true}`,
		"exchanges/" + vh + "/x1":      `{"type":"direct","durable":true}`,
		"exchanges/" + vh + "/x1%20y1": `{"type":"direct","durable":true}`,
	} {
		if status, msg := send(t, b, http.MethodPut, "/api/"+path, body); status >= 300 {
			t.Fatalf("PUT %s: %d %s", path, status, msg)
		}
	}
	uri := fmt.Sprintf("amqp://%s@%s:%d?hostname=vhost:%s", url.UserPassword(b.Username, b.Password), b.AMQPHost, b.AMQPPort, url.QueryEscape(raw))
	cases := []struct{ end, addr string }{
		{"src", "/queues/q1"}, {"src", "/queues/a%20b"},
		{"src", "/queues/a b"}, {"src", "/queues/a%2"}, {"src", "/queues/q1/x"}, {"src", "/exchanges/x1"},
		{"dest", "/queues/q1"}, {"dest", "/exchanges/x1"}, {"dest", "/exchanges/x1/k"}, {"dest", "/exchanges/x1%20y1/k"},
		{"dest", "/queues/"}, {"dest", "/exchanges/"}, {"dest", "/exchanges/amq.default"}, {"dest", "/exchanges/x1/k/z"},
		{"dest", "/exchanges/x1 y1/k"}, {"dest", "/exchanges/x1/a%zz"},
	}
	shovels := make([]map[string]any, len(cases))
	for i, c := range cases {
		s := map[string]any{"src-protocol": "amqp10", "src-uri": uri, "src-address": "/queues/q1",
			"dest-protocol": "amqp10", "dest-uri": uri, "dest-address": "/queues/q1"}
		s[c.end+"-address"] = c.addr
		shovels[i] = s
	}
	refused := writeShovels(t, b, vh, shovels)
	// Every shovel the check takes runs on 4.x (3.10.8 reads no v2
	// address); on 4.3 every one it refuses is terminated.
	v4, v43 := b.Version().AtLeast(4, 0), b.Version().AtLeast(4, 3)
	states := settledShovelStates(t, b, vh, refused, v4)
	for i, c := range cases {
		name := fmt.Sprintf("s%d", i)
		runs := states[name] == "running"
		switch {
		case refused[name] && runs:
			t.Errorf("RabbitMQ %s runs shovel %s-address %q, which the offline check refuses", b.Version(), c.end, c.addr)
		case refused[name] && v43 && states[name] != "terminated":
			t.Errorf("RabbitMQ %s: shovel %s-address %q, which the offline check refuses, is %q, not terminated", b.Version(), c.end, c.addr, states[name])
		case !refused[name] && v4 && !runs:
			t.Errorf("RabbitMQ %s does not run shovel %s-address %q (state %q), which the offline check takes", b.Version(), c.end, c.addr, states[name])
		}
	}
}

// writeShovels writes shovels s0, s1, … of vhost vh (escaped) with the
// settings of shovels, each of which the broker must take when written,
// and returns which of them the offline check refuses, by name.
func writeShovels(t *testing.T, b *testbroker.Broker, vh string, shovels []map[string]any) map[string]bool {
	t.Helper()
	refused := map[string]bool{}
	for i, s := range shovels {
		name := fmt.Sprintf("s%d", i)
		refused[name] = len(kind.Shovel.Item().Validate(s)) > 0
		body, _ := json.Marshal(map[string]any{"value": s})
		if status, msg := send(t, b, http.MethodPut, "/api/parameters/shovel/"+vh+"/"+name, string(body)); status >= 300 {
			t.Fatalf("RabbitMQ %s refused shovel %s (%v) when written: %d %s", b.Version(), name, s, status, msg)
		}
	}
	return refused
}

// settledShovelStates waits until every shovel of refused the offline
// check takes runs (when runs says the broker runs them) and, on 4.3,
// every one it refuses is terminated, or 30 s; then it returns their
// states (shovelStates), where none the check refuses may run.
func settledShovelStates(t *testing.T, b *testbroker.Broker, vh string, refused map[string]bool, runs bool) map[string]string {
	t.Helper()
	v43 := b.Version().AtLeast(4, 3)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		states := shovelStates(t, b, vh)
		waiting := false
		for name, r := range refused {
			if (!r && runs && states[name] != "running") || (r && v43 && states[name] != "terminated") {
				waiting = true
			}
		}
		if !waiting || time.Now().After(deadline) {
			return states
		}
	}
}

// shovelStates reads the state of each shovel of vhost vh (escaped).
func shovelStates(t *testing.T, b *testbroker.Broker, vh string) map[string]string {
	t.Helper()
	status, msg := send(t, b, http.MethodGet, "/api/shovels/"+vh, "")
	if status != http.StatusOK {
		t.Fatalf("GET /api/shovels/%s: %d %s", vh, status, msg)
	}
	var list []struct{ Name, State string }
	if err := json.Unmarshal([]byte(msg), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list {
		out[s.Name] = s.State
	}
	return out
}
