package loader

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestFromEnv: the topology lists the values taken from the environment
// with what the file wrote (mqctl test shows that instead), but for keys
// (names, which output shows) and text written with $$ alone. Block and
// flow style alike (two parsers).
func TestFromEnv(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cr3t", "Q": "audit", "REGION": "eu"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for name, src := range map[string]string{
		"block": `version: 1
vhosts:
  /:
    exchanges:
      ev:
        type: headers
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
`,
		"flow": `version: 1
vhosts:
  /:
    exchanges: { ev: { type: headers } }
    queues: { "${Q}": { bindings: [{ exchange: ev, arguments: { x-match: all, token: "${TOKEN}", region: "${REGION}.x", zone: "${ZONE:-z1}", note: "$${NOT_A_VAR}" } }] } }
`,
	} {
		top, err := LoadBytes("t.yaml", []byte(src), Options{LookupEnv: lookup})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := topology.EnvValues{{Value: "s3cr3t", Raw: "${TOKEN}"}, {Value: "eu.x", Raw: "${REGION}.x"}, {Value: "z1", Raw: "${ZONE:-z1}"}}
		if diff := cmp.Diff(want, top.Env); diff != "" {
			t.Errorf("%s: Env (-want +got):\n%s", name, diff)
		}
	}
}
