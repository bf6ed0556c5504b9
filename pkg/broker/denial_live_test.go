package broker_test

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestRefusalsNameWhatIsMissing: a user with the management tag and narrow
// permissions gets, for every refused write, the permission (or tag) it
// lacks, the object and the vhost — where the management API itself only
// answers "Access refused.".
func TestRefusalsNameWhatIsMissing(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	ctx := t.Context()
	admin := connect(t, b)
	vh := b.Vhost(t)
	for _, e := range []*topology.Exchange{
		{Name: "src", Type: "topic", Durable: true},
		{Name: "dlx", Type: "fanout", Durable: true},
	} {
		if err := admin.DeclareExchange(ctx, vh, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.DeclareQueue(ctx, vh, &topology.Queue{Name: "dst", Type: topology.QueueClassic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	user, pass := b.User(t, "management")
	amqpURL := "amqp://" + net.JoinHostPort(b.AMQPHost, strconv.Itoa(b.AMQPPort))
	uc, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: user, Password: pass, AMQPURL: amqpURL})
	if err != nil {
		t.Fatal(err)
	}
	// noProbe cannot open AMQP connections (a closed port), so it cannot
	// tell which of two permissions a binding lacks.
	noProbe, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: user, Password: pass, AMQPURL: "amqp://" + closedAddr(t)})
	if err != nil {
		t.Fatal(err)
	}

	lacks := func(perm, kind, name, why string) string {
		s := fmt.Sprintf("user %q lacks %s permission on %s %q in vhost %q: its %s regexp does not match %q", user, perm, kind, name, vh, perm, name)
		if why != "" {
			s += " (" + why + ")"
		}
		return s
	}
	const bindingWhy = "a binding needs write on its destination and read on its source"
	queueDLX := func(name string) *topology.Queue {
		return &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{"x-dead-letter-exchange": "dlx"}}
	}
	exchangeAE := &topology.Exchange{Name: "with-ae", Type: "direct", Durable: true, Arguments: topology.Args{"alternate-exchange": "dlx"}}
	binding := &topology.Binding{Source: "src", Destination: "dst", DestinationType: topology.DestQueue, RoutingKey: "k"}
	e2e := &topology.Binding{Source: "src", Destination: "dlx", DestinationType: topology.DestExchange, RoutingKey: "k"}
	all, none := ".*", "^$"

	tests := []struct {
		name                   string
		configure, write, read string
		call                   func() error
		want                   string // the error after the request's own description
	}{
		{"declare a queue without configure", none, all, all,
			func() error {
				return uc.DeclareQueue(ctx, vh, &topology.Queue{Name: "new.q", Type: topology.QueueClassic, Durable: true})
			},
			lacks("configure", "queue", "new.q", "")},
		{"declare an exchange without configure", none, all, all,
			func() error {
				return uc.DeclareExchange(ctx, vh, &topology.Exchange{Name: "new.x", Type: "topic", Durable: true})
			},
			lacks("configure", "exchange", "new.x", "")},
		{"delete a queue without configure", none, all, all,
			func() error { return uc.DeleteQueue(ctx, vh, "dst", broker.DeleteQueueOptions{}) },
			lacks("configure", "queue", "dst", "")},
		{"delete an exchange without configure", "^dst$", all, all,
			func() error { return uc.DeleteExchange(ctx, vh, "dlx", broker.DeleteExchangeOptions{}) },
			lacks("configure", "exchange", "dlx", "")},
		{"bind without write on the queue", all, none, all,
			func() error { return uc.DeclareBinding(ctx, vh, binding) },
			lacks("write", "queue", "dst", bindingWhy)},
		{"bind without read on the source", all, all, none,
			func() error { return uc.DeclareBinding(ctx, vh, binding) },
			lacks("read", "exchange", "src", bindingWhy)},
		{"bind an exchange without write on it", all, "^dst$", all,
			func() error { return uc.DeclareBinding(ctx, vh, e2e) },
			lacks("write", "exchange", "dlx", bindingWhy)},
		{"bind, no AMQP to tell which", all, all, none,
			func() error { return noProbe.DeclareBinding(ctx, vh, binding) },
			fmt.Sprintf(`user %q lacks one of the permissions this needs in vhost %q: write on queue "dst" (%s); read on exchange "src" (%s)`, user, vh, bindingWhy, bindingWhy)},
		{"queue with a dead-letter exchange, no write on it", all, "^dst$", all,
			func() error { return uc.DeclareQueue(ctx, vh, queueDLX("dl.1")) },
			lacks("write", "exchange", "dlx", "declaring a queue with a dead-letter exchange needs write on that exchange")},
		{"queue with a dead-letter exchange, no read on the queue", all, all, "^src$",
			func() error { return uc.DeclareQueue(ctx, vh, queueDLX("dl.2")) },
			lacks("read", "queue", "dl.2", "declaring a queue with a dead-letter exchange needs read on the queue")},
		{"queue with a dead-letter exchange, neither", all, none, none,
			func() error { return uc.DeclareQueue(ctx, vh, queueDLX("dl.3")) },
			fmt.Sprintf(`user %q lacks these permissions in vhost %q: read on queue "dl.3" (declaring a queue with a dead-letter exchange needs read on the queue); write on exchange "dlx" (declaring a queue with a dead-letter exchange needs write on that exchange)`, user, vh)},
		{"queue with a dead-letter exchange, no configure", "^dst$", all, all,
			func() error { return uc.DeclareQueue(ctx, vh, queueDLX("dl.4")) },
			lacks("configure", "queue", "dl.4", "")},
		{"exchange with an alternate exchange, no write on it", all, "^dst$", all,
			func() error { return uc.DeclareExchange(ctx, vh, exchangeAE) },
			lacks("write", "exchange", "dlx", "declaring an exchange with an alternate exchange needs write on that exchange")},
		{"exchange with an alternate exchange, no read on it", all, all, "^src$",
			func() error { return uc.DeclareExchange(ctx, vh, exchangeAE) },
			lacks("read", "exchange", "with-ae", "declaring an exchange with an alternate exchange needs read on the exchange")},
		{"policy without the policymaker tag", all, all, all,
			func() error {
				return uc.PutPolicy(ctx, kind.Policy, vh, &topology.Policy{Name: "p", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(1)}})
			},
			fmt.Sprintf("user %q may not create policies in vhost %q: it needs the policymaker or administrator tag", user, vh)},
		{"delete a policy without the policymaker tag", all, all, all,
			func() error { return uc.DeletePolicy(ctx, kind.Policy, vh, "p") },
			fmt.Sprintf("user %q may not delete policies in vhost %q: it needs the policymaker or administrator tag", user, vh)},
		{"create a vhost", all, all, all,
			func() error { return uc.DeclareVhost(ctx, vh+"-new", broker.VhostSettings{}) },
			fmt.Sprintf("user %q may not create vhost %q: it needs the administrator tag", user, vh+"-new")},
		{"change a vhost", all, all, all,
			func() error { return uc.DeclareVhost(ctx, vh, broker.VhostSettings{Description: "x"}) },
			fmt.Sprintf("user %q may not change vhost %q: it needs the administrator tag", user, vh)},
		{"delete a vhost", all, all, all,
			func() error { return uc.DeleteVhost(ctx, vh) },
			fmt.Sprintf("user %q may not delete vhost %q: it needs the administrator tag", user, vh)},
		{"operator policy", all, all, all,
			func() error {
				return uc.PutPolicy(ctx, kind.OperatorPolicy, vh, &topology.Policy{Name: "op", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(1)}})
			},
			fmt.Sprintf("user %q may not create operator policies in vhost %q: it needs the administrator tag", user, vh)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testbroker.Check(t)(b.RH.UpdatePermissionsIn(vh, user, rabbithole.Permissions{Configure: tt.configure, Write: tt.write, Read: tt.read}))
			err := tt.call()
			if !errors.Is(err, broker.ErrForbidden) {
				t.Fatalf("error = %v, want ErrForbidden", err)
			}
			var ae *broker.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an APIError", err)
			}
			if got := strings.TrimPrefix(err.Error(), ae.Op+": "); got != tt.want {
				t.Errorf("error after %q:\n  %s\nwant\n  %s", ae.Op, got, tt.want)
			}
		})
	}

	// A binding the vhost permissions allow, whose key the topic
	// permission for its source does not let the user read: the refusal
	// names that topic permission, the exchange and the key, with its
	// fix (before, it named write on the destination or read on the
	// source, which the user has). Bind and unbind alike: RabbitMQ checks
	// the topic permission on both (rabbit_channel binding_action).
	t.Run("a binding key the topic permission does not let it read", func(t *testing.T) {
		testbroker.Check(t)(b.RH.UpdatePermissionsIn(vh, user, rabbithole.Permissions{Configure: all, Write: all, Read: all}))
		held := &topology.Binding{Source: "src", Destination: "dst", DestinationType: topology.DestQueue, RoutingKey: "held.*"}
		if err := admin.DeclareBinding(ctx, vh, held); err != nil {
			t.Fatal(err)
		}
		testbroker.Check(t)(b.RH.UpdateTopicPermissionsIn(vh, user, rabbithole.TopicPermissions{Exchange: "src", Write: all, Read: "^k$"}))
		t.Cleanup(func() { testbroker.Check(t)(b.RH.DeleteTopicPermissionsIn(vh, user, "src")) })
		if err := uc.DeclareBinding(ctx, vh, binding); err != nil {
			t.Fatalf("bind with key k, which the topic permission lets it read: %v", err)
		}
		for _, tc := range []struct {
			name, key string
			re        string // the read regexp that matches the key alone
			call      func() error
		}{
			{"bind", "a.#", `^a\.#$`, func() error {
				return uc.DeclareBinding(ctx, vh, &topology.Binding{Source: "src", Destination: "dst", DestinationType: topology.DestQueue, RoutingKey: "a.#"})
			}},
			{"unbind", "held.*", `^held\.\*$`, func() error { return uc.DeleteBinding(ctx, vh, held, "held.*") }},
		} {
			err := tc.call()
			if !errors.Is(err, broker.ErrForbidden) {
				t.Fatalf("%s: error = %v, want ErrForbidden", tc.name, err)
			}
			want := fmt.Sprintf(`user %q lacks the topic permission to read routing key %q on exchange "src" in vhost %q: the read regexp of its topic permission for that exchange does not match %q (a binding from a topic exchange needs it to match the binding's key); an administrator extends the read regexp of user %q's topic permission for exchange "src" in vhost %q to match %q: rabbitmqctl set_topic_permissions -p %s %s src WRITE READ, with WRITE the write regexp it has and READ the read regexp it has extended ('%s' matches it alone)`,
				user, tc.key, vh, tc.key, user, vh, tc.key, vh, user, tc.re)
			if !strings.HasSuffix(err.Error(), want) {
				t.Errorf("%s: error\n  %v\nwant it to end\n  %s", tc.name, err, want)
			}
		}
	})

	t.Run("no permissions on the vhost", func(t *testing.T) {
		other := b.Vhost(t)
		err := uc.DeclareQueue(ctx, other, &topology.Queue{Name: "q", Type: topology.QueueClassic, Durable: true})
		want := fmt.Sprintf(`user %q has no permissions on vhost %q (an administrator grants them: rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ)`, user, other, other, user)
		if !errors.Is(err, broker.ErrForbidden) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("error = %v\nwant ErrForbidden ending %s", err, want)
		}
		// 3.10 and 4.0 answer 401 "not authorised to access virtual host";
		// 4.3 answers 404, as for a vhost that does not exist: unknown, so
		// never taken for absent (not ErrVhostNotFound).
		ambiguous := strings.Contains(err.Error(), "RabbitMQ does not say whether it exists")
		if ambiguous != b.Version().AtLeast(4, 3) || errors.Is(err, broker.ErrVhostNotFound) {
			t.Errorf("RabbitMQ %s: error = %v: want the 404 of 4.3 said to be ambiguous, and never ErrVhostNotFound", b.Version(), err)
		}
	})
	t.Run("policymaker without permissions on the vhost", func(t *testing.T) {
		pm, pmPass := b.User(t, "policymaker")
		pc, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: pm, Password: pmPass})
		if err != nil {
			t.Fatal(err)
		}
		err = pc.PutPolicy(ctx, kind.Policy, vh, &topology.Policy{Name: "p", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(1)}})
		if !errors.Is(err, broker.ErrForbidden) || !strings.Contains(err.Error(), fmt.Sprintf("user %q has no permissions on vhost %q", pm, vh)) {
			t.Errorf("error = %v, want ErrForbidden saying %s has no permissions on %s", err, pm, vh)
		}
	})
}

func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestRefusedRegexpReadsAsText: the broker refuses a permission whose
// regular expression it cannot compile with an Erlang term (strings as
// lists of character codes); the error spells it out, on every version.
func TestRefusedRegexpReadsAsText(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	c := connect(t, b)
	vh := b.Vhost(t)
	user, _ := b.User(t, "management")
	err := c.WriteItem(t.Context(), kind.Permission, vh, nil, &topology.Item{Kind: kind.Permission, Name: user,
		Settings: topology.Args{"configure": "(", "write": ".*", "read": ".*"}})
	if err == nil {
		t.Fatal("the broker took configure \"(\"")
	}
	// The words are the PCRE of the broker's Erlang: 4.3.6 (Erlang 29)
	// says "missing closing parenthesis", 4.0.5 and 3.10.8 "missing )".
	why := "missing )"
	if b.Version().AtLeast(4, 3) {
		why = "missing closing parenthesis"
	}
	if want := `refused (400): invalid regular expression "(": ` + why + ` (at offset 1)`; !strings.Contains(err.Error(), want) {
		t.Errorf("error:\n%v\nwant it to say %s", err, want)
	}
}

// TestDialWithoutVhostPermissions: an AMQP connection to a vhost the user
// has no permissions on is refused by the broker with NOT_ALLOWED "access
// to vhost … refused", naming neither permissions nor the fix; the error
// now says that the user has no permissions there, and the set_permissions
// command (dlq peek and replay met it so, with the broker's words alone).
func TestDialWithoutVhostPermissions(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t)
	user, pass := b.User(t, "management")
	_, err := broker.DialAMQP(t.Context(), broker.AMQPDial{URL: b.AMQPURLFor(user, pass, ""), Vhost: vh})
	want := fmt.Sprintf(`: user %q has no permissions on vhost %q (an administrator grants them: rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ)`, user, vh, vh, user)
	if err == nil || !strings.Contains(err.Error(), "NOT_ALLOWED - access to vhost") || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), pass) {
		t.Errorf("RabbitMQ %s: error %v\nwant the broker's NOT_ALLOWED, ending %s", b.Version(), err, want)
	}
}

// TestDialAMQPWrongPassword: a refused AMQP login says where the
// credentials come from (the broker's "username or password not allowed"
// alone named no fix), and never shows the password. The same answer on
// 4.3.6, 4.0.5 and 3.10.8.
func TestDialAMQPWrongPassword(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t)
	const wrong = "not-the-password-42"
	raw := strings.TrimSuffix(b.AMQPURLFor(b.Username, wrong, ""), "/")
	_, err := broker.DialAMQP(t.Context(), broker.AMQPDial{URL: raw, Vhost: vh})
	want := fmt.Sprintf("cannot open an AMQP connection to %s:%d for vhost %q: username or password not allowed: check the user and password: --amqp-url's own, when it has some, else --username and --password", b.AMQPHost, b.AMQPPort, vh)
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
	if err != nil && strings.Contains(err.Error(), wrong) {
		t.Errorf("error shows the password: %v", err)
	}
}

// TestDialAMQPNoSuchVhost: a vhost that does not exist is named as such,
// with the fix, where the broker says only "NOT_ALLOWED - vhost … not
// found" (4.3.6, 4.0.5 and 3.10.8 alike).
func TestDialAMQPNoSuchVhost(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t) + "-absent"
	raw := strings.TrimSuffix(b.AMQPURL(""), "/")
	_, err := broker.DialAMQP(t.Context(), broker.AMQPDial{URL: raw, Vhost: vh})
	want := fmt.Sprintf("cannot open an AMQP connection to %s:%d for vhost %q: NOT_ALLOWED - vhost %s not found: there is no vhost %q on the broker; check its name (--vhost), or create it: mqctl apply the file that declares it", b.AMQPHost, b.AMQPPort, vh, vh, vh)
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}
