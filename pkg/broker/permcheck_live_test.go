package broker_test

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestMissingPermissions: the probes of MissingPermissions tell which
// permissions a user who is not an administrator lacks, and change
// nothing, whatever exists: a queue of each type holding a message
// keeps it and gets no consumer, a binding with the probed key stays,
// no queue or exchange is made. 3.10.8, 4.0.5 and 4.3.6 answer alike (3.10
// names no permission in its refusals: "access to queue 'q' ... refused";
// the probe knows which it asked).
func TestMissingPermissions(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	ctx := t.Context()
	admin := connect(t, b)
	vh := b.Vhost(t)
	for _, e := range []*topology.Exchange{{Name: "app.x", Type: "topic", Durable: true}, {Name: "other.x", Type: "topic", Durable: true}} {
		if err := admin.DeclareExchange(ctx, vh, e); err != nil {
			t.Fatal(err)
		}
	}
	queues := []string{"app.q", "app.qq", "app.s"}
	for i, typ := range []string{topology.QueueClassic, topology.QueueQuorum, topology.QueueStream} {
		if err := admin.DeclareQueue(ctx, vh, &topology.Queue{Name: queues[i], Type: typ, Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.DeclareBinding(ctx, vh, &topology.Binding{Source: "app.x", Destination: "app.q", DestinationType: topology.DestQueue, RoutingKey: "a"}); err != nil {
		t.Fatal(err)
	}
	ch := b.Channel(t, vh)
	for _, q := range queues {
		if err := ch.PublishWithContext(ctx, "", q, true, false, amqp.Publishing{Body: []byte("keep me")}); err != nil {
			t.Fatal(err)
		}
	}
	user, pass := b.User(t, "management")
	uc, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: user, Password: pass})
	if err != nil {
		t.Fatal(err)
	}
	amqpURL := "amqp://" + net.JoinHostPort(b.AMQPHost, strconv.Itoa(b.AMQPPort))
	amqpURL = fmt.Sprintf("amqp://%s:%s@%s", user, pass, amqpURL[len("amqp://"):])

	need := func(perm, kind, name string) broker.Need { return broker.Need{Perm: perm, Kind: kind, Name: name} }
	readVia := func(x, q, key string) broker.Need {
		return broker.Need{Perm: "read", Kind: "exchange", Name: x, ViaKind: "queue", Via: q, RoutingKey: key, TopicKey: true}
	}
	needs := []broker.Need{
		need("configure", "queue", "app.q"), need("configure", "queue", "app.new"), need("configure", "queue", "other.q"),
		need("configure", "exchange", "app.x"), need("configure", "exchange", "app.newx"), need("configure", "exchange", "other.y"),
		need("read", "queue", "app.q"), need("read", "queue", "app.qq"), need("read", "queue", "app.s"), need("read", "queue", "app.none"), need("read", "queue", "other.q"),
		need("write", "queue", "app.q"), need("write", "exchange", "app.x"), need("write", "exchange", "other.x"),
		readVia("app.x", "app.q", "a"), readVia("other.x", "app.q", "a"), readVia("app.x", "other.q", "a"),
	}
	app := `^app\.`
	tests := []struct {
		name                   string
		configure, write, read string
		topicRead              string // the topic permission's read regexp on app.x; "" for none
		want                   []broker.Need
	}{
		{"everything", ".*", ".*", ".*", "", nil},
		{"app names only", app, app, app, "", []broker.Need{
			need("configure", "queue", "other.q"), need("configure", "exchange", "other.y"), need("read", "queue", "other.q"),
			need("write", "exchange", "other.x"), need("read", "exchange", "other.x"),
			// write on queue other.q is not asked: read on app.x
			// through it cannot be told, and is left out.
		}},
		{"nothing", "^$", "^$", "^$", "", []broker.Need{
			need("configure", "queue", "app.q"), need("configure", "queue", "app.new"), need("configure", "queue", "other.q"),
			need("configure", "exchange", "app.x"), need("configure", "exchange", "app.newx"), need("configure", "exchange", "other.y"),
			need("read", "queue", "app.q"), need("read", "queue", "app.qq"), need("read", "queue", "app.s"), need("read", "queue", "app.none"), need("read", "queue", "other.q"),
			need("write", "queue", "app.q"), need("write", "exchange", "app.x"), need("write", "exchange", "other.x"),
		}},
		{"a topic permission that does not let it read the key", ".*", ".*", ".*", "^b$", []broker.Need{
			{Perm: "read", Kind: "exchange", Name: "app.x", RoutingKey: "a", Topic: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testbroker.Check(t)(b.RH.UpdatePermissionsIn(vh, user, rabbithole.Permissions{Configure: tt.configure, Write: tt.write, Read: tt.read}))
			if tt.topicRead != "" {
				testbroker.Check(t)(b.RH.UpdateTopicPermissionsIn(vh, user, rabbithole.TopicPermissions{Exchange: "app.x", Write: ".*", Read: tt.topicRead}))
				t.Cleanup(func() { testbroker.Check(t)(b.RH.DeleteTopicPermissionsIn(vh, user, "app.x")) })
			}
			got, err := uc.MissingPermissions(ctx, amqpURL, vh, needs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("missing:\n  %v\nwant\n  %v", got, tt.want)
			}
			for _, q := range queues {
				st, err := ch.QueueDeclarePassive(q, true, false, false, false, amqp.Table{})
				if q == "app.s" {
					continue // a stream's count is its offsets': read below
				}
				if err != nil || st.Messages != 1 || st.Consumers != 0 {
					t.Errorf("queue %s after the probes: %d messages, %d consumers (%v); want 1 and 0", q, st.Messages, st.Consumers, err)
				}
			}
			names := func(list func(string) ([]string, error)) []string {
				out, err := list(vh)
				if err != nil {
					t.Fatal(err)
				}
				slices.Sort(out)
				return out
			}
			qs := names(func(v string) ([]string, error) {
				l, err := b.RH.ListQueuesIn(v)
				var out []string
				for _, q := range l {
					out = append(out, q.Name)
				}
				return out, err
			})
			if !slices.Equal(qs, queues) {
				t.Errorf("queues after the probes: %v, want %v", qs, queues)
			}
			for _, x := range []string{"app.newx", "other.y"} {
				if _, err := b.RH.GetExchange(vh, x); err == nil {
					t.Errorf("exchange %s exists after the probes", x)
				}
			}
			bs, err := b.RH.ListQueueBindingsBetween(vh, "app.x", "app.q")
			if err != nil || len(bs) != 1 || bs[0].RoutingKey != "a" {
				t.Errorf("bindings app.x -> app.q after the probes: %v (%v); want the one with key a", bs, err)
			}
		})
	}
}

// TestPermissionProbesAreFew: the check of a fresh file of n queues, each
// with a DLQ (its dead-letter exchange shared) and a binding from a topic
// exchange, asks the broker what the apply needs with one probe per queue
// declared (configure, and with it read on the queue and write on its
// dead-letter exchange) and one per binding (write on the destination,
// read on the source and the topic permission on the key), and opens a
// channel for each probe that fails, the queue.declares; not one probe
// per permission needed. Before, 7 probes a queue and 5 channels (12.6 s
// for 2,500 queues on 4.3.6, a third of the apply's time).
func TestPermissionProbesAreFew(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	ctx := t.Context()
	vh := b.Vhost(t)
	user, pass := b.User(t, "management")
	testbroker.Check(t)(b.RH.UpdatePermissionsIn(vh, user, rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}))
	uc, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: user, Password: pass})
	if err != nil {
		t.Fatal(err)
	}
	amqpURL := fmt.Sprintf("amqp://%s:%s@%s", user, pass, net.JoinHostPort(b.AMQPHost, strconv.Itoa(b.AMQPPort)))
	const n = 40
	// As the engine asks them for gentopo.YAML(vh, n) (nothing exists).
	needs := []broker.Need{{Perm: "configure", Kind: "exchange", Name: "events"}, {Perm: "configure", Kind: "exchange", Name: "events.dlx"}}
	for i := range n {
		q := fmt.Sprintf("svc%03d.q%05d", i%100, i)
		dlq := q + ".dlq"
		needs = append(needs,
			broker.Need{Perm: "configure", Kind: "queue", Name: q, DeadLetter: "events.dlx", HasDeadLetter: true},
			broker.Need{Perm: "read", Kind: "queue", Name: q}, broker.Need{Perm: "write", Kind: "exchange", Name: "events.dlx"},
			broker.Need{Perm: "configure", Kind: "queue", Name: dlq},
			broker.Need{Perm: "write", Kind: "queue", Name: q},
			broker.Need{Perm: "read", Kind: "exchange", Name: "events", ViaKind: "queue", Via: q, RoutingKey: fmt.Sprintf("svc%03d.event%d.#", i%100, i), TopicKey: true},
			broker.Need{Perm: "write", Kind: "queue", Name: dlq},
			broker.Need{Perm: "read", Kind: "exchange", Name: "events.dlx", ViaKind: "queue", Via: dlq, RoutingKey: dlq},
		)
	}
	missing, probes, channels, err := uc.MissingPermissionsCounted(ctx, amqpURL, vh, needs)
	if err != nil || len(missing) != 0 {
		t.Fatalf("missing %v (%v); want none", missing, err)
	}
	declares, bindings := int64(2*n+2), int64(2*n)
	if probes > declares+bindings || channels > declares {
		t.Errorf("%d probes on %d channels for %d queues and exchanges and %d bindings; want at most one probe each, one channel per declare", probes, channels, declares, bindings)
	}
	qs, err := b.RH.ListQueuesIn(vh)
	if err != nil || len(qs) != 0 {
		t.Errorf("queues after the probes: %d (%v), want none", len(qs), err)
	}
}

// TestMissingPermissionsDeadLetter: the probe of configure on a queue
// declared with a dead-letter exchange tells, for a queue that does not
// exist, read on it and write on the exchange too, and each of the three
// that is missing is told apart (3.10.8 names no permission in its
// refusal: "access to queue"); for a queue that exists (its arguments
// compared, the dead-letter exchange not looked at) read and write are
// asked on their own. The default exchange's permissions are those of
// "amq.default". 3.10.8, 4.0.5 and 4.3.6 answer alike.
func TestMissingPermissionsDeadLetter(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	ctx := t.Context()
	admin := connect(t, b)
	vh := b.Vhost(t)
	for _, x := range []string{"app.dlx", "other.dlx"} {
		if err := admin.DeclareExchange(ctx, vh, &topology.Exchange{Name: x, Type: "fanout", Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.DeclareQueue(ctx, vh, &topology.Queue{Name: "app.old", Type: topology.QueueClassic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	user, pass := b.User(t, "management")
	uc, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: user, Password: pass})
	if err != nil {
		t.Fatal(err)
	}
	amqpURL := fmt.Sprintf("amqp://%s:%s@%s", user, pass, net.JoinHostPort(b.AMQPHost, strconv.Itoa(b.AMQPPort)))
	need := func(perm, kind, name string) broker.Need { return broker.Need{Perm: perm, Kind: kind, Name: name} }
	dlq := func(q, dlx string) broker.Need {
		return broker.Need{Perm: "configure", Kind: "queue", Name: q, DeadLetter: dlx, HasDeadLetter: true}
	}
	needs := []broker.Need{
		dlq("app.new", "app.dlx"), need("read", "queue", "app.new"), need("write", "exchange", "app.dlx"),
		dlq("app.old", "other.dlx"), need("read", "queue", "app.old"), need("write", "exchange", "other.dlx"),
		dlq("app.q0", ""), need("read", "queue", "app.q0"), need("write", "exchange", ""),
	}
	tests := []struct {
		name                   string
		configure, write, read string
		want                   []broker.Need
	}{
		{"everything", ".*", ".*", ".*", nil},
		{"no configure on the new queue", `^app\.(old|q0)$`, ".*", ".*", []broker.Need{need("configure", "queue", "app.new")}},
		{"no read on the new queues", ".*", ".*", `^app\.old$|^amq\.`, []broker.Need{need("read", "queue", "app.new"), need("read", "queue", "app.q0")}},
		{"no write on the dead-letter exchanges", ".*", `^app\.`, ".*", []broker.Need{need("write", "exchange", "other.dlx"), need("write", "exchange", "")}},
		{"nothing", "^$", "^$", "^$", []broker.Need{
			need("configure", "queue", "app.new"), need("read", "queue", "app.new"), need("write", "exchange", "app.dlx"),
			need("configure", "queue", "app.old"), need("read", "queue", "app.old"), need("write", "exchange", "other.dlx"),
			need("configure", "queue", "app.q0"), need("read", "queue", "app.q0"), need("write", "exchange", ""),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testbroker.Check(t)(b.RH.UpdatePermissionsIn(vh, user, rabbithole.Permissions{Configure: tt.configure, Write: tt.write, Read: tt.read}))
			got, err := uc.MissingPermissions(ctx, amqpURL, vh, needs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("missing:\n  %v\nwant\n  %v", got, tt.want)
			}
			qs, err := b.RH.ListQueuesIn(vh)
			if err != nil || len(qs) != 1 || qs[0].Name != "app.old" || qs[0].Arguments["x-dead-letter-exchange"] != nil || qs[0].Arguments["x-max-length"] != nil {
				t.Errorf("queues after the probes: %v (%v); want app.old as it was", qs, err)
			}
		})
	}
}
