package loader

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

func TestExchangeFields(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *topology.Exchange
	}{
		{"null body: a durable direct exchange", "exchanges:\n  x:\n",
			&topology.Exchange{Name: "x", Type: "direct", Durable: true}},
		{"builtin type", "exchanges:\n  x: {type: topic}",
			&topology.Exchange{Name: "x", Type: "topic", Durable: true}},
		{"headers, flags", "exchanges:\n  x: {type: headers, durable: false, auto_delete: true, internal: true}",
			&topology.Exchange{Name: "x", Type: "headers", AutoDelete: true, Internal: true}},
		{"plugin type and arguments", "exchanges:\n  x: {type: x-delayed-message, arguments: {x-delayed-type: direct}}",
			&topology.Exchange{Name: "x", Type: "x-delayed-message", Durable: true, Arguments: topology.Args{"x-delayed-type": "direct"}}},
		{"alternate exchange", "exchanges:\n  x: {type: fanout, alternate_exchange: unrouted}",
			&topology.Exchange{Name: "x", Type: "fanout", Durable: true, Arguments: topology.Args{"alternate-exchange": "unrouted"}}},
		{"alternate exchange typed and raw alike", "exchanges:\n  x: {alternate_exchange: ae, arguments: {alternate-exchange: ae}}",
			&topology.Exchange{Name: "x", Type: "direct", Durable: true, Arguments: topology.Args{"alternate-exchange": "ae"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := mustLoad(t, vhostFile(tt.body))
			got := top.Vhosts["/"].Exchanges[tt.want.Name]
			if diff := cmp.Diff(tt.want, got, ignoreMeta); diff != "" {
				t.Errorf("exchange (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindingFields(t *testing.T) {
	q := func(src, dst, key string, args topology.Args) *topology.Binding {
		return &topology.Binding{Source: src, Destination: dst, DestinationType: "queue", RoutingKey: key, Arguments: args}
	}
	tests := []struct {
		name string
		body string
		want []*topology.Binding
	}{
		{"queue binding with one key", "queues:\n  q: {bindings: [{exchange: x, routing_key: a.b}]}",
			[]*topology.Binding{q("x", "q", "a.b", nil)}},
		{"routing_keys expand into one binding each", "queues:\n  q: {bindings: [{exchange: x, routing_keys: [a, b, c]}]}",
			[]*topology.Binding{q("x", "q", "a", nil), q("x", "q", "b", nil), q("x", "q", "c", nil)}},
		{"no key is the empty key", "queues:\n  q: {bindings: [{exchange: fan}]}",
			[]*topology.Binding{q("fan", "q", "", nil)}},
		{"headers binding arguments", "queues:\n  q: {bindings: [{exchange: h, arguments: {x-match: all, format: pdf}}]}",
			[]*topology.Binding{q("h", "q", "", topology.Args{"x-match": "all", "format": "pdf"})}},
		{"explicit vhost bindings, exchange to exchange", "bindings:\n  - {source: orders, destination: audit, destination_type: exchange, routing_key: \"#\"}\n  - {source: orders, destination: q}",
			[]*topology.Binding{
				{Source: "orders", Destination: "audit", DestinationType: "exchange", RoutingKey: "#"},
				q("orders", "q", "", nil),
			}},
		{"same source and key with different arguments are two bindings", "bindings:\n  - {source: h, destination: q, arguments: {a: 1}}\n  - {source: h, destination: q, arguments: {a: 2}}",
			[]*topology.Binding{q("h", "q", "", topology.Args{"a": int64(1)}), q("h", "q", "", topology.Args{"a": int64(2)})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := mustLoad(t, vhostFile(tt.body))
			if diff := cmp.Diff(tt.want, top.Vhosts["/"].Bindings, ignoreMeta); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPoliciesAndVhost(t *testing.T) {
	src := `version: 1
vhosts:
  /:
    description: main vhost
    default_queue_type: quorum
    policies:
      events-cap:
        pattern: "^events\\."
        apply_to: queues
        priority: 1
        definition: { max-length: 100000, overflow: reject-publish }
      all:
        pattern: ".*"
        definition: { ha-mode: all }
    operator_policies:
      cap:
        pattern: ".*"
        apply_to: quorum_queues
        definition: { delivery-limit: 20 }
  staging:
tests:
  [] # decoded in decode_tests_test.go
lint:
  rules: {MQ101: off, MQ301: error}
`
	top := mustLoad(t, src)
	main := topology.NewVhost("/")
	main.Description, main.DefaultQueueType = "main vhost", "quorum"
	main.Policies = map[string]*topology.Policy{
		"events-cap": {Name: "events-cap", Pattern: `^events\.`, ApplyTo: "queues", Priority: 1,
			Definition: topology.Args{"max-length": int64(100000), "overflow": "reject-publish"}},
		"all": {Name: "all", Pattern: ".*", ApplyTo: "all", Definition: topology.Args{"ha-mode": "all"}},
	}
	main.OperatorPolicies = map[string]*topology.Policy{
		"cap": {Name: "cap", Pattern: ".*", ApplyTo: "quorum_queues", Definition: topology.Args{"delivery-limit": int64(20)}},
	}
	want := &topology.Topology{
		Vhosts: map[string]*topology.Vhost{
			"/":       main,
			"staging": topology.NewVhost("staging"),
		},
		Lint: topology.LintConfig{Rules: map[string]string{"MQ101": "off", "MQ301": "error"}, Pos: topology.Pos{File: "t.yaml", Line: 23, Col: 1},
			RulePos: map[string]topology.Pos{"MQ101": {File: "t.yaml", Line: 24, Col: 11}, "MQ301": {File: "t.yaml", Line: 24, Col: 23}}},
	}
	if diff := cmp.Diff(want, top, ignoreMeta); diff != "" {
		t.Errorf("topology (-want +got):\n%s", diff)
	}
}

// TestDefinitionSettingsRead: every setting of a form (a flag, one of its
// values, an integer, free text) in an exchange's, a queue's and a
// policy's topology.Definition is read from the file under its key into
// the value the Definition reads back (Value), written with a value other
// than its default: the loader reads the settings from the Definition, so
// that one added there is read with no code of the loader's, and one whose
// Set is missing or wrong fails here.
func TestDefinitionSettingsRead(t *testing.T) {
	tests := []struct {
		kind     string
		settings []topology.SettingDoc
		// file declares the object with setting key written as value;
		// read is what the Definition reads back of key in the object.
		file func(key, value string) string
		read func(top *topology.Topology, key string) any
	}{
		{"exchange", topology.ExchangeDefinition.Doc().Settings,
			func(key, value string) string { return "exchanges:\n  x: {" + key + ": " + value + "}" },
			func(top *topology.Topology, key string) any {
				return settingValue(topology.ExchangeDefinition, top.Vhosts["/"].Exchanges["x"], key)
			}},
		{"queue", topology.QueueDefinition.Doc().Settings,
			func(key, value string) string { return "queues:\n  q: {" + key + ": " + value + "}" },
			func(top *topology.Topology, key string) any {
				return settingValue(topology.QueueDefinition, top.Vhosts["/"].Queues["q"], key)
			}},
		{"policy", topology.PolicyDefinition.Doc().Settings,
			func(key, value string) string {
				body := key + ": " + value + ", definition: {max-length: 1}"
				if key != "pattern" {
					body += ", pattern: '^p'"
				}
				return "policies:\n  p: {" + body + "}"
			},
			func(top *topology.Topology, key string) any {
				return settingValue(topology.PolicyDefinition, top.Vhosts["/"].Policies["p"], key)
			}},
	}
	for _, tt := range tests {
		for _, s := range tt.settings {
			var value string
			var want any
			switch s.Form() {
			case topology.FormNone:
				continue // read by hand: the type of an exchange or a queue
			case topology.FormFlag:
				want = !s.Default.(bool)
				value = fmt.Sprint(want)
			case topology.FormEnum:
				for _, v := range s.Values {
					if v != s.Default {
						value, want = v, v
					}
				}
			case topology.FormInt:
				value, want = "-7", -7
			case topology.FormText:
				value, want = `'^x\.'`, `^x\.`
			}
			t.Run(tt.kind+"/"+s.Key, func(t *testing.T) {
				top := mustLoad(t, vhostFile(tt.file(s.Key, value)))
				if got := tt.read(top, s.Key); got != want {
					t.Errorf("%s %s: %s read as %v, want %v", tt.kind, s.Key, value, got, want)
				}
			})
		}
	}
}

// settingValue is the value of def's setting key in o.
func settingValue[T any](def topology.Definition[T], o T, key string) any {
	for _, s := range def.Settings {
		if s.Key == key {
			return s.Value(o)
		}
	}
	return nil
}
