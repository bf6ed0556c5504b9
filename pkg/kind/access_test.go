package kind

import (
	"strings"
	"testing"
)

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

// TestValidateUserHash: RabbitMQ refuses a user whose password_hash is not
// base64 (rabbit_misc:b64decode_or_throw/1); the problem never quotes it.
func TestValidateUserHash(t *testing.T) {
	cases := []struct {
		name, hash string
		refused    bool
	}{
		{"a stored hash", "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR", false},
		{"empty: no password", "", false},
		// The broker skips white space and stores the hash without it:
		// the next plan would see a change, so mqctl refuses it.
		{"white space", "kI3GCqW5 JLMJa4iX\n", true},
		{"unpadded", "QUJDRA", true},
		{"a plaintext password", "S3cret!!", true},
		{"url-safe base64", "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30-P6tENUV2POR", true},
	}
	for _, c := range cases {
		ps := validateUser(map[string]any{UserPasswordHash: c.hash})
		if got := len(ps) > 0; got != c.refused {
			t.Errorf("%s: problems %v, want refused %v", c.name, ps, c.refused)
		}
		for _, p := range ps {
			if c.hash != "" && (strings.Contains(p.Msg, c.hash) || strings.Contains(p.Hint, c.hash)) {
				t.Errorf("%s: the problem quotes the hash: %+v", c.name, p)
			}
		}
	}
}
