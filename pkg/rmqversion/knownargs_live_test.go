package rmqversion_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestUnreadArgumentsAgainstBroker: what MQ506 and MQ503 say of arguments
// the broker takes and does not apply, on 4.3, 4.0 and 3.10 alike: a
// classic and a quorum queue declared with x-max-lenght (a misspelling
// mqctl names) or max-length (a policy key, not an argument), and an
// exchange with x-alternate-exchange, are declared and keep the argument
// as written, and no x-max-length or alternate-exchange appears; a quorum
// queue is declared with x-max-in-memory-length and keeps it (from 4.0
// nothing reads it, by the source: IgnoresInMemoryLimits).
func TestUnreadArgumentsAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := url.PathEscape(b.Vhost(t))
	v := b.Version()
	declare := func(path, body string) map[string]any {
		t.Helper()
		status, answer, err := b.API("PUT", path, []byte(body))
		if err != nil || status/100 != 2 {
			t.Fatalf("RabbitMQ %s: PUT %s %s: %d %s %v", v, path, body, status, answer, err)
		}
		var got struct{ Arguments map[string]any }
		if err := json.Unmarshal(b.GetAPI(t, path), &got); err != nil {
			t.Fatal(err)
		}
		return got.Arguments
	}
	for _, c := range []struct {
		name, path, body string
		kept, meant      string
		misspelled       func(string) string
	}{
		{"classic queue", "queues/" + vh + "/c", `{"durable":true,"arguments":{"x-max-lenght":1}}`, "x-max-lenght", "x-max-length", rmqversion.MisspelledQueueArgument},
		{"quorum queue", "queues/" + vh + "/q", `{"durable":true,"arguments":{"x-queue-type":"quorum","x-max-lenght":1}}`, "x-max-lenght", "x-max-length", rmqversion.MisspelledQueueArgument},
		{"policy key on a queue", "queues/" + vh + "/p", `{"durable":true,"arguments":{"max-length":1}}`, "max-length", "x-max-length", rmqversion.MisspelledQueueArgument},
		{"exchange", "exchanges/" + vh + "/x", `{"type":"direct","durable":true,"arguments":{"x-alternate-exchange":"ae"}}`, "x-alternate-exchange", "alternate-exchange", rmqversion.MisspelledExchangeArgument},
	} {
		args := declare(c.path, c.body)
		if _, ok := args[c.kept]; !ok {
			t.Errorf("RabbitMQ %s, %s: arguments %v lack %s as written", v, c.name, args, c.kept)
		}
		if _, ok := args[c.meant]; ok {
			t.Errorf("RabbitMQ %s, %s: arguments %v hold %s", v, c.name, args, c.meant)
		}
		if got := c.misspelled(c.kept); got != c.meant {
			t.Errorf("%s: mqctl reads %s as %q, want %s", c.name, c.kept, got, c.meant)
		}
	}
	args := declare("queues/"+vh+"/qm", `{"durable":true,"arguments":{"x-queue-type":"quorum","x-max-in-memory-length":1000}}`)
	if fmt.Sprint(args["x-max-in-memory-length"]) != "1000" {
		t.Errorf("RabbitMQ %s: a quorum queue declared with x-max-in-memory-length 1000 has arguments %v", v, args)
	}
}
