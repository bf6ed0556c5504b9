package lint

import (
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// apiOf returns a function that sends one management API request to b as
// its administrator (path under /api/, escaped by the caller; body as JSON
// when not "") and returns the answer's status and body.
func apiOf(t *testing.T, b *testbroker.Broker) func(method, path, body string) (int, string) {
	return func(method, path, body string) (int, string) {
		t.Helper()
		var data []byte
		if body != "" {
			data = []byte(body)
		}
		status, answer, err := b.API(method, path, data)
		if err != nil {
			t.Fatal(err)
		}
		return status, string(answer)
	}
}
