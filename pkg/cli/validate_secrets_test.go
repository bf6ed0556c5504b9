package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate --expanded and -o json show users, their permissions and the
// vhosts' shovels, each secret masked: a password as ***, a URI without
// its password.
func TestValidateMasksSecrets(t *testing.T) {
	f := filepath.Join(t.TempDir(), "users.yaml")
	src := `version: 1
vhosts:
  v:
    queues: { q: {} }
    limits: { max-queues: 10 }
    shovels:
      s1: { src-uri: "amqp://sh:${SH_PW}@dc2/v", src-queue: q, dest-uri: "amqp:///v", dest-queue: q }
users:
  svc:
    password: "${SVC_PASSWORD}"
    tags: [management]
    permissions:
      v: { configure: "^$", write: "^$", read: "^q$" }
`
	if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SVC_PASSWORD": "pw-validate-91", "SH_PW": "sh-validate-92"}
	for _, args := range [][]string{{"validate", "-f", f, "--expanded"}, {"validate", "-f", f, "-o", "json"}} {
		r := runRaw(env, args...)
		if r.code != 0 {
			t.Fatalf("%s", r)
		}
		out := r.stdout + r.stderr
		if strings.Contains(out, "pw-validate-91") || strings.Contains(out, "sh-validate-92") {
			t.Errorf("%v shows a secret:\n%s", args, out)
		}
		for _, want := range []string{"***", "amqp://sh:***@dc2/v", "^q$", "max-queues"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v lacks %q:\n%s", args, want, out)
			}
		}
	}
}
