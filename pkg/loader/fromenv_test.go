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
