package loader

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestFromEnv: the topology lists the values taken from the environment
// with what the file wrote (mqctl test shows that instead), but for keys
// (names, which output shows) and text written with $$ alone, each with
// the key of its field (the key above a list it is an item of), by which
// output finds a short value quoted after its field's name. Block and flow
// style alike (two parsers).
func TestFromEnv(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cr3t", "Q": "audit", "REGION": "eu", "K1": "k.#", "N": "7"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for name, src := range map[string]string{
		"block": `version: 1
vhosts:
  /:
    exchanges:
      ev:
        type: headers
      tp:
        type: topic
    queues:
      "${Q}":
        bindings:
          - exchange: ev
            arguments:
              x-match: all
              token: "${TOKEN}"
              region: "${REGION}.x"
              zone: "${ZONE:-z1}"
              note: "$${NOT_A_VAR}"
          - exchange: tp
            routing_keys: ["${K1}"]
      lim:
        limits:
          max_length: ${N}
`,
		"flow": `version: 1
vhosts:
  /:
    exchanges: { ev: { type: headers }, tp: { type: topic } }
    queues: { "${Q}": { bindings: [{ exchange: ev, arguments: { x-match: all, token: "${TOKEN}", region: "${REGION}.x", zone: "${ZONE:-z1}", note: "$${NOT_A_VAR}" } }, { exchange: tp, routing_keys: ["${K1}"] }] }, lim: { limits: { max_length: "${N}" } } }
`,
	} {
		top, err := LoadBytes("t.yaml", []byte(src), Options{LookupEnv: lookup})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := topology.EnvValues{{Value: "s3cr3t", Raw: "${TOKEN}", Key: "token"}, {Value: "eu.x", Raw: "${REGION}.x", Key: "region"}, {Value: "k.#", Raw: "${K1}", Key: "routing_keys"}, {Value: "z1", Raw: "${ZONE:-z1}", Key: "zone"}, {Value: "7", Raw: "${N}", Key: "max_length"}}
		if diff := cmp.Diff(want, top.Env); diff != "" {
			t.Errorf("%s: Env (-want +got):\n%s", name, diff)
		}
	}
}

// TestEnvLiterals: beside the values from the environment, the topology
// lists the literals the file writes for an object's own field (a
// queue's limits or arguments, an exchange's arguments, a policy's
// definition) that equal one of them for the same field, for output to
// show them as written in that object's texts (topology.EnvValue.Literal):
// a duration or size as the plan shows it (1s is 1000), but not the
// literal of an object that takes the same value for the same field from
// the environment too, not one of another field, and not one in a part
// of a queue that declares other objects (dead_letter, retry) or of the
// vhost's defaults.
func TestEnvLiterals(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"N": "1000", "TTL": "1000"}[k]
		return v, ok
	}
	lit := func(kind, object, key, value, raw string) topology.EnvValue {
		return topology.EnvValue{Value: value, Raw: raw, Key: key, Literal: true, Kind: kind, Vhost: "v", Object: object}
	}
	for _, tc := range []struct {
		name, queues string
		want         []topology.EnvValue
	}{
		{"a literal of the same field", `
      q1: { limits: { max_length: "${N}" } }
      q2: { limits: { max_length: 1000 } }`, []topology.EnvValue{lit("queue", "q2", "max_length", "1000", "1000")}},
		{"an argument for a typed field", `
      q1: { limits: { max_length: "${N}" } }
      q2: { arguments: { x-max-length: 1000 } }`, []topology.EnvValue{lit("queue", "q2", "x-max-length", "1000", "1000")}},
		{"a duration", `
      q1: { limits: { message_ttl: "${TTL}" } }
      q2: { limits: { message_ttl: 1s } }`, []topology.EnvValue{lit("queue", "q2", "message_ttl", "1000", "1s")}},
		{"a literal of another field", `
      q1: { limits: { max_length: "${N}" } }
      q2: { limits: { max_length_bytes: 1000 }, max_priority: 10 }`, nil},
		{"the object takes it from the environment too", `
      q1: { limits: { max_length: "${N}" } }
      q2: { limits: { max_length: "${N}" }, arguments: { x-max-length: 1000 } }`, nil},
		{"a dead-letter queue's", `
      q1: { limits: { max_length: "${N}" } }
      q2: { dead_letter: { exchange: dlx, queue: { name: q2.dlq, limits: { max_length: 1000 } } } }`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "version: 1\nvhosts:\n  v:\n    exchanges: { dlx: { type: fanout } }\n    queues:" + tc.queues + "\n"
			top, err := LoadBytes("t.yaml", []byte(src), Options{LookupEnv: lookup})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, literals(top)); diff != "" {
				t.Errorf("literals (-want +got):\n%s", diff)
			}
		})
	}
	// A policy's definition and an exchange's arguments are theirs.
	src := `version: 1
vhosts:
  v:
    exchanges:
      e: { type: direct, arguments: { x-max-length: 1000 } }
    queues:
      q1: { limits: { max_length: "${N}" } }
    policies:
      p: { pattern: "^p", definition: { max-length: 1000 } }
`
	top, err := LoadBytes("t.yaml", []byte(src), Options{LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	want := []topology.EnvValue{lit("policy", "p", "max-length", "1000", "1000"), lit("exchange", "e", "x-max-length", "1000", "1000")}
	if diff := cmp.Diff(want, literals(top)); diff != "" {
		t.Errorf("literals (-want +got):\n%s", diff)
	}
}

// literals are the values of top.Env that its files wrote themselves
// (topology.EnvValue.Literal), in order.
func literals(top *topology.Topology) []topology.EnvValue {
	var out []topology.EnvValue
	for _, v := range top.Env {
		if v.Literal {
			out = append(out, v)
		}
	}
	return out
}
