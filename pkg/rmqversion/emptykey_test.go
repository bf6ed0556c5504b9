package rmqversion

import "testing"

// Offline (no feature flags reported) only 4.3.0 routes topic bindings
// with the index that leaks the empty key; with the broker's flags, the
// index they enable decides (v4 enabled and v5 not).
func TestLeaksEmptyTopicKey(t *testing.T) {
	for _, tc := range []struct {
		version string
		flags   map[string]bool
		want    bool
	}{
		{"3.10", nil, false},
		{"4.0", nil, false},
		{"4.2", nil, false},
		{"4.3", nil, false},
		{"4.3.0", nil, true},
		{"4.3.1", nil, false},
		{"4.3.6", nil, false},
		{"4.3.0", map[string]bool{"topic_binding_projection_v4": false}, false},
		{"4.3.6", map[string]bool{"topic_binding_projection_v4": true, "topic_binding_projection_v5": false}, true},
		{"4.3.6", map[string]bool{"topic_binding_projection_v4": true, "topic_binding_projection_v5": true}, false},
		{"4.3.6", map[string]bool{}, false},
	} {
		v := MustParse(tc.version)
		if tc.flags != nil {
			v = v.WithFacts(&Facts{FeatureFlags: tc.flags})
		}
		if got := v.LeaksEmptyTopicKey(); got != tc.want {
			t.Errorf("RabbitMQ %s with flags %v: LeaksEmptyTopicKey %v, want %v", tc.version, tc.flags, got, tc.want)
		}
	}
}
