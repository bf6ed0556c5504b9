package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestSavedPlanFlowsReadWhenShown: apply reads a saved plan without its
// flows, which it holds only to show them, and reads them from the file
// again when it shows the plan: the same flows. A plan saved again over
// the file by rename (as plan --out does not, but an editor or a copy may)
// leaves the file apply opened, and read, readable: its flows are shown. A
// file written over in place since is refused, saying so, before anything
// changes: the flows shown would not be the plan's.
func TestSavedPlanFlowsReadWhenShown(t *testing.T) {
	mk := func(cause string) []byte {
		var buf bytes.Buffer
		p := &plan.Plan{Fingerprint: "f", Flows: &flow.Diff{Silenced: []flow.Silenced{{Vhost: "v", Queue: "q", Cause: cause}}}}
		if err := plan.WriteSaved(&buf, p); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	want := &flow.Diff{Silenced: []flow.Silenced{{Vhost: "v", Queue: "q", Cause: "its binding is deleted"}}}
	read := func(t *testing.T, change func(path string)) (*flow.Diff, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "release.plan")
		if err := os.WriteFile(path, mk("its binding is deleted"), 0o600); err != nil {
			t.Fatal(err)
		}
		saved, flows, err := (&globals{}).readSavedPlan(path)
		if err != nil {
			t.Fatal(err)
		}
		defer flows.close()
		if saved.Flows != nil || flows == nil {
			t.Fatalf("the saved plan read holds its flows (%v), or has none to read again (%v)", saved.Flows != nil, flows == nil)
		}
		change(path)
		return flows.read()
	}
	t.Run("unchanged", func(t *testing.T) {
		got, err := read(t, func(string) {})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("flows read again: %+v, %v; want %+v", got, err, want)
		}
	})
	t.Run("saved again by rename", func(t *testing.T) {
		got, err := read(t, func(path string) {
			other := path + ".new"
			if err := os.WriteFile(other, mk("another cause"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("flows read again: %+v, %v; want the plan's, %+v", got, err, want)
		}
	})
	t.Run("written over in place", func(t *testing.T) {
		got, err := read(t, func(path string) {
			if err := os.WriteFile(path, mk("another cause"), 0o600); err != nil {
				t.Fatal(err)
			}
		})
		if err == nil || !strings.Contains(err.Error(), "release.plan changed since apply read it") || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("flows of a plan file written over: %+v, %v; want it refused", got, err)
		}
	})
}
