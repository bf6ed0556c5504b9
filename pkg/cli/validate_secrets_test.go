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

// uriSecret is the password of the URIs of TestOfflineCommandsMaskURIs.
const uriSecret = "s3cr3tpw"

// hostlessURIsFile has shovels and an upstream whose URIs have credentials
// but no host (this broker): the shovels' queues are missing, so lint's
// MQ403 names the URIs.
const hostlessURIsFile = `version: 1
vhosts:
  v:
    queues: { q: {} }
    shovels:
      s1: { src-uri: "amqp://bob:` + uriSecret + `@/v", src-queue: nq, dest-uri: "amqp://bob:` + uriSecret + `@/w", dest-queue: q }
      s2: { src-uri: "amqp://b%40b:` + uriSecret + `%21@/v", src-queue: q, dest-uri: ["amqp://al:` + uriSecret + `@/v"], dest-queue: nq2 }
    federation_upstreams:
      u1: { uri: ["amqp://fed:` + uriSecret + `@/v"] }
`

// emptyVhostURIsFile has shovel URIs naming vhost "", which validate
// refuses, naming the URI: one with credentials, one in a list with a raw
// @ in its password.
// slashedURIsFile: passwords holding a raw /, which ends the URI's
// authority early, so that their pieces read as a port and a path.
const slashedURIsFile = `version: 1
vhosts:
  v:
    queues: { q: {} }
    shovels:
      s1: { src-uri: "amqp://bob:` + uriSecret + `/x@host1/v", src-queue: q, dest-uri: "amqp://bob:8080/` + uriSecret + `@host1/v", dest-queue: q }
`

const emptyVhostURIsFile = `version: 1
vhosts:
  v:
    queues: { q: {} }
    shovels:
      s1: { src-uri: "amqp://bob:` + uriSecret + `@/", src-queue: q, dest-uri: "amqp:///v", dest-queue: q }
      s2: { src-uri: "amqp:///v", src-queue: q, dest-uri: ["amqp:///v", "amqp://al:p@` + uriSecret + `@/"], dest-queue: q }
`

// keyPasswordURIsFile: amqps URIs whose query gives the client key's
// password (amqp_uri's ?password=, before 4.0 the connection's password
// too).
const keyPasswordURIsFile = `version: 1
vhosts:
  v:
    queues: { q: {} }
    shovels:
      s1: { src-uri: "amqps://h1/v?cacertfile=/ca.pem&password=` + uriSecret + `", src-queue: q, dest-uri: "amqp:///v", dest-queue: q }
    federation_upstreams:
      u1: { uri: ["amqps://h2/v?password=` + uriSecret + `&verify=verify_peer"] }
`

// keyPasswordURIsDefs is a definitions export with the URIs of
// keyPasswordURIsFile.
const keyPasswordURIsDefs = `{"rabbit_version": "4.3.6", "vhosts": [{"name": "v"}],
  "queues": [{"name": "q", "vhost": "v", "durable": true, "auto_delete": false, "arguments": {}}],
  "parameters": [
    {"component": "shovel", "name": "s1", "vhost": "v", "value": {"src-uri": "amqps://h1/v?cacertfile=/ca.pem&password=` + uriSecret + `", "src-queue": "q", "dest-uri": "amqp:///v", "dest-queue": "q"}},
    {"component": "federation-upstream", "name": "u1", "vhost": "v", "value": {"uri": "amqps://h2/v?password=` + uriSecret + `&verify=verify_peer"}}]}`

// hostlessURIsDefs is a definitions export with the URIs of
// hostlessURIsFile.
const hostlessURIsDefs = `{"rabbit_version": "4.0.5", "vhosts": [{"name": "v"}],
  "queues": [{"name": "q", "vhost": "v", "durable": true, "auto_delete": false, "arguments": {}}],
  "parameters": [
    {"component": "shovel", "name": "s1", "vhost": "v", "value": {"src-uri": "amqp://bob:` + uriSecret + `@/v", "src-queue": "q", "dest-uri": ["amqp://al:` + uriSecret + `@/"], "dest-queue": "q"}},
    {"component": "federation-upstream", "name": "u1", "vhost": "v", "value": {"uri": "amqps://fed:` + uriSecret + `@/v"}}]}`

// TestOfflineCommandsMaskURIs: no offline command shows the password of a
// shovel's or an upstream's URI, with or without a host, one or in a list,
// in its findings, its errors or its views; each shows the URI with its
// password masked where it names it.
func TestOfflineCommandsMaskURIs(t *testing.T) {
	dir := t.TempDir()
	hostless, empty, defs := filepath.Join(dir, "hostless.yaml"), filepath.Join(dir, "empty.yaml"), filepath.Join(dir, "defs.json")
	slashed := filepath.Join(dir, "slashed.yaml")
	keyPassword, keyPasswordDefs := filepath.Join(dir, "key-password.yaml"), filepath.Join(dir, "key-password.json")
	for path, src := range map[string]string{hostless: hostlessURIsFile, empty: emptyVhostURIsFile, defs: hostlessURIsDefs, slashed: slashedURIsFile,
		keyPassword: keyPasswordURIsFile, keyPasswordDefs: keyPasswordURIsDefs} {
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mq403 := []string{"(src-uri amqp://bob:***@/v)", "(dest-uri amqp://bob:***@/w)", "(dest-uri [amqp://al:***@/v])"}
	refused := []string{`src-uri: amqp://bob:***@/ names vhost ""`, `dest-uri: amqp://al:***@/ names vhost ""`}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		// The file writes its URIs' passwords in it: MQ803 is an error.
		{"lint", []string{"lint", "-f", hostless}, 1, append(mq403, `shovel "s1" of vhost "v" has a password written in the file, in src-uri (amqp://bob:***@/v)`)},
		{"lint json", []string{"lint", "-f", hostless, "--format", "json"}, 1, mq403},
		{"lint sarif", []string{"lint", "-f", hostless, "--format", "sarif"}, 1, mq403},
		{"validate --expanded", []string{"validate", "-f", hostless, "--expanded"}, 0, []string{"amqp://bob:***@/v", "amqp://b%40b:***@/v", "amqp://fed:***@/v"}},
		{"validate -o json", []string{"validate", "-f", hostless, "-o", "json"}, 0, []string{"amqp://bob:***@/w", "amqp://al:***@/v"}},
		{"graph", []string{"graph", "-f", hostless}, 0, nil},
		{"export", []string{"export", "--from", defs}, 0, []string{"V_SHOVEL_S1_SRC_URI"}},
		{"validate, vhost \"\"", []string{"validate", "-f", empty}, 1, refused},
		{"validate -o json, vhost \"\"", []string{"validate", "-f", empty, "-o", "json"}, 1, refused},
		{"validate --expanded, vhost \"\"", []string{"validate", "-f", empty, "--expanded"}, 1, refused},
		{"lint, vhost \"\"", []string{"lint", "-f", empty, "--format", "sarif"}, 1, refused},
		{"graph, vhost \"\"", []string{"graph", "-f", empty}, 1, refused},
		{"validate, a raw / in a password", []string{"validate", "-f", slashed}, 1, []string{"src-uri: amqp://bob:***@host1/v is not a valid URI: an @ comes after its first /", "dest-uri: amqp://bob:***@host1/v is not a valid URI"}},
		{"validate --expanded, a key password in the query", []string{"validate", "-f", keyPassword, "--expanded"}, 0, []string{"amqps://h1/v?cacertfile=/ca.pem&password=***", "amqps://h2/v?password=***&verify=verify_peer"}},
		{"export, a key password in the query", []string{"export", "--from", keyPasswordDefs}, 0, []string{"${V_SHOVEL_S1_SRC_URI}", "${V_FEDERATION_UPSTREAM_U1_URI}"}},
		{"lint, a raw / in a password", []string{"lint", "-f", slashed, "--format", "json"}, 1, []string{"amqp://bob:***@host1/v is not a valid URI"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runRaw(nil, tc.args...)
			out := r.stdout + r.stderr
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.code, r)
			}
			if strings.Contains(out, uriSecret) {
				t.Errorf("the output shows a URI's password:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.ReplaceAll(out, `\"`, `"`), w) {
					t.Errorf("the output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestValidateExpandedUserSecretKeys: validate --expanded writes each
// user's secret under the file's own key (password, password_hash,
// hashing_algorithm), masked.
func TestValidateExpandedUserSecretKeys(t *testing.T) {
	const hash = "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR"
	for _, tc := range []struct {
		name, user, want string
	}{
		{"password", `{ password: "${SVC_PASSWORD}", tags: [management] }`,
			"  svc:\n    password: '***'\n    tags: [management]\n"},
		{"password_hash", `{ password_hash: "` + hash + `", tags: [management] }`,
			"  svc:\n    password_hash: '***'\n    tags: [management]\n"},
		{"password_hash and hashing_algorithm", `{ password_hash: "` + hash + `", hashing_algorithm: rabbit_password_hashing_sha512 }`,
			"  svc:\n    password_hash: '***'\n    hashing_algorithm: '***'\n    tags: []\n"},
		{"no password", `{ tags: [monitoring] }`,
			"  svc:\n    tags: [monitoring]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "users.yaml")
			src := "version: 1\nvhosts:\n  v:\n    queues: { q: {} }\nusers:\n  svc: " + tc.user + "\n"
			if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			r := runRaw(map[string]string{"SVC_PASSWORD": "pw-validate-93"}, "validate", "-f", f, "--expanded")
			if r.code != 0 {
				t.Fatalf("%s", r)
			}
			_, users, _ := strings.Cut(r.stdout, "\nusers:\n")
			if users != tc.want {
				t.Errorf("users section:\n%s\nwant:\n%s", users, tc.want)
			}
			if strings.Contains(r.stdout+r.stderr, hash) || strings.Contains(r.stdout+r.stderr, "pw-validate-93") {
				t.Errorf("the output shows a secret:\n%s", r)
			}
		})
	}
}
