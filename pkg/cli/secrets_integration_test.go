package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
)

const secretsTopology = `version: 1
users:
  ${SEC_USER}:
    password: ${SEC_PASSWORD}
    tags: [management]
    access:
      ${VHOST}: { consume: [sec.work], publish: [sec.in] }
vhosts:
  ${VHOST}:
    exchanges:
      sec.in: { type: direct }
    queues:
      sec.work:
        bindings: [{ exchange: sec.in, routing_key: work }]
`

// TestNoPasswordInAnyOutput: every output of a plan (text, -o json,
// --out FILE and the file itself), a full apply, a plan of a changed
// password, export, and failing applies (the loader's error, the broker's
// refusal) holds neither the user's password nor the hash the broker
// stores for it.
func TestNoPasswordInAnyOutput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.b.UsersSection(t) // its users section speaks for every mqctl-made user
	user := testbroker.Name(t, "mqctl-sec")
	password := "pw-Sec-" + strings.ReplaceAll(testbroker.Name(t, "x"), "-", "")
	changed := password + "-changed"
	deleteUserAtEnd(t, h.b, user)
	h.env["SEC_USER"], h.env["SEC_PASSWORD"] = user, password
	f := h.write("topology.yaml", secretsTopology)
	saved := filepath.Join(h.dir, "saved.plan")

	var outputs []result
	files := map[string]string{}
	step := func(wantCode int, env map[string]string, args ...string) result {
		t.Helper()
		r := runMqctl(h.b, env, args...)
		if r.code != wantCode {
			t.Fatalf("want exit %d:\n%s", wantCode, r)
		}
		outputs = append(outputs, r)
		return r
	}
	with := func(k, v string) map[string]string {
		env := map[string]string{}
		for k, v := range h.env {
			env[k] = v
		}
		env[k] = v
		return env
	}

	step(0, h.env, "validate", "-f", f, "--expanded")
	step(0, h.env, "plan", "-f", f)
	step(0, h.env, "plan", "-f", f, "-o", "json")
	// A saved plan of a file with a users section is refused once any
	// user on the broker changed; the tests running beside this one make
	// and delete theirs, so a stale plan is made again (up to 10 times,
	// a moment apart: 3 were not enough once in CI's 3.10.8 leg).
	for try := 1; ; try++ {
		if try > 1 {
			time.Sleep(time.Duration(try) * 100 * time.Millisecond)
		}
		step(0, h.env, "plan", "-f", f, "--out", saved)
		data, err := os.ReadFile(saved)
		if err != nil {
			t.Fatal(err)
		}
		files["saved plan"] = string(data)
		r := runMqctl(h.b, h.env, "apply", saved, "--auto-approve")
		outputs = append(outputs, r)
		if r.code == 1 && strings.Contains(r.stderr, "saved plan is stale") && try < 10 {
			continue
		}
		if r.code != 0 {
			t.Fatalf("want exit 0:\n%s", r)
		}
		break
	}
	if r := step(0, h.env, "plan", "-f", f, "--detailed-exitcode"); strings.Contains(r.stdout, user) {
		t.Errorf("the plan after apply still changes the user:\n%s", r)
	}

	// The broker's stored hash: no output may show it either.
	u, err := h.b.RH.GetUser(user)
	if err != nil {
		t.Fatal(err)
	}
	if u.PasswordHash == "" {
		t.Fatal("the broker reports no password hash for the user")
	}

	// A changed password is planned as an update of the user, without
	// either value.
	r := step(0, with("SEC_PASSWORD", changed), "plan", "-f", f)
	if !strings.Contains(r.stdout, user) {
		t.Errorf("a changed password plans no change of %s:\n%s", user, r)
	}
	step(0, with("SEC_PASSWORD", changed), "plan", "-f", f, "-o", "json")
	step(0, h.env, "apply", "-f", f, "--auto-approve")
	step(0, h.env, "export", "--vhost", h.vhost)

	// Failing applies: a permission on a vhost the file does not declare
	// (the loader), and a regexp the broker refuses (after the user is
	// written with its password).
	undeclared := h.write("undeclared.yaml", strings.Replace(secretsTopology,
		"      ${VHOST}: { consume: [sec.work], publish: [sec.in] }",
		"      ${VHOST}: { consume: [sec.work], publish: [sec.in] }\n    permissions:\n      elsewhere: { read: \"^x$\" }", 1))
	if r := step(1, with("SEC_PASSWORD", changed), "apply", "-f", undeclared, "--auto-approve"); !strings.Contains(r.stderr, `vhost "elsewhere" is not declared`) {
		t.Errorf("the loader's error does not say what is wrong:\n%s", r)
	}
	refused := h.write("refused.yaml", strings.Replace(secretsTopology,
		"    access:\n      ${VHOST}: { consume: [sec.work], publish: [sec.in] }",
		"    permissions:\n      ${VHOST}: { configure: \"^$\", write: \"^$\", read: \"(unclosed\" }", 1))
	r = step(1, with("SEC_PASSWORD", changed), "apply", "-f", refused, "--auto-approve")
	t.Logf("refused apply:\n%s", r)

	for _, r := range outputs {
		for name, secret := range map[string]string{"password": password, "changed password": changed, "stored hash": u.PasswordHash} {
			for what, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if strings.Contains(out, secret) {
					t.Errorf("mqctl %s: %s shows the %s:\n%s", strings.Join(r.args, " "), what, name, out)
				}
			}
		}
	}
	for what, out := range files {
		for _, secret := range []string{password, changed, u.PasswordHash} {
			if strings.Contains(out, secret) {
				t.Errorf("the %s holds a secret:\n%s", what, out)
			}
		}
	}
	// The outputs do say what they did, so the grep above proves
	// something: the apply names the user, export its ${VAR} placeholder.
	var all strings.Builder
	for _, r := range outputs {
		all.WriteString(r.stdout + r.stderr)
	}
	if !strings.Contains(all.String(), user) || !strings.Contains(all.String(), "${") {
		t.Errorf("the outputs never name the user or a ${VAR} placeholder:\n%s", all.String())
	}
}
