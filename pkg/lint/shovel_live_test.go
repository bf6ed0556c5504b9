package lint

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// TestSelfDeletingShovelAgainstBroker shows what MQ407 says, on the broker
// of the run: a shovel with src-delete-after: queue-length moves the
// message its source queue holds and then deletes its own parameter, so
// the file that declares it no longer matches the broker. Measured the
// same on 4.3.6, 4.0.5 and 3.10.8.
func TestSelfDeletingShovelAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	raw := b.Vhost(t)
	vh := url.PathEscape(raw)
	call := apiOf(t, b)
	for _, q := range []string{"src", "dst"} {
		if status, msg := call(http.MethodPut, "queues/"+vh+"/"+q, `{"durable":true}`); status >= 300 {
			t.Fatalf("declare %s: %d %s", q, status, msg)
		}
	}
	if status, msg := call(http.MethodPost, "exchanges/"+vh+"/amq.default/publish", `{"properties":{},"routing_key":"src","payload":"m","payload_encoding":"string"}`); status >= 300 {
		t.Fatalf("publish: %d %s", status, msg)
	}
	uri := "amqp:///" + vh
	if status, msg := call(http.MethodPut, "parameters/shovel/"+vh+"/once", `{"value":{"src-uri":"`+uri+`","src-queue":"src","dest-uri":"`+uri+`","dest-queue":"dst","src-delete-after":"queue-length"}}`); status >= 300 {
		t.Fatalf("RabbitMQ %s refused the shovel: %d %s", b.Version(), status, msg)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, msg := call(http.MethodGet, "parameters/shovel/"+vh, "")
		if strings.TrimSpace(msg) == "[]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RabbitMQ %s kept the shovel with src-delete-after: queue-length after it moved the queue's message: %s", b.Version(), msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ch := b.Channel(t, raw)
	if m, ok, err := ch.Get("dst", true); err != nil || !ok || string(m.Body) != "m" {
		t.Errorf("RabbitMQ %s: the shovel did not move the message to dst (ok=%v, %v)", b.Version(), ok, err)
	}
}
