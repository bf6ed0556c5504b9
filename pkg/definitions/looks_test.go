package definitions

import "testing"

// TestIs tells a definitions export from mqctl's own files, which the
// loader and apply FILE name for what they are.
func TestIs(t *testing.T) {
	tests := []struct {
		name, data string
		want       bool
	}{
		{"whole-broker export", `{"rabbit_version": "4.3.6", "vhosts": [{"name": "/"}]}`, true},
		{"single-vhost export", "\ufeff" + `{"rabbitmq_version": "4.3.6", "queues": [], "exchanges": []}`, true},
		{"sections alone", `{"queues": [{"name": "q", "vhost": "/"}]}`, true},
		{"topology as YAML", "version: 1\nvhosts: {}\n", false},
		{"topology as JSON", `{"version": 1, "vhosts": {"v": {}}}`, false},
		{"JSON plan", `{"format_version": "2", "vhosts": [], "changes": []}`, false},
		{"saved plan", `{"kind": "mqctl-saved-plan", "version": 3, "vhosts": []}`, false},
		{"not JSON", `{"queues": [`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Is([]byte(tt.data)); got != tt.want {
				t.Errorf("Is(%s) = %v, want %v", tt.data, got, tt.want)
			}
		})
	}
}
