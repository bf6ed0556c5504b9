package rmqversion_test

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// The dead-letter, headers-exchange and policy predicates pkg/route follows,
// at their boundaries: some changed within 3.13 (3.13.0-3.13.2 differ from
// 3.13.3+) or 3.12 (3.12.7); a line given without a patch is its latest
// patch.
func TestRuntimeBehaviourByVersion(t *testing.T) {
	versions := []string{"3.10.8", "3.11", "3.12.6", "3.12.7", "3.12", "3.13.0", "3.13.2", "3.13.3", "3.13", "4.0.5", "4.0"}
	checks := []struct {
		name string
		f    func(rmqversion.Version) bool
		want []bool // in the order of versions
	}{
		{"ignores client x-death", rmqversion.Version.IgnoresClientXDeath,
			[]bool{false, false, false, false, false, true, true, false, false, true, true}},
		{"regroups x-death", rmqversion.Version.RegroupsXDeath,
			[]bool{true, true, true, true, true, false, false, false, false, false, false}},
		{"death cycles in key order", rmqversion.Version.ChecksDeathCyclesInKeyOrder,
			[]bool{false, false, false, false, false, true, true, false, false, false, false}},
		{"x-last-death headers", rmqversion.Version.SetsLastDeathHeaders,
			[]bool{false, false, false, false, false, true, true, true, true, true, true}},
		{"keeps CC with a dead-letter routing key", rmqversion.Version.KeepsCCWithDeadLetterRoutingKey,
			[]bool{false, false, false, false, false, true, true, true, true, true, true}},
		{"x-death keys less BCC", rmqversion.Version.XDeathKeysLessBCC,
			[]bool{false, false, false, false, false, true, true, true, true, true, true}},
		{"headers match number types", rmqversion.Version.HeadersMatchNumberTypes,
			[]bool{false, false, false, false, false, true, true, true, true, true, true}},
		{"headers timestamp in milliseconds", rmqversion.Version.HeadersTimestampMillis,
			[]bool{false, false, false, false, false, true, true, true, true, true, true}},
		{"operator policy overflow", rmqversion.Version.OperatorPolicyOverflow,
			[]bool{false, false, false, true, true, true, true, true, true, true, true}},
		{"negative delivery limit disables", rmqversion.Version.NegativeDeliveryLimitDisables,
			[]bool{false, false, false, false, false, false, false, false, false, true, true}},
	}
	for _, c := range checks {
		for i, s := range versions {
			if got := c.f(rmqversion.MustParse(s)); got != c.want[i] {
				t.Errorf("%s on %s = %v, want %v", c.name, s, got, c.want[i])
			}
		}
	}
	if !(rmqversion.Version{}).IgnoresClientXDeath() {
		t.Errorf("the zero Version (4.0) reads a client's x-death")
	}
}

func TestUnsupportedPolicyKeys(t *testing.T) {
	has := func(v, typ, key string) bool {
		for _, k := range rmqversion.MustParse(v).UnsupportedPolicyKeys(typ) {
			if k == key {
				return true
			}
		}
		return false
	}
	tests := []struct {
		ver, typ, key string
		want          bool
	}{
		{"3.10.8", "classic", "delivery-limit", true},
		{"4.0.5", "classic", "delivery-limit", true},
		{"3.10.8", "quorum", "delivery-limit", false},
		{"3.10.8", "stream", "delivery-limit", true},
		{"3.10.8", "quorum", "queue-mode", true},
		{"3.10.8", "classic", "queue-mode", false},
		{"3.10.8", "classic", "max-in-memory-length", false},
		{"4.0.5", "classic", "max-in-memory-length", true},
		{"3.10.8", "classic", "queue-leader-locator", true},
		{"4.0.5", "classic", "queue-leader-locator", false},
		{"4.0.5", "stream", "target-group-size", true},
		{"4.0.5", "stream", "max-length-bytes", false},
	}
	for _, tt := range tests {
		if got := has(tt.ver, tt.typ, tt.key); got != tt.want {
			t.Errorf("%s %s refuses policy key %s: %v, want %v", tt.ver, tt.typ, tt.key, got, tt.want)
		}
	}
	if got := rmqversion.Default.UnsupportedPolicyKeys("x-unknown"); got != nil {
		t.Errorf("an unknown queue type lists %q", got)
	}
}
