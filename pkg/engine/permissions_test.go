package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestPermissionsCheckedBeforeTheFirstChange: a user who is not an
// administrator, whose permissions do not cover what the file does, has
// its plan and its apply refused before anything changes, each missing
// permission named with the change that needs it, the object, the user
// and the fix. Before, apply made the changes ordered first and stopped
// where the broker answered ACCESS_REFUSED. RabbitMQ shows such a user
// none of its own permissions: mqctl asks the broker with operations
// that change nothing (broker.Client.MissingPermissions), which 3.10.8,
// 4.0.5 and 4.3.6 answer alike. A user whose permissions cover the file
// applies it, and the plan after is empty.
func TestPermissionsCheckedBeforeTheFirstChange(t *testing.T) {
	t.Parallel()
	const (
		mqctlNames = `mqctl\.lock|mqctl\.ownership\.[0-9]+`
		appOnly    = `^(app\..*|` + mqctlNames + `)$`
		all        = ".*"
	)
	type topicPerm struct{ exchange, read string }
	tests := []struct {
		name                   string
		configure, write, read string
		topic                  *topicPerm
		exchanges              []string // made by an administrator first: name/type
		queues                 []string // likewise
		allowReplace           bool
		file                   string
		want                   []string // lines of the refusal, after the file position; none: the apply passes
		fix                    string   // what the fix says; "": set_permissions on the vhost
	}{
		{
			name:      "a queue outside its configure regexp",
			configure: appOnly, write: all, read: all,
			file: `    exchanges:
      app.x: { type: topic }
    queues:
      app.q:
        bindings: [{ exchange: app.x, routing_key: a }]
      other.q: {}
`,
			want: []string{`topology.yaml:9:7: create queue "other.q" in vhost "${VHOST}" needs configure permission on queue "other.q": the configure regexp of user "${USER}" in vhost "${VHOST}" does not match "other.q"`},
		},
		{
			name:      "a new queue whose dead-letter exchange it may not write to",
			configure: appOnly, write: appOnly, read: all,
			exchanges: []string{"other.dlx/fanout"},
			file: `    exchanges:
      app.x: { type: topic }
    queues:
      app.q:
        arguments: { x-dead-letter-exchange: other.dlx }
        bindings: [{ exchange: app.x, routing_key: a }]
`,
			want: []string{`topology.yaml:7:7: create queue "app.q" in vhost "${VHOST}" with dead-letter exchange "other.dlx" needs write permission on exchange "other.dlx": the write regexp of user "${USER}" in vhost "${VHOST}" does not match "other.dlx"`},
		},
		{
			name:      "a queue replaced with a dead-letter exchange it may not write to",
			configure: appOnly, write: appOnly, read: all,
			exchanges: []string{"other.dlx/fanout"}, queues: []string{"app.q"},
			allowReplace: true,
			file: `    exchanges:
      app.x: { type: topic }
    queues:
      app.q:
        arguments: { x-dead-letter-exchange: other.dlx }
`,
			want: []string{`topology.yaml:7:7: replace queue "app.q" in vhost "${VHOST}" with dead-letter exchange "other.dlx" needs write permission on exchange "other.dlx": the write regexp of user "${USER}" in vhost "${VHOST}" does not match "other.dlx"`},
		},
		{
			name:      "a new queue with a dead-letter exchange, no read on the queue",
			configure: appOnly, write: all, read: `^(other\..*)$`,
			exchanges: []string{"other.dlx/fanout"},
			file: `    exchanges:
      app.x: { type: topic }
    queues:
      app.q:
        arguments: { x-dead-letter-exchange: other.dlx }
`,
			want: []string{`topology.yaml:7:7: create queue "app.q" in vhost "${VHOST}" with dead-letter exchange "other.dlx" needs read permission on queue "app.q": the read regexp of user "${USER}" in vhost "${VHOST}" does not match "app.q"`},
		},
		{
			name:      "a binding from an exchange it may not read",
			configure: appOnly, write: all, read: appOnly,
			exchanges: []string{"other.src/topic"},
			file: `    queues:
      app.q:
        bindings: [{ exchange: other.src, routing_key: a }]
      app.r: {}
`,
			want: []string{`topology.yaml:6:20: create binding other.src -> queue app.q [a] in vhost "${VHOST}" needs read permission on exchange "other.src": the read regexp of user "${USER}" in vhost "${VHOST}" does not match "other.src"`},
		},
		{
			name:      "a binding to a queue it may not write to",
			configure: appOnly, write: `^(app\.x|` + mqctlNames + `)$`, read: all,
			file: `    exchanges:
      app.x: { type: topic }
    queues:
      app.q:
        bindings: [{ exchange: app.x, routing_key: a }]
`,
			want: []string{`topology.yaml:8:20: create binding app.x -> queue app.q [a] in vhost "${VHOST}" needs write permission on queue "app.q": the write regexp of user "${USER}" in vhost "${VHOST}" does not match "app.q"`},
		},
		{
			name:      "an exchange whose alternate exchange it may not write to",
			configure: appOnly, write: appOnly, read: all,
			exchanges: []string{"other.ae/fanout"},
			file: `    exchanges:
      app.a: { type: topic }
      app.x: { type: topic, arguments: { alternate-exchange: other.ae } }
`,
			want: []string{`topology.yaml:6:7: create exchange "app.x" in vhost "${VHOST}" with alternate exchange "other.ae" needs write permission on exchange "other.ae": the write regexp of user "${USER}" in vhost "${VHOST}" does not match "other.ae"`},
		},
		{
			name:      "a binding key its topic permission does not let it read",
			configure: appOnly, write: all, read: all,
			topic:     &topicPerm{exchange: "app.x", read: "^b$"},
			exchanges: []string{"app.x/topic"},
			file: `    exchanges:
      app.x: { type: topic }
    queues:
      app.q:
        bindings: [{ exchange: app.x, routing_keys: [b, a] }]
`,
			want: []string{`create binding app.x -> queue app.q [a] in vhost "${VHOST}" needs the topic permission to read routing key "a" on exchange "app.x": the read regexp of user "${USER}"'s topic permission for that exchange does not match "a"`},
			fix:  `An administrator extends the read regexp of user "${USER}"'s topic permission for exchange "app.x" in vhost "${VHOST}" to match "a": rabbitmqctl set_topic_permissions -p ${VHOST} ${USER} app.x WRITE READ, with WRITE the write regexp it has and READ the read regexp it has extended ('^a$' matches it alone); or the apply can run as a user that has them`,
		},
		{
			name:      "a queue dead-lettering to the default exchange, which it may not write to",
			configure: appOnly, write: appOnly, read: all,
			file: `    queues:
      app.q:
        arguments: { x-dead-letter-exchange: "", x-dead-letter-routing-key: app.dlq }
      app.dlq: {}
`,
			want: []string{`topology.yaml:5:7: create queue "app.q" in vhost "${VHOST}" with dead-letter exchange "" needs write permission on the default exchange ("amq.default" in permissions): the write regexp of user "${USER}" in vhost "${VHOST}" does not match "amq.default"`},
		},
		{
			name:      "mqctl's ownership record outside its configure regexp",
			configure: `^(app\..*|mqctl\.lock)$`, write: all, read: all,
			file: `    queues:
      app.q: {}
`,
			want: []string{`write mqctl's ownership record of vhost "${VHOST}" (an internal exchange) needs configure permission on exchange "mqctl.ownership.1": the configure regexp of user "${USER}" in vhost "${VHOST}" does not match "mqctl.ownership.1"`},
		},
		{
			name:      "two missing, both named",
			configure: appOnly, write: appOnly, read: all,
			exchanges: []string{"other.dlx/fanout"},
			file: `    queues:
      app.q:
        arguments: { x-dead-letter-exchange: other.dlx }
      other.q: {}
`,
			want: []string{
				`topology.yaml:5:7: create queue "app.q" in vhost "${VHOST}" with dead-letter exchange "other.dlx" needs write permission on exchange "other.dlx"`,
				`topology.yaml:7:7: create queue "other.q" in vhost "${VHOST}" needs configure permission on queue "other.q"`,
			},
		},
		{
			name:      "a policy without the policymaker tag, besides a queue",
			configure: appOnly, write: all, read: all,
			file: `    queues:
      app.q: {}
    policies:
      cap: { pattern: "^app\\.", apply_to: queues, definition: { max-length: 10 } }
`,
			want: []string{`topology.yaml:7:7: create policy "cap" in vhost "${VHOST}" needs the policymaker or administrator tag, which user "${USER}" does not have (tags: management)`},
			fix:  `An administrator can give user "${USER}" the policymaker tag, keeping the tags it has (rabbitmqctl set_user_tags ${USER} management policymaker); or the apply can run as a user that has them`,
		},
		{
			// Written after the queues: the queue was declared, then
			// the limits refused (401 "Not administrator user").
			name:      "vhost limits without the administrator tag, besides a queue",
			configure: appOnly, write: all, read: all,
			file: `    queues:
      app.q: {}
    limits: { max-queues: 100 }
`,
			want: []string{`create vhost limits "${VHOST}" needs the administrator tag, which user "${USER}" does not have (tags: management)`},
			fix:  `An administrator can give user "${USER}" the administrator tag, keeping the tags it has (rabbitmqctl set_user_tags ${USER} management administrator); or the apply can run as a user that has them`,
		},
		{
			name:      "permissions that cover the file",
			configure: appOnly, write: `^(app\..*|other\.dlx|` + mqctlNames + `)$`, read: appOnly,
			topic:        &topicPerm{exchange: "app.x", read: "^a$"},
			exchanges:    []string{"other.dlx/fanout", "app.x/topic"},
			queues:       []string{"app.old"},
			allowReplace: true,
			file: `    exchanges:
      app.x: { type: topic, arguments: { alternate-exchange: app.ae } }
      app.ae: { type: fanout }
    queues:
      app.old:
        arguments: { x-dead-letter-exchange: other.dlx }
        bindings: [{ exchange: app.x, routing_key: a }]
      app.q:
        arguments: { x-dead-letter-exchange: other.dlx }
        bindings: [{ exchange: app.x, routing_key: a }]
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := context.Background()
			for _, x := range tt.exchanges {
				name, typ, _ := strings.Cut(x, "/")
				if err := f.c.DeclareExchange(ctx, f.vhost, &topology.Exchange{Name: name, Type: typ, Durable: true}); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range tt.queues {
				if err := f.c.DeclareQueue(ctx, f.vhost, &topology.Queue{Name: q, Type: topology.QueueClassic, Durable: true}); err != nil {
					t.Fatal(err)
				}
			}
			user, pw := f.b.User(t, "management")
			testbroker.Check(t)(f.b.RH.UpdatePermissionsIn(f.vhost, user, rabbithole.Permissions{Configure: tt.configure, Write: tt.write, Read: tt.read}))
			if tt.topic != nil {
				testbroker.Check(t)(f.b.RH.UpdateTopicPermissionsIn(f.vhost, user, rabbithole.TopicPermissions{Exchange: tt.topic.exchange, Write: ".*", Read: tt.topic.read}))
			}
			c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pw})
			if err != nil {
				t.Fatal(err)
			}
			var notes []string
			eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%d", f.b.AMQPHost, f.b.AMQPPort), Note: func(n string) { notes = append(notes, n) }})
			src := "version: 1\nvhosts:\n  ${VHOST}:\n" + tt.file
			before := brokerObjects(t, f)
			// A plan needs no more than access to the vhost: it is shown,
			// and says that apply would be refused.
			planned, planErr := eng.Plan(ctx, f.desired(src), engine.PlanOptions{})
			if planErr != nil || planned.Plan.Empty() {
				t.Fatalf("plan: %v; want the changes shown", planErr)
			}
			var planNote error
			for _, n := range notes {
				if strings.HasPrefix(n, "apply would be refused") {
					planNote = errors.New(n)
				}
			}
			_, applyErr := eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{AllowReplace: tt.allowReplace, NoPreflight: true})
			if len(tt.want) == 0 {
				if planNote != nil || applyErr != nil {
					t.Fatalf("plan: %v\napply: %v\nwant both to pass", planNote, applyErr)
				}
				res, err := eng.Plan(ctx, f.desired(src), engine.PlanOptions{})
				if err != nil || !res.Plan.Empty() {
					t.Fatalf("the plan after the apply: %v %v", err, changes(res.Plan))
				}
				return
			}
			heads := map[string]string{"plan": "apply would be refused before any change", "apply": "apply refused, nothing was changed"}
			for what, err := range map[string]error{"plan": planNote, "apply": applyErr} {
				if err == nil {
					t.Fatalf("%s passed; want it refused", what)
				}
				msg := err.Error()
				head := fmt.Sprintf("%s: user %q lacks permissions this plan needs, and RabbitMQ would refuse them part way through the apply", heads[what], user)
				fix := fmt.Sprintf("An administrator can extend the regexps to match these names (rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ", f.vhost, user)
				if tt.fix != "" {
					fix = strings.NewReplacer("${VHOST}", f.vhost, "${USER}", user).Replace(tt.fix)
				}
				if !strings.HasPrefix(msg, head) || !strings.Contains(msg, fix) {
					t.Errorf("%s: error\n%s\nwant it to begin %q and hold %q", what, msg, head, fix)
				}
				lines := strings.Split(msg, "\n")
				refusals := 0
				for _, l := range lines {
					if strings.HasPrefix(l, "  ") {
						refusals++
					}
				}
				if refusals != len(tt.want) {
					t.Errorf("%s: %d refusals, want %d:\n%s", what, refusals, len(tt.want), msg)
				}
				for _, w := range tt.want {
					w = strings.NewReplacer("${VHOST}", f.vhost, "${USER}", user).Replace(w)
					if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  ") && strings.Contains(l, w) }) {
						t.Errorf("%s: error\n%s\nwant a line holding\n  %s", what, msg, w)
					}
				}
			}
			if after := brokerObjects(t, f); !slices.Equal(after, before) {
				t.Errorf("the refused apply changed the broker:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// brokerObjects lists the exchanges, queues (with their arguments) and
// bindings of the fixture's vhost, as an administrator sees them.
func brokerObjects(t *testing.T, f *fixture) []string {
	t.Helper()
	var out []string
	xs, err := f.b.RH.ListExchangesIn(f.vhost)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		out = append(out, fmt.Sprintf("exchange %s %s %v", x.Name, x.Type, x.Arguments))
	}
	qs, err := f.b.RH.ListQueuesIn(f.vhost)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		out = append(out, fmt.Sprintf("queue %s %v", q.Name, q.Arguments))
	}
	bs, err := f.b.RH.ListBindingsIn(f.vhost)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		out = append(out, fmt.Sprintf("binding %s %s %s %s", b.Source, b.DestinationType, b.Destination, b.RoutingKey))
	}
	slices.Sort(out)
	return out
}

// TestTopicKeysOfANewTopicExchange: RabbitMQ checks a topic permission on
// a binding's key only on a topic exchange that exists, so the check
// cannot ask it for the bindings from a topic exchange the apply creates.
// 3.10.8 and 4.0.5 keep a topic permission for an exchange the vhost does
// not have, and refuse such a binding part way through the apply: the
// plan and the apply say, once for the vhost, that these keys were not
// checked (before, nothing was said, and the check passed). 4.3.6 refuses
// a topic permission for an exchange the vhost does not have (from
// 4.3.2), and deletes it with its exchange: there is nothing to check, and
// nothing is said.
func TestTopicKeysOfANewTopicExchange(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	user, pw := f.b.User(t, "management")
	all := ".*"
	testbroker.Check(t)(f.b.RH.UpdatePermissionsIn(f.vhost, user, rabbithole.Permissions{Configure: all, Write: all, Read: all}))
	resp, err := f.b.RH.UpdateTopicPermissionsIn(f.vhost, user, rabbithole.TopicPermissions{Exchange: "app.x", Write: all, Read: "^b$"})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	needsExchange := f.c.RabbitMQVersion().TopicPermissionNeedsExchange()
	if needsExchange != (err != nil) {
		t.Fatalf("a topic permission for an exchange the vhost does not have: %v; want it refused: %v", err, needsExchange)
	}
	c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%d", f.b.AMQPHost, f.b.AMQPPort), Note: func(n string) { notes = append(notes, n) }})
	src := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      app.x: { type: topic }
      app.d: { type: direct }
    queues:
      app.q:
        bindings: [{ exchange: app.x, routing_keys: [b, a] }, { exchange: app.d, routing_key: a }]
`
	if _, err := eng.Plan(ctx, f.desired(src), engine.PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`mqctl could not check before the apply the topic permissions of user %q on the routing keys of 2 binding(s) from topic exchange(s) "app.x" in vhost %q, which the apply creates`, user, f.vhost)
	said := 0
	for _, n := range notes {
		if strings.Contains(n, "topic permissions of user") {
			said++
			if !strings.HasPrefix(n, want) {
				t.Errorf("note\n  %s\nwant it to begin\n  %s", n, want)
			}
		}
	}
	if wantSaid := map[bool]int{false: 1, true: 0}[needsExchange]; said != wantSaid {
		t.Errorf("%d notes about topic permissions, want %d: %q", said, wantSaid, notes)
	}
	_, err = eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{NoPreflight: true})
	if needsExchange != (err == nil) {
		t.Errorf("apply: %v; want it to pass: %v (the binding with key a refused where the topic permission is kept)", err, needsExchange)
	}
}

// TestReplaceOfATopicExchangeUnderATopicPermission: a user whose topic
// permission for a topic exchange does not let it read the key of a
// binding from it (an administrator made the binding) replaces the
// exchange (an argument changed). Where the broker keeps topic
// permissions in Khepri, under their exchange (4.3.6), the replace's
// delete takes the topic permission with it, and the binding is restored
// with none to check: the apply passes, and the plan after it is empty.
// Before, the check asked the topic permission the replace deletes, and
// refused the apply. Where it is kept (Mnesia: 4.0.5, 3.10.8), the
// restore of that binding would be refused part way: the check refuses
// the apply before anything changes, naming the topic permission and the
// key.
func TestReplaceOfATopicExchangeUnderATopicPermission(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	before := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      app.x: { type: topic }
    queues:
      app.q:
        bindings: [{ exchange: app.x, routing_keys: [a, b] }]
`
	after := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      app.x: { type: topic, arguments: { alternate-exchange: app.ae } }
      app.ae: { type: fanout }
    queues:
      app.q:
        bindings: [{ exchange: app.x, routing_keys: [a, b] }]
`
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(before)}, engine.ApplyOptions{NoPreflight: true}); err != nil {
		t.Fatal(err)
	}
	user, pw := f.b.User(t, "management")
	all := ".*"
	testbroker.Check(t)(f.b.RH.UpdatePermissionsIn(f.vhost, user, rabbithole.Permissions{Configure: all, Write: all, Read: all}))
	testbroker.Check(t)(f.b.RH.UpdateTopicPermissionsIn(f.vhost, user, rabbithole.TopicPermissions{Exchange: "app.x", Write: all, Read: "^a$"}))
	c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%d", f.b.AMQPHost, f.b.AMQPPort), Note: func(n string) { notes = append(notes, n) }})
	if _, err := eng.Plan(ctx, f.desired(after), engine.PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	objects := brokerObjects(t, f)
	_, applyErr := eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(after)}, engine.ApplyOptions{AllowReplace: true, NoPreflight: true})
	var refusal []string
	for _, n := range notes {
		if strings.HasPrefix(n, "apply would be refused") {
			refusal = append(refusal, n)
		}
	}
	goes := f.b.Version().AtLeast(4, 3)
	if goes {
		if len(refusal) > 0 || applyErr != nil {
			t.Fatalf("RabbitMQ %s: plan %q, apply %v; want both to pass (the replace deletes the topic permission)", f.b.Version(), refusal, applyErr)
		}
		tps, err := f.b.RH.GetTopicPermissionsIn(f.vhost, user)
		if err == nil && len(tps) > 0 {
			t.Errorf("RabbitMQ %s: topic permissions after the replace: %v; want the replace to have deleted it", f.b.Version(), tps)
		}
		if p := f.plan(f.desired(after)); !p.Empty() {
			t.Errorf("the plan after the apply: %v", changes(p))
		}
		return
	}
	want := fmt.Sprintf(`restore binding app.x -> queue app.q [b] in vhost %q after the replace of exchange "app.x" needs the topic permission to read routing key "b" on exchange "app.x"`, f.vhost)
	if len(refusal) != 1 || !strings.Contains(refusal[0], want) || applyErr == nil || !strings.Contains(applyErr.Error(), want) {
		t.Fatalf("RabbitMQ %s: plan %q, apply %v; want both refused: %s", f.b.Version(), refusal, applyErr, want)
	}
	if got := brokerObjects(t, f); !slices.Equal(got, objects) {
		t.Errorf("the refused apply changed the broker:\nbefore %v\nafter  %v", objects, got)
	}
}

// TestRestoreListPermission: a replace that takes down a binding the file
// does not declare (another team's queue bound to a replaced exchange)
// writes it down first, as an internal exchange mqctl.restore.<n>, which
// takes configure on that name. The check asked nothing of it: a user
// whose configure regexp covered the file, the lock and the ownership
// record (as README advised) had its plan pass the check, and its apply
// refused by the broker at that first write, without the fix. Now the
// check names it; with the restore lists in its regexp, the apply passes,
// and puts the binding back.
func TestRestoreListPermission(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	file := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      app.x: { type: topicARGS }
      app.ae: { type: fanout }
    queues:
      app.q:
        bindings: [{ exchange: app.x, routing_key: a }]
`
	before := f.desired(strings.Replace(file, "ARGS", "", 1))
	after := func() *topology.Topology {
		return f.desired(strings.Replace(file, "ARGS", ", arguments: { alternate-exchange: app.ae }", 1))
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: before}, engine.ApplyOptions{NoPreflight: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeclareQueue(ctx, f.vhost, &topology.Queue{Name: "team.q", Type: topology.QueueClassic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeclareBinding(ctx, f.vhost, &topology.Binding{Source: "app.x", Destination: "team.q", DestinationType: topology.DestQueue, RoutingKey: "t"}); err != nil {
		t.Fatal(err)
	}
	user, pw := f.b.User(t, "management")
	c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%d", f.b.AMQPHost, f.b.AMQPPort)})
	want := fmt.Sprintf(`the replaces in vhost %q take down that the file does not declare needs configure permission on exchange "mqctl.restore.1": the configure regexp of user %q in vhost %q does not match "mqctl.restore.1"`, f.vhost, user, f.vhost)
	for _, tc := range []struct {
		configure string
		refused   bool
	}{
		{`^(app\..*|mqctl\.lock|mqctl\.ownership\.[0-9]+)$`, true},
		{`^(app\..*|mqctl\.lock|mqctl\.ownership\.[0-9]+|mqctl\.restore\.[0-9]+)$`, false},
	} {
		testbroker.Check(t)(f.b.RH.UpdatePermissionsIn(f.vhost, user, rabbithole.Permissions{Configure: tc.configure, Write: `^(app\..*|team\.q)$`, Read: `^app\..*$`}))
		objects := brokerObjects(t, f)
		_, err := eng.Apply(ctx, engine.ApplyInput{Desired: after()}, engine.ApplyOptions{AllowReplace: true, NoPreflight: true})
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), "apply refused, nothing was changed") || !strings.Contains(err.Error(), want) {
				t.Fatalf("configure %s: apply: %v\nwant it refused by the check: %s", tc.configure, err, want)
			}
			if strings.Contains(err.Error(), "out of the file") {
				t.Errorf("the refusal advises leaving objects out of the file, which does not declare the restore list: %v", err)
			}
			if got := brokerObjects(t, f); !slices.Equal(got, objects) {
				t.Errorf("the refused apply changed the broker:\nbefore %v\nafter  %v", objects, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("configure %s: apply: %v", tc.configure, err)
		}
		if got := brokerObjects(t, f); !slices.Contains(got, "binding app.x queue team.q t") {
			t.Errorf("team.q's binding was not put back: %v", got)
		}
		if p := f.plan(after()); !p.Empty() {
			t.Errorf("the plan after the apply: %v", changes(p))
		}
	}
}

// TestAdministratorPermissionsChecked: the administrator tag grants no
// permissions on a vhost, and the check skipped administrators: one whose
// configure regexp did not cover the file had its apply refused part way,
// after the changes before. Now it reads its own permissions: narrower
// than everything, the broker is asked as for any user, and the apply is
// refused before any change; none on the vhost, the plan says so; all of
// them, it passes.
func TestAdministratorPermissionsChecked(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	user, pw := f.b.User(t, "administrator")
	c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%d", f.b.AMQPHost, f.b.AMQPPort), Note: func(n string) { notes = append(notes, n) }})
	src := f.desired(`version: 1
vhosts:
  ${VHOST}:
    queues:
      app.q: {}
      zzz.q: {}
`)
	// None: the plan says so (the apply's lock is refused before anything,
	// by the broker).
	notes = nil
	if _, err := eng.Plan(ctx, src, engine.PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`user %q has no permissions on vhost %q (an administrator grants them: rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ)`, user, f.vhost, f.vhost, user); !strings.Contains(strings.Join(notes, "\n"), want) {
		t.Errorf("plan notes %q; want one holding %s", notes, want)
	}
	testbroker.Check(t)(f.b.RH.UpdatePermissionsIn(f.vhost, user, rabbithole.Permissions{Configure: `^(app\..*|mqctl\..*)$`, Write: ".*", Read: ".*"}))
	objects := brokerObjects(t, f)
	_, err = eng.Apply(ctx, engine.ApplyInput{Desired: src}, engine.ApplyOptions{NoPreflight: true})
	want := fmt.Sprintf(`create queue "zzz.q" in vhost %q needs configure permission on queue "zzz.q": the configure regexp of user %q in vhost %q does not match "zzz.q"`, f.vhost, user, f.vhost)
	if err == nil || !strings.HasPrefix(err.Error(), "apply refused, nothing was changed") || !strings.Contains(err.Error(), want) {
		t.Fatalf("apply: %v\nwant it refused before any change: %s", err, want)
	}
	if got := brokerObjects(t, f); !slices.Equal(got, objects) {
		t.Errorf("the refused apply changed the broker:\nbefore %v\nafter  %v", objects, got)
	}
	f.b.Permit(t, user, f.vhost)
	if _, err := eng.Apply(ctx, engine.ApplyInput{Desired: src}, engine.ApplyOptions{NoPreflight: true}); err != nil {
		t.Fatalf("with every permission: %v", err)
	}
}
