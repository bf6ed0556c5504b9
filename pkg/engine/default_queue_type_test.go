package engine_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/engine"
)

// TestDefaultQueueTypeFallback: in a vhost whose default queue type is
// quorum, RabbitMQ gives a queue declared without x-queue-type that type
// only when it suits it; a transient or auto-delete queue is classic
// (rabbit_amqqueue:augment_declare_args). The file's queue without a type
// is what the broker makes of the same declaration, and mqctl applies it
// so: 4.3.6 and 4.0.5 make the durable one quorum and the others classic;
// 3.10.8 keeps no default queue type (before 3.11), so all three are
// classic by hand, and the file's durable one is declared quorum by mqctl,
// which sends its type.
func TestDefaultQueueTypeFallback(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	body, _ := json.Marshal(map[string]any{"description": "mqctl test " + t.Name(), "default_queue_type": "quorum"})
	if status, answer, err := f.b.API("PUT", "vhosts/"+url.PathEscape(f.vhost), body); err != nil || status >= 300 {
		t.Fatalf("set the vhost's default queue type: %d %s %v", status, answer, err)
	}
	ch := f.b.Channel(t, f.vhost)
	byHand := map[string][2]bool{"h.q": {true, false}, "h.tmp": {false, false}, "h.ad": {true, true}} // durable, auto-delete
	for name, flags := range byHand {
		if _, err := ch.QueueDeclare(name, flags[0], flags[1], false, false, amqp.Table{}); err != nil {
			t.Fatalf("declare %s by hand: %v", name, err)
		}
	}
	types := f.queueTypes()
	stores := f.b.Version().StoresDefaultQueueType()
	want := map[string]string{"h.q": "quorum", "h.tmp": "classic", "h.ad": "classic"}
	if !stores {
		want["h.q"] = "classic"
	}
	for name, typ := range want {
		if types[name] != typ {
			t.Errorf("RabbitMQ %s made %s, declared by hand without a type, a %s queue; want %s", f.b.Version(), name, types[name], typ)
		}
	}

	desired := f.desired(`version: 1
vhosts:
  ${VHOST}:
    default_queue_type: quorum
    queues:
      q: {}
      tmp: {durable: false}
      ad: {auto_delete: true}
`)
	for name, q := range desired.Vhosts[f.vhost].Queues {
		if stores && q.Type != types["h."+name] {
			t.Errorf("the file's queue %s is a %s queue; RabbitMQ %s made the same declaration a %s queue", name, q.Type, f.b.Version(), types["h."+name])
		}
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired}, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	types = f.queueTypes()
	for name, typ := range map[string]string{"q": "quorum", "tmp": "classic", "ad": "classic"} {
		if types[name] != typ {
			t.Errorf("after apply on %s, queue %s is %s, want %s", f.b.Version(), name, types[name], typ)
		}
	}
	if p := f.plan(desired); !p.Empty() {
		t.Errorf("plan after apply: %v", changes(p))
	}
}

// queueTypes reads the type of each queue of the test vhost.
func (f *fixture) queueTypes() map[string]string {
	f.t.Helper()
	var qs []struct{ Name, Type string }
	if err := json.Unmarshal(f.b.GetAPI(f.t, "queues/"+url.PathEscape(f.vhost)+"?columns=name,type"), &qs); err != nil {
		f.t.Fatal(err)
	}
	out := map[string]string{}
	for _, q := range qs {
		out[q.Name] = q.Type
	}
	return out
}
