package rmqversion_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// TestShovelNonASCIIPasswordsAgainstBroker: a shovel whose URI holds a
// password outside ASCII runs when the offline check takes it and never
// when it refuses it, on the broker of the run (both ends on the broker
// itself, as a user whose password is "pä-" and some hex). The broker
// writes every one of them (no 500, no 400); only the shovel's state
// tells. amqp091 connects with the password raw or percent-encoded as
// UTF-8, on 4.3.6, 4.0.5 and 3.10.8 alike; amqp10 connects with neither
// (4.3.6 and 4.0.5: invalid_uri raw, the login refused percent-encoded;
// 3.10.8 has no AMQP 1.0 listener, so no amqp10 shovel runs there).
func TestShovelNonASCIIPasswordsAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	raw := b.Vhost(t)
	vh := url.PathEscape(raw)
	for _, q := range []string{"q1", "q2"} {
		if status, msg := send(t, b, http.MethodPut, "/api/queues/"+vh+"/"+q, `{"durable":true}`); status >= 300 {
			t.Fatalf("PUT queue %s: %d %s", q, status, msg)
		}
	}
	user := testbroker.Name(t, "mqctl-test-user")
	password := "pä-" + user[len(user)-8:]
	body, _ := json.Marshal(map[string]string{"password": password, "tags": ""})
	if status, msg := send(t, b, http.MethodPut, "/api/users/"+url.PathEscape(user), string(body)); status >= 300 {
		t.Fatalf("PUT user: %d %s", status, msg)
	}
	t.Cleanup(func() { _ = b.DeleteUser(user) })
	b.Permit(t, user, raw)
	host := fmt.Sprintf("%s:%d", b.AMQPHost, b.AMQPPort)
	escaped := url.UserPassword(user, password).String() // p%C3%A4-…
	cases := []struct{ protocol, userinfo string }{
		{"amqp091", user + ":" + password},
		{"amqp091", escaped},
		{"amqp10", user + ":" + password},
		{"amqp10", escaped},
	}
	shovels := make([]map[string]any, len(cases))
	for i, c := range cases {
		uri := fmt.Sprintf("amqp://%s@%s/%s", c.userinfo, host, vh)
		shovels[i] = map[string]any{"src-uri": uri, "src-queue": "q1", "dest-uri": uri, "dest-queue": "q2"}
		if c.protocol == "amqp10" {
			uri = fmt.Sprintf("amqp://%s@%s?hostname=vhost:%s", c.userinfo, host, url.QueryEscape(raw))
			shovels[i] = map[string]any{"src-protocol": "amqp10", "src-uri": uri, "src-address": "/queues/q1",
				"dest-protocol": "amqp10", "dest-uri": uri, "dest-address": "/queues/q2"}
		}
	}
	refused := writeShovels(t, b, vh, shovels)
	states := settledShovelStates(t, b, vh, refused, true)
	for i, c := range cases {
		name := fmt.Sprintf("s%d", i)
		want := c.protocol == "amqp091" // the check takes these, and only these
		if refused[name] == want {
			t.Errorf("%s (%s, password written %s): the offline check refuses it: %v, want %v", name, c.protocol, map[bool]string{true: "raw", false: "percent-encoded"}[c.userinfo == user+":"+password], refused[name], !want)
		}
		if runs := states[name] == "running"; runs != want {
			t.Errorf("RabbitMQ %s: shovel %s (%s) runs: %v (state %q), want %v", b.Version(), name, c.protocol, runs, states[name], want)
		}
	}
}
