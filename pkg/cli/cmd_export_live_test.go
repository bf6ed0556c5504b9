package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
)

func runLive(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	code := Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// TestExportSaysExclusiveQueuesLeftOut: export leaves clients' exclusive
// queues out, with their bindings (a client connection's own, which only
// it may declare or bind), as it should, but said nothing: a team adopting
// its broker while its applications ran found queues of the broker
// missing from the file, and nothing said why. It now names them on
// stderr; once the client is gone, there is nothing to say.
func TestExportSaysExclusiveQueuesLeftOut(t *testing.T) {
	t.Parallel()
	br := testbroker.New(t)
	vh := br.Vhost(t)
	conn, err := amqp.Dial(br.AMQPURL(vh))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("client.q", false, false, true, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind("client.q", "k", "amq.direct", false, nil); err != nil {
		t.Fatal(err)
	}
	args := []string{"export", "--vhost", vh, "--server", br.URL, "--username", br.Username, "--password", br.Password}
	note := fmt.Sprintf(`mqctl: note: vhost %q: 1 exclusive queue not exported, nor its bindings: "client.q" (a client connection's own, which only it may declare or bind, and which goes with it)`, vh)
	out, errs, code := runLive(t, args...)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	if strings.Contains(out, "client.q") {
		t.Errorf("the export holds the client's queue:\n%s", out)
	}
	if !strings.Contains(errs, note) {
		t.Errorf("stderr lacks %q:\n%s", note, errs)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	// The broker deletes the queue a moment after the close.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := br.RH.GetQueue(vh, "client.q"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("client.q is still there 10 s after its connection closed")
		}
	}
	if _, errs, code := runLive(t, args...); code != 0 || strings.Contains(errs, "exclusive") {
		t.Errorf("export once the client is gone: exit %d, stderr:\n%s\nwant no note on exclusive queues", code, errs)
	}
}
