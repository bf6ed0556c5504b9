package difftest

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

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

// applied declares case c in a fresh vhost of broker b (named into c)
// and returns an AMQP connection to it, closed when the test ends.
func applied(t *testing.T, b *testbroker.Broker, client *broker.Client, c *Case) *amqp.Connection {
	t.Helper()
	vh := b.Vhost(t)
	c.Vhost.Name = vh
	conn, err := amqp.Dial(b.AMQPURL(vh))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := Apply(t.Context(), client, conn, c); err != nil {
		t.Fatal(err)
	}
	return conn
}

// run runs case c through conn with opts, failing the test on every
// disagreement between the simulator and the broker.
func run(t *testing.T, conn *amqp.Connection, c *Case, opts Options) *Result {
	t.Helper()
	res, err := Run(t.Context(), conn, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Disagreements {
		t.Errorf("%s — %s\n  simulator: %q\n  broker:    %q", d.Stage, d.Message, d.Simulator, d.Broker)
	}
	return res
}
