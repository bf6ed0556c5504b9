package shell

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"deploy": "deploy", "/": "/", "a b": "'a b'", "it's": `'it'\''s'`, "": "''",
		"orders.dlq": "orders.dlq", "amqp://u@h:5672/%2f": "amqp://u@h:5672/%2f", "a=b,c+d": "a=b,c+d",
		"$HOME": "'$HOME'", "a;b": "'a;b'", "*": "'*'", "`x`": "'`x`'", "a\nb": "'a\nb'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestWordsReadBack: a shell splits what Words writes back into the
// words it was given.
func TestWordsReadBack(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this machine")
	}
	in := []string{"plain", "", "a b", "it's", "$HOME", "a;b", "*", "`x`", "tab\there", "new\nline", `back\slash`, `"dq"`, "%2f"}
	out, err := exec.Command(sh, "-c", `for w in `+strings.Join(Words(in), " ")+`; do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, in) {
		t.Errorf("the shell read back %q, want %q", got, in)
	}
}
