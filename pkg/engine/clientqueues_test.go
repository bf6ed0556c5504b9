package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/engine"
)

// TestClientQueuesRefused: a client's exclusive queue is left out of the
// state read, so a file that declared it, or a binding to it (mqctl export
// --from a 4.3.3+ definitions export keeps the bindings of exclusive
// queues it leaves out), planned it as a create, though the broker held it
// (the binding too), and apply stopped there after the changes before it:
// only the connection that declared an exclusive queue may declare or bind
// it (HTTP 400 "cannot obtain exclusive access to locked queue", on 4.3.6,
// 4.0.5 and 3.10.8 alike). Now the plan refuses both before anything
// changes, naming the place in the file, the holder and the fix.
func TestClientQueuesRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	base := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      app.x: { type: topic }
`
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(base)}, engine.ApplyOptions{NoPreflight: true}); err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.Dial(f.b.AMQPURL(f.vhost))
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
	if err := ch.QueueBind("client.q", "a.#", "app.x", false, nil); err != nil {
		t.Fatal(err)
	}
	const (
		queueRefused   = `topology.yaml:7:7: queue "client.q" in vhost "VHOST": declare: the broker holds it as an exclusive queue of`
		queueFix       = `leave it out of the file: the client declares its own queue, and binds it, each time it connects`
		bindingRefused = `binding from "app.x" to queue "client.q" in vhost "VHOST": routing key "a.#": the broker holds queue "client.q" as an exclusive queue of`
		bindingFix     = `remove the binding from the file: the client binds its own queue each time it connects`
	)
	for _, tc := range []struct {
		name, file string
		want, not  []string
	}{
		{"a binding to the client's queue, as export --from a 4.3 definitions export writes it",
			base + "    bindings:\n      - { source: app.x, destination: client.q, destination_type: queue, routing_key: a.# }\n    queues:\n      app.q: {}\n",
			[]string{bindingRefused, bindingFix}, []string{queueRefused}},
		{"the client's queue declared, and bound",
			base + "    queues:\n      client.q:\n        durable: false\n        bindings: [{ exchange: app.x, routing_key: a.# }]\n      app.q: {}\n",
			[]string{queueRefused, queueFix, bindingRefused, bindingFix}, nil},
		// Past 20 queues to ask about, the broker is asked with one
		// listing of the vhost's queues.
		{"the client's queue declared among 25 new ones",
			base + "    queues:\n      client.q: { durable: false }\n" + manyQueues(24),
			[]string{queueRefused, queueFix}, []string{bindingRefused}},
	} {
		objects := brokerObjects(t, f)
		_, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(tc.file)}, engine.ApplyOptions{NoPreflight: true})
		if err == nil {
			t.Fatalf("%s: apply succeeded; want it refused before anything changes", tc.name)
		}
		msg := strings.ReplaceAll(err.Error(), f.vhost, "VHOST")
		if !strings.Contains(msg, "plan refused, nothing was changed") {
			t.Errorf("%s: apply: %v; want it refused before anything changes", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: apply: %v\nwant it to hold: %s", tc.name, err, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(msg, w) {
				t.Errorf("%s: apply: %v\nwant it not to hold: %s", tc.name, err, w)
			}
		}
		if got := brokerObjects(t, f); !slices.Equal(got, objects) {
			t.Errorf("%s: the refused apply changed the broker:\nbefore %v\nafter  %v", tc.name, objects, got)
		}
	}
	// The client's queue goes with its connection: then the file's queue
	// is the file's to declare, and its binding with it.
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	// The broker deletes it a moment after the close.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ex, err := f.c.ExclusiveQueues(ctx, f.vhost, []string{"client.q"})
		if err != nil {
			t.Fatal(err)
		}
		if !ex["client.q"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("client.q is still there 10 s after its connection closed")
		}
	}
	declared := "    queues:\n      client.q:\n        bindings: [{ exchange: app.x, routing_key: a.# }]\n"
	if got := changes(f.plan(f.desired(base + declared))); !slices.Equal(got, []string{"create queue client.q", "create binding app.x -> queue client.q [a.#]"}) {
		t.Errorf("the plan once the client is gone: %v; want client.q and its binding created", got)
	}
}

// manyQueues declares n queues, new.0 to new.<n-1>, for a file's queues
// section.
func manyQueues(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "      new.%d: {}\n", i)
	}
	return b.String()
}
