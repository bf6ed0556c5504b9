package lint

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
)

// TestFindingsHideEnvValues: a value the file took from the environment
// may be a secret in any field, and no finding shows it: each names what
// the file wrote (${VAR}) instead, as the loader's errors do. A value that
// is an object's name (a dead-letter exchange the file declares) is a
// name, shown.
func TestFindingsHideEnvValues(t *testing.T) {
	env := map[string]string{"OVF": "tokenvalue-secret1", "DLX": "dlx", "READRE": "secret5.*", "DECLARED": "orders.dlx", "NEG": "-5", "HKEY": "tk.#.#.#"}
	src := `version: 1
vhosts:
  /:
    exchanges:
      orders.dlx: { type: topic }
      tp: { type: topic }
    queues:
      q: { arguments: { x-overflow: "${OVF}" } }
      q2: { type: quorum, dead_letter: { exchange: "${DLX}" } }
      q3: { type: quorum, dead_letter: { exchange: "${DECLARED}" } }
      q4: { arguments: { x-max-length: "${NEG}" } }
      q5: { bindings: [{ exchange: tp, routing_key: "${HKEY}" }] }
users:
  svc:
    password: "${PW:-}"
    permissions:
      /: { configure: "^$", write: "^$", read: "${READRE}" }
`
	top, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Run(top, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, object, want, never string }{
		{"MQ501", "q", `invalid_overflow: ${OVF} (its value not shown) is none of`, "tokenvalue-secret1"},
		{"MQ102", "q2", `dead-letters to exchange ${DLX} (its value not shown) (dead_letter.exchange)`, `"dlx"`},
		// Short, and quoted after its field's name.
		{"MQ501", "q4", `sets x-max-length ${NEG} (its value not shown), which`, " -5"},
		// The fix names the variable, not the key merged from its value.
		{"MQ405", "tp -> queue q5 [${HKEY}]", `Merge the '#' words next to each other in the value of ${HKEY} into one`, "tk."},
		{"MQ802", "svc", `read regexp ${READRE} (its value not shown) of user "svc"`, "secret5"},
	} {
		var found bool
		for _, f := range fs {
			if f.ID != tc.id || f.Object.Name != tc.object {
				continue
			}
			found = true
			if !strings.Contains(f.Message, tc.want) || strings.Contains(f.Message, tc.never) {
				t.Errorf("%s %s: want %q and no %q in:\n%s", tc.id, tc.object, tc.want, tc.never, f.Message)
			}
		}
		if !found {
			t.Errorf("no %s finding on %s: %s", tc.id, tc.object, describe(fs))
		}
	}
	for _, f := range fs {
		if strings.Contains(f.Object.Name, "tk.") {
			t.Errorf("%s names its object by the value of ${HKEY}: %q", f.ID, f.Object.Name)
		}
		if f.Object.Name == "q3" && strings.Contains(f.Message, "${DECLARED}") {
			t.Errorf("%s on q3 hides the name of a declared exchange: %s", f.ID, f.Message)
		}
	}
}
