package cli_test

import (
	"context"
	"testing"

	"github.com/mqctl/mqctl/internal/brokerstate"
)

// The plan/apply scenarios against the real broker are live scripts:
// cmd/mqctl/testdata/live/apply_*.txtar.

// assertBrokerHolds checks that the test vhost holds exactly the file's
// objects, and that the ownership record lists exactly them.
func assertBrokerHolds(t *testing.T, h *harness, file string) {
	t.Helper()
	if err := brokerstate.Holds(context.Background(), h.c, h.vhost, h.load(file).Vhosts[h.vhost], nil); err != nil {
		t.Error(err)
	}
}
