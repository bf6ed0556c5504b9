package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A saved plan without the broker's fingerprint (every plan --out writes
// one: such a file was made or edited by hand) is refused by apply with
// what to do, before any broker is asked; it was refused further on in
// an API's words ("make it to be saved (PlanOptions.Save)").
func TestApplyRefusesASavedPlanWithoutFingerprint(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "edited.plan")
	if err := os.WriteFile(path, []byte(`{"kind":"mqctl-saved-plan","version":3,"changes":[{"action":"create"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runRaw(nil, "apply", path, "--auto-approve", "--server", "http://127.0.0.1:1")
	want := path + ` is not a valid saved plan (it holds no fingerprint of the broker's state, which apply checks the broker against before it changes anything): make it again with "mqctl plan --out ` + path + `"`
	if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "PlanOptions") {
		t.Errorf("apply of a saved plan without a fingerprint: exit %d\n%s\nwant exit 1 and %q", r.code, r.stderr, want)
	}
}
