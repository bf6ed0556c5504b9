package topology

import "testing"

// TestLaterSettingsHaveADefault: a setting added to a Definition after
// ownership records held prints (Setting.Later) is left out of the print
// at its Default; without one it would always be printed, and every
// object's print would change.
func TestLaterSettingsHaveADefault(t *testing.T) {
	for _, bad := range [][]string{laterWithoutDefault(ExchangeDefinition), laterWithoutDefault(QueueDefinition), laterWithoutDefault(PolicyDefinition)} {
		for _, key := range bad {
			t.Errorf("setting %s is Later but has no Default", key)
		}
	}
	if got := laterWithoutDefault(Definition[*Exchange]{Print: "exchange", Settings: []Setting[*Exchange]{{Key: "sealed", Later: true}}}); len(got) != 1 {
		t.Errorf("a Later setting without a Default is not found: %q", got)
	}
}

// laterWithoutDefault are the keys of d's Later settings without a Default.
func laterWithoutDefault[T any](d Definition[T]) []string {
	var out []string
	for _, s := range d.Settings {
		if s.Later && s.Default == nil {
			out = append(out, d.Print+" "+s.Key)
		}
	}
	return out
}
