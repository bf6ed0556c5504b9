package rmqversion_test

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

func TestDeprecatedArgumentsByVersion(t *testing.T) {
	versions := []string{"3.10", "3.11", "3.12", "3.13", "4.0", "4.2", "4.3"}
	checks := []struct {
		name string
		f    func(rmqversion.Version) bool
		want []bool // in the order of versions
	}{
		{"ignores queue mode", rmqversion.Version.IgnoresQueueMode, []bool{false, false, true, true, true, true, true}},
		{"refuses queue mode", rmqversion.Version.RefusesQueueMode, []bool{false, false, false, false, false, false, true}},
		{"deprecates queue master locator", rmqversion.Version.DeprecatesQueueMasterLocator, []bool{false, false, false, false, true, true, true}},
		{"refuses queue master locator", rmqversion.Version.RefusesQueueMasterLocator, []bool{false, false, false, false, false, false, true}},
	}
	for _, c := range checks {
		for i, s := range versions {
			if got := c.f(rmqversion.MustParse(s)); got != c.want[i] {
				t.Errorf("%s on %s = %v, want %v", c.name, s, got, c.want[i])
			}
		}
	}
}
