package kind

import "testing"

// TestPasswordMatches: a file's user against the broker's (a stored hash)
// and, for mqctl diff, against another file's (a plaintext password).
func TestPasswordMatches(t *testing.T) {
	// The stored form of "pw" under SHA-256 with the salt 00000000.
	const stored = "AAAAALEkKvUBGEzMSFzin0zK97z+wnfsndrUYKOF2RUry1wo"
	cases := []struct {
		name       string
		want, have map[string]any
		match      bool
	}{
		{"plaintext against the broker's hash", map[string]any{UserPassword: "pw"}, map[string]any{UserPasswordHash: stored}, true},
		{"another plaintext against the broker's hash", map[string]any{UserPassword: "other"}, map[string]any{UserPasswordHash: stored}, false},
		{"the same hash", map[string]any{UserPasswordHash: stored}, map[string]any{UserPasswordHash: stored}, true},
		{"no password, none stored", map[string]any{}, map[string]any{UserPasswordHash: ""}, true},
		{"the same plaintext in both files", map[string]any{UserPassword: "pw"}, map[string]any{UserPassword: "pw"}, true},
		{"the same unset variable in both files", map[string]any{UserPassword: "${PW}"}, map[string]any{UserPassword: "${PW}"}, true},
		{"another plaintext in the new file", map[string]any{UserPassword: "other"}, map[string]any{UserPassword: "pw"}, false},
		{"a hash in the new file for a plaintext in the old", map[string]any{UserPasswordHash: stored}, map[string]any{UserPassword: "pw"}, false},
	}
	for _, c := range cases {
		if got := PasswordMatches(c.want, c.have); got != c.match {
			t.Errorf("%s: PasswordMatches = %v, want %v", c.name, got, c.match)
		}
	}
}
