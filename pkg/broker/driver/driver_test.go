package driver

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
)

// TestEveryTypedKindHasADriver fails for a kind with a type of its own
// (no kind.ItemSpec) without a driver in typed, for a driver there
// of an item kind (which pkg/broker's drivers serve), and for a kind of the registry
// Of does not give whole: apply writes, deletes and reads back every
// kind through it.
func TestEveryTypedKindHasADriver(t *testing.T) {
	t.Parallel()
	for _, s := range kind.All() {
		_, isTyped := typed[s.Kind]
		switch {
		case s.Item == nil && !isTyped:
			t.Errorf("kind %q has a type of its own but no driver: add one to typed (pkg/broker/driver/driver.go; README, \"Adding a kind\")", s.Kind)
		case s.Item != nil && isTyped:
			t.Errorf("kind %q is carried as topology.Item but has a typed driver: its driver belongs in pkg/broker's drivers (items.go)", s.Kind)
		}
		d, err := Of(s.Kind)
		if err != nil || d.read == nil || d.write == nil || d.del == nil || d.Ops.Create == "" || d.Ops.Update == "" || d.Ops.Delete == "" {
			t.Errorf("kind %q: Of gives no whole driver (%v)", s.Kind, err)
		}
	}
	if _, err := Of("no-such-kind"); err == nil || err.Error() != kind.Unknown("broker driver", "no-such-kind").Error() {
		t.Errorf("an unknown kind's driver: %v, want kind.Unknown's error", err)
	}
}
