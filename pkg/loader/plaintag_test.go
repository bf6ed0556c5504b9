package loader

import (
	"math/rand/v2"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestPlainTagAsTheLibrary: plainTag, which reads some scalars itself,
// tags every plain scalar as the YAML library resolves it.
func TestPlainTagAsTheLibrary(t *testing.T) {
	library := func(v string) scalarTag {
		tag, _ := resolvedTag((&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag())
		return tag
	}
	values := []string{"", "~", "null", "Null", "NULL", "nULL", "true", "True", "TRUE", "tRUE", "false", "False", "FALSE",
		"yes", "no", "on", "off", "y", "n", "Y", "N", "<<", "<", "topic", "type", "overflow", "on-call", "Tuesday",
		"0", "1", "7", "10000", "010", "0x10", "0o7", "0b1", "1_000", "1e3", "1.5", "123456789012345678", "1234567890123456789",
		"9223372036854775807", "9223372036854775808", "2024-01-02", "2024", "12:30", "1-2", ".5", ".inf", "+1", "-1", "+.inf", "-0b1",
		"svc000.q00000", "events.dlx", "reject-publish"}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789+-._:eExXoObBtTrRuUfFaAlLsSnN~<yY "
	for range 20000 {
		b := make([]byte, 1+r.IntN(8))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		values = append(values, string(b))
	}
	for _, v := range values {
		if got, want := plainTag(v), library(v); got != want {
			t.Errorf("plainTag(%q) = %d, the library's %d", v, got, want)
		}
	}
}
