package loader

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// loadOffline loads src as the commands that talk to no broker do
// (Options.SecretsOptional), with the variables of env set, and returns
// the topology, the warnings and the errors, one a line.
func loadOffline(t *testing.T, src string, env ...string) (*topology.Topology, string, string) {
	t.Helper()
	var warns []string
	top, err := LoadBytes("t.yaml", []byte(src), Options{LookupEnv: envOf(env...), SecretsOptional: true,
		Warn: func(w *Error) { warns = append(warns, w.Error()) }})
	errs := ""
	if err != nil {
		errs = errorLines(err)
	}
	return top, strings.Join(warns, "\n"), errs
}

// secretsFile is a vhost "v" (body, unindented, inside it) and user "svc"
// (user, its fields unindented).
func secretsFile(user, body string) string {
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  v:\n    queues: { q: {} }\n")
	if body != "" {
		for line := range strings.SplitSeq(strings.TrimRight(body, "\n"), "\n") {
			sb.WriteString("    " + line + "\n")
		}
	}
	sb.WriteString("users:\n  svc:\n")
	for line := range strings.SplitSeq(strings.TrimRight(user, "\n"), "\n") {
		sb.WriteString("    " + line + "\n")
	}
	return sb.String()
}

const offlineHint = " (a secret is not needed offline; plan and apply need it set)"

// TestSecretsOptional: with SecretsOptional, a variable that is not set
// in a secret field (a user's password or password_hash, a shovel's or
// federation upstream's URI) is a warning naming it at file:line:col, and
// the field holds its text as written; anywhere else it is still an
// error, and without the option it is an error everywhere.
func TestSecretsOptional(t *testing.T) {
	const shovel = `shovels:
  s: { src-uri: "${SRC_URI}", src-queue: q, dest-uri: ["${DEST_1}", "amqp:///v", "${DEST_3}"], dest-queue: q }`
	tests := []struct {
		name       string
		user, body string
		env        []string
		warnings   []string
		errors     []string
		// want checks the loaded topology (when it loads).
		want func(t *testing.T, top *topology.Topology)
	}{
		{name: "password", user: "password: ${SVC_PASSWORD}",
			warnings: []string{`t.yaml:7:15: user "svc": password: environment variable SVC_PASSWORD is not set` + offlineHint},
			want: func(t *testing.T, top *topology.Topology) {
				u := top.Items.Get(kind.User, "svc")
				if got := u.Settings["password"]; got != "${SVC_PASSWORD}" {
					t.Errorf("password = %q, want the text as written", got)
				}
				if diff := cmp.Diff(map[string]string{"password": "SVC_PASSWORD"}, u.Refs); diff != "" {
					t.Errorf("Refs (-want +got):\n%s", diff)
				}
			}},
		{name: "password quoted", user: `password: "${SVC_PASSWORD}"`,
			warnings: []string{`t.yaml:7:15: user "svc": password: environment variable SVC_PASSWORD is not set` + offlineHint}},
		{name: "password_hash", user: "password_hash: ${SVC_HASH}",
			warnings: []string{`t.yaml:7:20: user "svc": password_hash: environment variable SVC_HASH is not set` + offlineHint}},
		{name: "password set: no warning", user: "password: ${SVC_PASSWORD}", env: []string{"SVC_PASSWORD", "s3cret"},
			want: func(t *testing.T, top *topology.Topology) {
				if got := top.Items.Get(kind.User, "svc").Settings["password"]; got != "s3cret" {
					t.Errorf("password = %q, want the variable's value", got)
				}
			}},
		{name: "password with a default: no warning", user: "password: ${SVC_PASSWORD:-dev}"},
		{name: "two variables in one password, each named", user: `password: "${A}-${B}-${A}"`,
			warnings: []string{
				`t.yaml:7:15: user "svc": password: environment variable A is not set` + offlineHint,
				`t.yaml:7:15: user "svc": password: environment variable B is not set` + offlineHint,
			}},
		{name: "shovel URIs, one and a list", user: "password: x", body: shovel,
			warnings: []string{
				`t.yaml:6:21: shovel "s": src-uri: environment variable SRC_URI is not set` + offlineHint,
				`t.yaml:6:60: shovel "s": dest-uri[0]: environment variable DEST_1 is not set` + offlineHint,
				`t.yaml:6:86: shovel "s": dest-uri[2]: environment variable DEST_3 is not set` + offlineHint,
			},
			want: func(t *testing.T, top *topology.Topology) {
				it := top.Vhosts["v"].Items.Get(kind.Shovel, "s")
				if diff := cmp.Diff(topology.Args{"src-uri": "${SRC_URI}", "src-queue": "q", "dest-uri": []any{"${DEST_1}", "amqp:///v", "${DEST_3}"}, "dest-queue": "q"}, it.Settings); diff != "" {
					t.Errorf("settings (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(map[string]string{"src-uri": "SRC_URI", "dest-uri[0]": "DEST_1", "dest-uri[2]": "DEST_3"}, it.Refs); diff != "" {
					t.Errorf("Refs (-want +got):\n%s", diff)
				}
			}},
		{name: "a password inside a URI", user: "password: x",
			body:     `shovels: { s: { src-uri: "amqp://sh:${SH_PW}@dc2/v", src-queue: q, dest-uri: "amqp:///v" } }`,
			warnings: []string{`t.yaml:5:30: shovel "s": src-uri: environment variable SH_PW is not set` + offlineHint}},
		{name: "federation upstream", user: "password: x",
			body:     `federation_upstreams: { dc2: { uri: "${DC2_URI}" } }`,
			warnings: []string{`t.yaml:5:41: federation upstream "dc2": uri: environment variable DC2_URI is not set` + offlineHint}},

		// Not secrets: still errors.
		{name: "hashing_algorithm is no secret", user: "password_hash: aA==\nhashing_algorithm: ${ALG}",
			errors: []string{"t.yaml:8:24: environment variable ALG is not set (set ALG, or give a default: ${ALG:-value})"}},
		{name: "a shovel's queue", user: "password: x",
			body:   `shovels: { s: { src-uri: "amqp:///v", src-queue: "${SRC_Q}", dest-uri: "amqp:///v" } }`,
			errors: []string{"t.yaml:5:54: environment variable SRC_Q is not set (set SRC_Q, or give a default: ${SRC_Q:-value})"}},
		{name: "an exchange argument", user: "password: x", body: `exchanges: { x: { type: topic, arguments: { x-password: "${PW}" } } }`,
			errors: []string{"t.yaml:5:61: environment variable PW is not set (set PW, or give a default: ${PW:-value})"}},
		{name: "a key", user: "password: x", body: `exchanges: { "${X}": { type: topic } }`,
			errors: []string{"t.yaml:5:18: environment variable X is not set (set X, or give a default: ${X:-value})"}},
		{name: "a user name", user: "password: x", body: "",
			errors: []string{"t.yaml:6:3: environment variable WHO is not set (set WHO, or give a default: ${WHO:-value})"}},
		{name: "a secret field with a broken reference too", user: `password: "${PW}${1X}"`,
			errors: []string{"t.yaml:7:15: environment variable PW is not set (set PW, or give a default: ${PW:-value})"}},
		{name: "a secret field with a broken reference only", user: `password: "${1X}"`,
			errors: []string{"t.yaml:7:15: a ${…} in this value is no variable reference (write ${NAME} or ${NAME:-default}; NAME is letters, digits and _ and does not start with a digit)"}},
		{name: "a secret and a non-secret: a warning and an error", user: "password: ${SVC_PASSWORD}\ntags: [\"${TAG}\"]",
			warnings: []string{`t.yaml:7:15: user "svc": password: environment variable SVC_PASSWORD is not set` + offlineHint},
			errors:   []string{"t.yaml:8:12: environment variable TAG is not set (set TAG, or give a default: ${TAG:-value})"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := secretsFile(tt.user, tt.body)
			if tt.name == "a user name" {
				src = strings.Replace(src, "  svc:\n", "  ${WHO}:\n", 1)
			}
			top, warns, errs := loadOffline(t, src, tt.env...)
			if diff := cmp.Diff(strings.Join(tt.warnings, "\n"), warns); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\nsource:\n%s", diff, src)
			}
			if diff := cmp.Diff(strings.Join(tt.errors, "\n"), errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nsource:\n%s", diff, src)
			}
			if errs == "" && tt.want != nil {
				tt.want(t, top)
			}

			// Without the option, every variable that is not set is an
			// error, as plan and apply need: today's message, and no
			// warning.
			var strictWarns []string
			_, err := LoadBytes("t.yaml", []byte(src), Options{LookupEnv: envOf(tt.env...), Warn: func(w *Error) { strictWarns = append(strictWarns, w.Error()) }})
			if len(strictWarns) > 0 {
				t.Errorf("warnings without SecretsOptional: %q", strictWarns)
			}
			wantStrict := len(tt.errors) + len(tt.warnings)
			if wantStrict == 0 {
				if err != nil {
					t.Errorf("without SecretsOptional: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("without SecretsOptional the file loads; want errors")
			}
			for _, w := range tt.warnings {
				pos, _, _ := strings.Cut(w, ": ")
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(pos) + `: environment variable \w+ is not set \(set \w+, or give a default`).MatchString(errorLines(err)) {
					t.Errorf("without SecretsOptional, errors lack the unset variable at %s:\n%s", pos, errorLines(err))
				}
			}
		})
	}
}

// TestSecretsOptionalNeverShowsAValue: the text that stands for an unset
// secret is what the file says, never a value of another variable of the
// same field.
func TestSecretsOptionalNeverShowsAValue(t *testing.T) {
	src := secretsFile("password: x", `shovels: { s: { src-uri: "amqp://${SH_USER}:${SH_PW}@dc2/v", src-queue: q, dest-uri: "amqp:///v" } }`)
	top, warns, errs := loadOffline(t, src, "SH_USER", "user-value-17")
	if errs != "" {
		t.Fatalf("errors:\n%s", errs)
	}
	if !strings.Contains(warns, "SH_PW is not set") || strings.Contains(warns, "SH_USER") {
		t.Errorf("warnings: %s", warns)
	}
	if got := top.Vhosts["v"].Items.Get(kind.Shovel, "s").Settings["src-uri"]; got != "amqp://${SH_USER}:${SH_PW}@dc2/v" {
		t.Errorf("src-uri = %q, want the text as written", got)
	}
}
