package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"
)

// offlineSecretsFile takes a user's password and two URIs with credentials
// from variables; the offline commands need none of them.
const offlineSecretsFile = `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      orders.shipping:
        bindings: [{ exchange: orders, routing_key: order.created }]
        dead_letter: { exchange: orders.dlx, queue: orders.shipping.dlq }
    shovels:
      replay: { src-uri: "${DC2_URI}", src-queue: orders.shipping, dest-uri: ["amqp://", "${DC3_URI}"], dest-queue: orders.shipping }
    federation_upstreams:
      dc2: { uri: "${DC2_URI}" }
users:
  shipping-svc:
    password: ${SHIPPING_SVC_PASSWORD}
    access:
      /: { consume: [orders.shipping] }
tests:
  - name: created orders reach shipping
    publish: { exchange: orders, routing_key: order.created }
    expect: { queues: [orders.shipping] }
`

// offlineWarning is the warning an offline command prints for a variable
// that is not set in a secret field.
func offlineWarning(pos, what, name string) string {
	return "mqctl: warning: " + pos + ": " + what + ": environment variable " + name +
		" is not set (a secret is not needed offline; plan and apply need it set)\n"
}

// runMain runs mqctl with args and the variables of vars, and no other.
func runMain(vars map[string]string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	code = Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// TestOfflineCommandsNeedNoSecrets: validate, lint, graph, route and test
// (simulated) run on a file whose secrets' variables are not set: each
// such variable is a warning naming it at file:line:col, and the command
// does its work and exits as it would with them set. plan, apply and test
// --live still need them, with the error they always gave; a variable
// that is not set outside a secret is an error everywhere.
func TestOfflineCommandsNeedNoSecrets(t *testing.T) {
	path := writeTemp(t, "topology.yaml", offlineSecretsFile)
	warnings := offlineWarning(path+":12:26", `shovel "replay": src-uri`, "DC2_URI") +
		offlineWarning(path+":12:90", `shovel "replay": dest-uri[1]`, "DC3_URI") +
		offlineWarning(path+":14:19", `federation upstream "dc2": uri`, "DC2_URI") +
		offlineWarning(path+":17:15", `user "shipping-svc": password`, "SHIPPING_SVC_PASSWORD")
	all := map[string]string{"DC2_URI": "amqp://u:dc2-secret-31@dc2", "DC3_URI": "amqp://u:dc3-secret-32@dc3", "SHIPPING_SVC_PASSWORD": "pw-secret-33"}
	for _, tc := range []struct {
		name   string
		args   []string
		stdout []string
		// noStdout: not on stdout, with or without the variables.
		noStdout []string
		// masked: stdout shows the secrets masked, so the placeholders
		// (masked whole) differ from URIs with credentials (their
		// passwords masked); other outputs are the same.
		masked bool
	}{
		{name: "validate", args: []string{"validate"}, stdout: []string{": OK — 1 vhost, 2 exchanges, 2 queues, 2 bindings, 0 policies\n"}},
		{name: "validate --expanded masks the placeholders as secrets", args: []string{"validate", "--expanded"}, masked: true,
			stdout: []string{"password: '***'", "src-uri: '***'"}, noStdout: []string{"${"}},
		{name: "validate -o json", args: []string{"validate", "-o", "json"}, masked: true, stdout: []string{`"format_version": "1"`}},
		// MQ803 (a password written in the file) stays silent: the
		// password is taken from one variable, set or not.
		{name: "lint", args: []string{"lint"}, stdout: []string{"0 errors"}, noStdout: []string{"MQ803"}},
		{name: "lint sarif", args: []string{"lint", "--format", "sarif"}, stdout: []string{`"version": "2.1.0"`}, noStdout: []string{`"ruleId": "MQ803"`}},
		{name: "graph", args: []string{"graph"}, stdout: []string{"orders.shipping"}},
		{name: "route", args: []string{"route", "--exchange", "orders", "--routing-key", "order.created"}, stdout: []string{"orders.shipping"}},
		{name: "test", args: []string{"test"}, stdout: []string{"PASS created orders reach shipping\n1 passed, 0 failed\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(slices.Clone(tc.args), "-f", path)
			set, setErr, setCode := runMain(all, args...)
			if setCode != 0 || setErr != "" {
				t.Fatalf("with the variables set: exit %d\n%s", setCode, setErr)
			}
			stdout, stderr, code := runMain(nil, args...)
			if code != 0 {
				t.Errorf("without the variables: exit %d, want 0\n%s", code, stderr)
			}
			if stderr != warnings {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, warnings)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, out := range []string{stdout, set} {
				for _, w := range append(tc.noStdout, "secret-3") {
					if strings.Contains(out, w) {
						t.Errorf("stdout has %q:\n%s", w, out)
					}
				}
			}
			if !tc.masked && stdout != set {
				t.Errorf("stdout differs with the variables set:\n%s\nwithout them:\n%s", set, stdout)
			}
		})
	}

	// The commands that reach the broker need every secret: the load
	// fails before any connection, with the error it always gave.
	for _, args := range [][]string{
		{"plan", "--server", "http://127.0.0.1:1"},
		{"apply", "--auto-approve", "--server", "http://127.0.0.1:1"},
		{"test", "--live", "--server", "http://127.0.0.1:1"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			_, stderr, code := runMain(nil, append(args, "-f", path)...)
			want := path + ":17:15: environment variable SHIPPING_SVC_PASSWORD is not set (set SHIPPING_SVC_PASSWORD, or give a default: ${SHIPPING_SVC_PASSWORD:-value})\n"
			if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "warning") {
				t.Errorf("exit %d, want 1 with\n%s\ngot:\n%s", code, want, stderr)
			}
		})
	}

	// Outside a secret, a variable that is not set is an error offline too.
	bad := writeTemp(t, "topology.yaml", strings.Replace(offlineSecretsFile, "src-queue: orders.shipping", `src-queue: "${SRC_QUEUE}"`, 1))
	for _, cmd := range []string{"validate", "lint", "graph", "test"} {
		_, stderr, code := runMain(nil, cmd, "-f", bad)
		want := bad + ":12:51: environment variable SRC_QUEUE is not set (set SRC_QUEUE, or give a default: ${SRC_QUEUE:-value})\n"
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, want 1 with\n%s\ngot:\n%s", cmd, code, want, stderr)
		}
	}
}

// exportSecretsDefs is a definitions export with users (a password hash;
// a password in clear) and a shovel and a federation upstream whose URIs
// hold credentials.
const exportSecretsDefs = `{
  "rabbit_version": "4.0.5",
  "users": [
    {"name": "app", "password_hash": "` + appHash + `", "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": ["management"]},
    {"name": "ops", "password": "ops-clear-secret-41", "tags": "administrator"}
  ],
  "vhosts": [{"name": "orders"}],
  "permissions": [{"user": "app", "vhost": "orders", "configure": "^$", "write": "^orders$", "read": "^work$"}],
  "queues": [{"name": "work", "vhost": "orders", "durable": true, "auto_delete": false, "arguments": {"x-queue-type": "quorum", "x-dead-letter-exchange": "orders", "x-dead-letter-routing-key": "dead"}}],
  "exchanges": [{"name": "orders", "vhost": "orders", "type": "direct", "durable": true, "auto_delete": false, "internal": false, "arguments": {}}],
  "bindings": [{"source": "orders", "vhost": "orders", "destination": "work", "destination_type": "queue", "routing_key": "work", "arguments": {}}],
  "parameters": [
    {"component": "shovel", "name": "replay", "vhost": "orders", "value": {"src-uri": "amqp://sh:shovel-secret-42@dc2/orders", "src-queue": "work", "dest-uri": ["amqp:///orders", "amqp://sh:shovel-secret-43@dc3"], "dest-queue": "work"}},
    {"component": "federation-upstream", "name": "dc2", "vhost": "orders", "value": {"uri": "amqp://fed:federation-secret-44@dc2"}}
  ]
}`

// exportedVariables are the variables export lists on stderr (after
// exportNote), one a line as "  NAME: what".
func exportedVariables(t *testing.T, stderr string) []string {
	t.Helper()
	_, list, ok := strings.Cut(stderr, exportNote)
	if !ok {
		return nil
	}
	var names []string
	for line := range strings.SplitSeq(list, "\n") {
		name, _, ok := strings.Cut(strings.TrimPrefix(line, "  "), ": ")
		if !strings.HasPrefix(line, "  ") || !ok {
			break
		}
		names = append(names, name)
	}
	return names
}

var warnedVariable = regexp.MustCompile(`(?m)^mqctl: warning: [^\n]*: environment variable (\w+) is not set \(a secret is not needed offline; plan and apply need it set\)$`)

// checkOfflineExport validates and lints export's file out with none of
// the variables set: each variable export named (vars) is warned about,
// no other, no secret is shown, and the exit codes are those with the
// variables set (validate refused by the target version is still refused).
func checkOfflineExport(t *testing.T, out string, vars []string) {
	t.Helper()
	set := map[string]string{}
	for _, v := range vars {
		set[v] = "amqp://user:value-of-" + v + "@host"
	}
	for _, args := range [][]string{
		{"validate", "-f", out},
		{"lint", "-f", out, "--fail-on", "none"},
		{"lint", "-f", out, "--format", "sarif", "--fail-on", "none"},
	} {
		wantOut, wantErr, wantCode := runMain(set, args...)
		stdout, stderr, code := runMain(nil, args...)
		if code != wantCode || stdout != wantOut {
			t.Errorf("mqctl %v without the variables: exit %d, want %d as with them\nstdout:\n%s\nwith them:\n%s\nstderr:\n%s", args, code, wantCode, stdout, wantOut, stderr)
		}
		var warned []string
		for _, m := range warnedVariable.FindAllStringSubmatch(stderr, -1) {
			if !slices.Contains(warned, m[1]) {
				warned = append(warned, m[1])
			}
		}
		if rest := warnedVariable.ReplaceAllString(stderr, ""); strings.TrimSpace(rest) != strings.TrimSpace(wantErr) {
			t.Errorf("mqctl %v: stderr besides the warnings:\n%s\nwith the variables set:\n%s", args, rest, wantErr)
		}
		slices.Sort(warned)
		want := slices.Sorted(slices.Values(vars))
		if !slices.Equal(warned, want) {
			t.Errorf("mqctl %v warns about %v, want the variables export named, %v:\n%s", args, warned, want, stderr)
		}
		if strings.Contains(stdout+stderr, "secret-4") || strings.Contains(stdout+stderr, appHash) {
			t.Errorf("mqctl %v shows a secret:\n%s\n%s", args, stdout, stderr)
		}
	}
}

// TestExportThenOfflineWithoutVariables: what export writes (users'
// passwords, a shovel's and an upstream's URIs as ${VAR}) validates and
// lints at once, before any variable is set: warnings, exit 0.
func TestExportThenOfflineWithoutVariables(t *testing.T) {
	defs := writeTemp(t, "definitions.json", exportSecretsDefs)
	out := filepath.Join(t.TempDir(), "topology.yaml")
	_, stderr, code := runExportCmd(t, "", "--from", defs, "--out", out)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	vars := exportedVariables(t, stderr)
	want := []string{"APP_PASSWORD", "OPS_PASSWORD", "ORDERS_SHOVEL_REPLAY_DEST_URI_2", "ORDERS_SHOVEL_REPLAY_SRC_URI", "ORDERS_FEDERATION_UPSTREAM_DC2_URI"}
	if !slices.Equal(slices.Sorted(slices.Values(vars)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("export names the variables %v, want %v:\n%s", vars, want, stderr)
	}
	checkOfflineExport(t, out, vars)
	stdout, stderr, code := runMain(nil, "validate", "-f", out)
	if code != 0 || !strings.HasSuffix(stdout, ": OK — 1 vhost, 1 exchange, 1 queue, 1 binding, 0 policies\n") {
		t.Errorf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `user "app": password: environment variable APP_PASSWORD is not set`) ||
		!strings.Contains(stderr, `shovel "replay": dest-uri[1]: environment variable ORDERS_SHOVEL_REPLAY_DEST_URI_2 is not set`) {
		t.Errorf("validate's warnings do not name the fields:\n%s", stderr)
	}
}

// TestCorpusOfflineWithoutVariables: every definitions file of the shared
// corpus that export takes validates and lints as well without the
// variables its export names as with them, each of them a warning.
func TestCorpusOfflineWithoutVariables(t *testing.T) {
	_, files := corpus.Files(t) // skips, saying where it looked, without the corpus
	withVars := 0
	for _, path := range files {
		base := filepath.Base(path)
		if strings.HasPrefix(base, "failing_case") || strings.HasSuffix(base, ".tpl") {
			continue // RabbitMQ refuses them; so does export
		}
		t.Run(base, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "topology.yaml")
			_, stderr, code := runMain(nil, "export", "--from", path, "--out", out)
			if code != 0 {
				t.Fatalf("export: exit %d\n%s", code, stderr)
			}
			vars := exportedVariables(t, stderr)
			if len(vars) > 0 {
				withVars++
			}
			checkOfflineExport(t, out, vars)
		})
	}
	if withVars == 0 {
		t.Errorf("no corpus file's export names a variable: the corpus no longer tests this")
	}
}
