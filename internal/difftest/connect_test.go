package difftest

import (
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// connect starts a test on the broker of the run: the broker, a
// management API client logged in as its administrator, and its version.
func connect(t *testing.T) (*testbroker.Broker, *broker.Client, rmqversion.Version) {
	t.Helper()
	b := testbroker.New(t)
	client, err := broker.Connect(t.Context(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatal(err)
	}
	ver, err := BrokerVersion(client)
	if err != nil {
		t.Fatal(err)
	}
	return b, client, ver
}
