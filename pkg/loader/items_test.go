package loader

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
)

func loadVhost(t *testing.T, body string, env map[string]string) (string, error) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  v:\n")
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		sb.WriteString("    " + l + "\n")
	}
	top, err := LoadBytes("t.yaml", []byte(sb.String()), Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		return "", err
	}
	var out []string
	v := top.Vhosts["v"]
	for _, s := range kind.VhostItems() {
		for _, n := range v.Items.Names(s.Kind) {
			it := v.Items.Get(s.Kind, n)
			b, _ := json.Marshal(it)
			out = append(out, string(b))
		}
	}
	return strings.Join(out, "\n"), nil
}

// TestItemsShapes: the file shapes of shovels, upstreams and upstream sets
// decode into the items the broker stores (JSON: secrets masked, the
// variable a secret came from recorded).
func TestItemsShapes(t *testing.T) {
	env := map[string]string{"DC2": "amqp://user:pw@dc2/orders"}
	tests := []struct {
		name, body, want string
	}{
		{
			name: "SPEC §9 example",
			body: `shovels:
  orders-replay: { src-uri: "amqp:///orders", src-queue: orders.dead, dest-uri: "amqp:///orders",
                   dest-exchange: orders, ack-mode: on-confirm, src-delete-after: queue-length }
federation_upstreams:
  dc2: { uri: "${DC2}", expires: 3600000 }
federation_upstream_sets:
  all-dcs: [{ upstream: dc2 }]`,
			want: `{"kind":"shovel","name":"orders-replay","settings":{"ack-mode":"on-confirm","dest-exchange":"orders","dest-uri":"amqp:///orders","src-delete-after":"queue-length","src-queue":"orders.dead","src-uri":"amqp:///orders"},"secret":["src-uri","dest-uri"]}
{"kind":"federation_upstream","name":"dc2","settings":{"expires":3600000,"uri":"amqp://user:***@dc2/orders"},"secret":["uri"],"refs":{"uri":"DC2"}}
{"kind":"federation_upstream_set","name":"all-dcs","settings":{"upstreams":[{"upstream":"dc2"}]}}`,
		},
		{
			name: "lists of URIs, numbers, tables, a count to delete after",
			body: `shovels:
  s: { src-uri: ["amqp://a", "amqp://u:pw@b"], src-queue: q, dest-uri: [], dest-queue: d,
       reconnect-delay: 0.5, src-delete-after: 10, src-queue-args: { x-queue-type: quorum }, dest-add-forward-headers: true }`,
			want: "",
		},
		{
			// RabbitMQ 4.2+: a local shovel, and 4.3's amqp10 keys
			// (src-predeclared and dest-predeclared from 4.3.0,
			// src-consumer-args from 4.3.3), measured on 4.3.6; an older
			// version's refusal is the version table's.
			name: "a local shovel, and an amqp10 one with 4.3's keys",
			body: `shovels:
  l: { src-protocol: local, src-uri: "amqp:///v", src-queue: a, src-consumer-name: mover, src-predeclared: true,
       dest-protocol: local, dest-uri: "amqp://u@anyhost/v", dest-exchange: x, dest-exchange-key: k, dest-add-forward-headers: true }
  t: { src-protocol: amqp10, src-uri: "amqp://h", src-address: /queues/a, src-predeclared: true, src-consumer-args: { x-priority: 1 },
       dest-protocol: amqp10, dest-uri: "amqp://h", dest-address: /queues/b, dest-predeclared: true }`,
			want: `{"kind":"shovel","name":"l","settings":{"dest-add-forward-headers":true,"dest-exchange":"x","dest-exchange-key":"k","dest-protocol":"local","dest-uri":"amqp://u@anyhost/v","src-consumer-name":"mover","src-predeclared":true,"src-protocol":"local","src-queue":"a","src-uri":"amqp:///v"},"secret":["src-uri","dest-uri"]}
{"kind":"shovel","name":"t","settings":{"dest-address":"/queues/b","dest-predeclared":true,"dest-protocol":"amqp10","dest-uri":"amqp://h","src-address":"/queues/a","src-consumer-args":{"x-priority":1},"src-predeclared":true,"src-protocol":"amqp10","src-uri":"amqp://h"},"secret":["src-uri","dest-uri"]}`,
		},
		{
			name: "an upstream set of two members, overrides kept in order",
			body: `federation_upstream_sets:
  s: [{ upstream: b, exchange: x, max-hops: 2 }, { upstream: a }]`,
			want: `{"kind":"federation_upstream_set","name":"s","settings":{"upstreams":[{"exchange":"x","max-hops":2,"upstream":"b"},{"upstream":"a"}]}}`,
		},
		{
			name: "an empty set",
			body: "federation_upstream_sets:\n  s: []",
			want: `{"kind":"federation_upstream_set","name":"s","settings":{"upstreams":[]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadVhost(t, tt.body, env)
			if tt.want == "" {
				// The empty dest-uri list is refused.
				if err == nil || !strings.Contains(err.Error(), "t.yaml:5:") || !strings.Contains(err.Error(), "the list of URIs is empty") {
					t.Fatalf("want the empty list refused at line 5, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEmptyVhostLimitsAreNone: a vhost's limits: {} (or limits: with
// nothing) is no item, as the broker holds a vhost without limits, so a
// plan after apply is empty (it was "+ vhost_limits" every time).
func TestEmptyVhostLimitsAreNone(t *testing.T) {
	for body, want := range map[string]string{
		"limits: {}":                 "",
		"limits:":                    "",
		"limits: { max-queues: 10 }": `{"kind":"vhost_limits","name":"v","settings":{"max-queues":10}}`,
	} {
		got, err := loadVhost(t, body, nil)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got != want {
			t.Errorf("%s: items %q, want %q", body, got, want)
		}
	}
}

// TestItemsErrors: each wrong key, type or value is an error at its
// file:line:col that says what is wrong and how to fix it, and none shows
// a secret.
func TestItemsErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // each a line of the error list
	}{
		{"unknown key, with a suggestion", "shovels:\n  s: { src-uri: \"amqp://\", src-queue: q, dest-uri: \"amqp://\", dest-queu: d }",
			[]string{`t.yaml:5:67: shovel "s": unknown field "dest-queu" (did you mean "dest-queue"?`}},
		{"URI of the wrong type, value not shown", "shovels:\n  s: { src-uri: 12345, src-queue: q, dest-uri: [\"amqp://\", true] }",
			[]string{`t.yaml:5:21: shovel "s": src-uri: expected a string or a list of strings, got an integer`,
				`t.yaml:5:64: shovel "s": dest-uri[1]: expected a string, got a boolean`}},
		{"missing URIs and source", "shovels:\n  s: { dest-queue: d }",
			[]string{`t.yaml:5:10: shovel "s": missing required field "src-uri"`, `t.yaml:5:10: shovel "s": missing required field "dest-uri"`, `t.yaml:5:10: shovel "s": a shovel needs src-queue or src-exchange`}},
		{"enum and delete-after", "shovels:\n  s: { src-uri: \"amqp://\", src-queue: q, dest-uri: \"amqp://\", ack-mode: fast, src-delete-after: later }",
			[]string{`t.yaml:5:77: shovel "s": ack-mode: invalid value "fast" (expected one of: on-confirm, on-publish, no-ack)`,
				`t.yaml:5:101: shovel "s": src-delete-after: invalid value "later" (expected never, queue-length or a number of messages)`}},
		{"no-ack with a count", "shovels:\n  s: { src-uri: \"amqp://\", src-queue: q, dest-uri: \"amqp://\", ack-mode: no-ack, src-delete-after: 5 }",
			[]string{`t.yaml:5:103: shovel "s": src-delete-after: a number of messages to move cannot be counted with ack-mode no-ack`}},
		{"exclusive and other-protocol keys", "shovels:\n  s: { src-uri: \"amqp://\", src-queue: q, src-exchange: x, dest-uri: \"amqp://\", dest-address: a }",
			[]string{`t.yaml:5:60: shovel "s": src-exchange: src-queue and src-exchange exclude each other`,
				`t.yaml:5:98: shovel "s": dest-address: dest-address is not a setting of an amqp091 shovel (dest-protocol amqp091) (remove it, or set dest-protocol: amqp10)`}},
		// Measured on 4.3.6: a local shovel refuses src-prefetch-count
		// and dest-publish-properties ("Unrecognised terms"), and needs
		// src-queue or src-exchange as amqp091 does.
		{"keys a local shovel does not take", "shovels:\n  s: { src-protocol: local, src-uri: \"amqp://\", src-queue: q, src-prefetch-count: 5, dest-protocol: local, dest-uri: \"amqp://\", dest-publish-properties: { delivery_mode: 2 } }",
			[]string{`t.yaml:5:87: shovel "s": src-prefetch-count: src-prefetch-count is not a setting of a local shovel (src-protocol local) (remove it, or set src-protocol: amqp091 or amqp10)`,
				`t.yaml:5:158: shovel "s": dest-publish-properties: dest-publish-properties is not a setting of a local shovel (dest-protocol local) (remove it, or set dest-protocol: amqp091)`}},
		{"a local shovel without a source", "shovels:\n  s: { src-protocol: local, src-uri: \"amqp://\", dest-protocol: local, dest-uri: \"amqp://\" }",
			[]string{`t.yaml:5:10: shovel "s": a shovel needs src-queue or src-exchange`}},
		{"a protocol RabbitMQ does not know", "shovels:\n  s: { src-protocol: stomp, src-uri: \"amqp://\", src-queue: q, dest-uri: \"amqp://\" }",
			[]string{`t.yaml:5:26: shovel "s": src-protocol: invalid value "stomp" (expected one of: amqp091, amqp10, local)`}},
		// Measured on 4.3.6, 4.0.5 and 3.10.8: amqp:/// is vhost "", and
		// the broker refuses the shovel (user may not connect to vhost "").
		{"amqp:/// names vhost \"\"", "shovels:\n  s: { src-uri: \"amqp:///\", src-queue: q, dest-uri: [\"amqp://\", \"amqp:///?heartbeat=5\"] }",
			[]string{`t.yaml:5:21: shovel "s": src-uri: amqp:/// names vhost "" (a URI without a host whose path is only "/"), which no broker has: RabbitMQ refuses the shovel (user may not connect to vhost "") (write amqp:// for the default vhost "/", or amqp:///VHOST for vhost VHOST (%2F for "/"))`,
				`t.yaml:5:57: shovel "s": dest-uri: amqp:///?heartbeat=5 names vhost ""`}},
		// Measured on 4.3.6, 4.0.5 and 3.10.8: amqp_uri refuses the URI
		// (HTTP 400 not a valid URI: {port_out_of_range, 99999}), after
		// apply made what came before it; the password is not shown.
		{"a port out of range", "shovels:\n  s: { src-uri: \"amqp://fed:pw@localhost:99999/v\", src-queue: q, dest-uri: [\"amqp://\", \"amqp://fed:pw@[::1]x/v\"] }",
			[]string{`t.yaml:5:21: shovel "s": src-uri: amqp://fed:***@localhost:99999/v is not a valid URI: its port 99999 is out of range; RabbitMQ refuses it (give a port from 1 to 65535, or none for the default (5672 for amqp, 5671 for amqps))`,
				`t.yaml:5:92: shovel "s": dest-uri[1]: amqp://fed:***@[::1]x/v is not a valid URI: an IPv6 address in brackets is followed by something else than :port; RabbitMQ refuses it (write an IPv6 address in brackets`}},
		{"an upstream's URI of another scheme", "federation_upstreams:\n  u: { uri: \"http://fed:pw@dc2/v\" }",
			[]string{`t.yaml:5:17: federation upstream "u": uri: http://fed:***@dc2/v is not a valid URI: its scheme "http" is neither amqp nor amqps; RabbitMQ refuses it (write amqp://user:password@host:port/vhost`}},
		{"table of the wrong type", "shovels:\n  s: { src-uri: \"amqp://\", src-queue: q, dest-uri: \"amqp://\", src-queue-args: [a] }",
			[]string{`t.yaml:5:83: shovel "s": src-queue-args: expected a mapping, got a list`}},
		{"upstream without uri, bad values", "federation_upstreams:\n  u: { expires: 0, queue-type: stream, trust-user-id: yes }",
			[]string{`t.yaml:5:10: federation upstream "u": missing required field "uri"`,
				`t.yaml:5:21: federation upstream "u": expires: 0 is out of range (expected an integer of at least 1)`,
				`t.yaml:5:36: federation upstream "u": queue-type: invalid value "stream" (expected one of: classic, quorum)`,
				`t.yaml:5:59: federation upstream "u": trust-user-id: expected true or false, got string "yes" (YAML 1.2 booleans are only true and false)`}},
		// Measured on 4.3.6: HTTP 400 "Unrecognised terms [{<<"foo">>,1}]
		// in dest-publish-properties", "priority should be a number",
		// "content_type should be binary", after apply made what came
		// before it.
		{"publish properties RabbitMQ refuses", "shovels:\n  s: { src-uri: \"amqp://\", src-queue: q, dest-uri: \"amqp://\", dest-queue: d, dest-publish-properties: { foo: 1, headers: { a: b }, priority: \"5\", content_type: 5, delivery_mode: 2, expiration: \"60000\" } }",
			[]string{`t.yaml:5:107: shovel "s": dest-publish-properties: content_type: expected a string, got 5; RabbitMQ refuses it (quote it (content_type: "…"): AMQP 0-9-1 properties other than delivery_mode, priority and timestamp are strings)`,
				`t.yaml:5:107: shovel "s": dest-publish-properties: "foo" is not a message property RabbitMQ lets a shovel set (Unrecognised terms) (use one of app_id, cluster_id, content_encoding, content_type, correlation_id, delivery_mode, expiration, message_id, priority, reply_to, timestamp, type, user_id)`,
				`t.yaml:5:107: shovel "s": dest-publish-properties: "headers" is not a message property RabbitMQ lets a shovel set (Unrecognised terms) (a shovel cannot set headers; remove it)`,
				`t.yaml:5:107: shovel "s": dest-publish-properties: priority: expected a number, got string "5"; RabbitMQ refuses it (write priority as a number, without quotes (priority: 2))`}},
		// Measured on 4.3.6: PUT /api/parameters/{component}/{vhost}/
		// (no name) is HTTP 405, after apply made what came before it.
		{"empty names", "shovels:\n  \"\": { src-uri: \"amqp://\", src-queue: q, dest-uri: \"amqp://\", dest-queue: d }\nfederation_upstreams:\n  \"\": { uri: \"amqp://\" }\nfederation_upstream_sets:\n  \"\": [{ upstream: a }]",
			[]string{`t.yaml:5:7: shovel name must not be empty (give the shovel a name)`,
				`t.yaml:7:7: federation upstream name must not be empty (give the federation upstream a name)`,
				`t.yaml:9:7: federation upstream set name must not be empty (give the federation upstream set a name)`}},
		{"set not a list", "federation_upstream_sets:\n  s: { upstream: a }",
			[]string{`t.yaml:5:10: federation upstream set "s": expected a list, got a mapping (write a list of mappings: [{upstream: …}])`}},
		{"set members: not a mapping, no upstream, a uri", "federation_upstream_sets:\n  s: [5, { exchange: x }, { upstream: a, uri: \"amqp://\" }]",
			[]string{`t.yaml:5:11: federation upstream set "s"[0]: expected a mapping, got integer 5`,
				`t.yaml:5:14: federation upstream set "s"[1]: missing required field "upstream"`,
				`t.yaml:5:46: federation upstream set "s"[2]: unknown field "uri"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadVhost(t, tt.body, nil)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("want errors, got %v", err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("want %d errors, got %d:\n%s", len(tt.want), len(got), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, got[i], w)
				}
			}
		})
	}
}

// TestItemsSecretNotInErrors: a secret field of the wrong shape is
// reported without its value.
func TestItemsSecretNotInErrors(t *testing.T) {
	_, err := loadVhost(t, "federation_upstreams:\n  u: { uri: { amqp://u:SECRET@h: 1 } }", nil)
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "uri: expected a string or a list of strings, got a mapping") {
		t.Errorf("got %v", err)
	}
}
