package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"exchange", "routing_key", "dead_letter", "max-length", "queue-mode"}
	tests := []struct {
		got   string
		limit int // 0: Closest
		want  string
	}{
		{"exchnage", 0, "exchange"},       // two letters swapped: one edit
		{"routing-key", 0, "routing_key"}, // - and _ alike
		{"deadletter", 0, "dead_letter"},
		{"something", 0, ""},
		{"max_length", 1, "max-length"},
		{"max-lenght", 1, "max-length"},
		{"queue-type", 1, ""}, // two edits from queue-mode: no sure guess
	}
	for _, tt := range tests {
		got := Closest(tt.got, known)
		if tt.limit > 0 {
			got = Within(tt.got, known, tt.limit)
		}
		if got != tt.want {
			t.Errorf("%q (limit %d): got %q, want %q", tt.got, tt.limit, got, tt.want)
		}
	}
}

func TestName(t *testing.T) {
	known := []string{"orders", "orders.dlx", "a", "payments", "Audit"}
	for _, tt := range []struct{ got, want string }{
		{"order", "orders"},
		{"orders.dxl", "orders.dlx"},
		{"q", ""}, // one edit from "a", but no misspelling of it
		{"ab", ""},
		{"audit", "Audit"},
		{"shipping", ""},
		{"orders.retry", ""},
	} {
		if got := Name(tt.got, known); got != tt.want {
			t.Errorf("Name(%q) = %q, want %q", tt.got, got, tt.want)
		}
	}
}
