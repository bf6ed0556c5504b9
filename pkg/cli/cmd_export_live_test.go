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

// TestExportSaysUsersNotRead: RabbitMQ lets only an administrator list
// users and their limits (401 on 3.10.8, 4.0.5 and 4.3.6), so an export
// by any other user has no users section, which a plan then leaves the
// users alone for. export named each vhost-level kind it could not read
// (permissions, shovels) on stderr, but not the users: the file said
// nothing of them, and nothing said why. An administrator's export reads
// them, and says nothing of the kind.
func TestExportSaysUsersNotRead(t *testing.T) {
	t.Parallel()
	br := testbroker.New(t)
	vh := br.Vhost(t)
	user, pw := br.User(t, "management")
	br.Permit(t, user, vh)
	for _, tc := range []struct {
		name, user, password string
		notRead              bool
	}{
		{"a management user", user, pw, true},
		{"an administrator", br.Username, br.Password, false},
	} {
		out, errs, code := runLive(t, "export", "--vhost", vh, "--server", br.URL, "--username", tc.user, "--password", tc.password)
		if code != 0 {
			t.Fatalf("%s: export: exit %d: %s", tc.name, code, errs)
		}
		for _, k := range []string{"users", "user limits"} {
			note := fmt.Sprintf("mqctl: note: %s not exported: ", k)
			if got := strings.Contains(errs, note); got != tc.notRead {
				t.Errorf("%s: stderr holds %q: %v, want %v\n%s", tc.name, note, got, tc.notRead, errs)
			}
		}
		if got := strings.Contains(out, "\nusers:"); got == tc.notRead {
			t.Errorf("%s: the export has a users section: %v, want %v\n%s", tc.name, got, !tc.notRead, out)
		}
	}
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
