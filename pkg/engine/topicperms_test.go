package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestReplaceKeepsTopicPermissions: RabbitMQ 4.3.6 keeps a topic
// permission under its exchange and deletes it with the exchange, so the
// replace of an exchange (an argument changed) deleted every user's topic
// permission for it: the apply left them gone (a user's restriction on the
// exchange lifted), and the next plan created the file's again. Now the
// plan writes the file's topic permissions for the exchange again after
// the replace (an update of that user's, saying why), the plan after the
// apply is empty, and a topic permission the file does not declare is
// named in a note with the command that sets it again. 4.0.5 and 3.10.8
// keep topic permissions when their exchange goes: nothing to do or say.
//
// Not parallel: a users section (see TestTopicPermissionForAMissingExchange).
func TestReplaceKeepsTopicPermissions(t *testing.T) {
	f := newFixture(t)
	f.b.UsersSection(t)
	ctx := context.Background()
	u := testbroker.Name(t, "mqctl-tp")
	t.Cleanup(func() { _ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", u) })
	other, _ := f.b.User(t)
	src := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      app.x: { type: topicARGS }
      app.y: { type: topic }
      app.ae: { type: fanout }
    queues:
      app.q:
        bindings: [{ exchange: app.x, routing_key: a }]
users:
  ${U}:
    password: pw
    topic_permissions:
      ${VHOST}:
        - { exchange: app.x, write: "^a$", read: "^a$" }
        - { exchange: app.y, write: "^y$", read: "^y$" }
`
	load := func(args string) *topology.Topology {
		t.Helper()
		env := map[string]string{"VHOST": f.vhost, "U": u}
		top, err := loader.LoadBytes("topology.yaml", []byte(strings.Replace(src, "ARGS", args, 1)), loader.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		if err != nil {
			t.Fatal(err)
		}
		top.Vhosts[f.vhost].Description = "mqctl test " + t.Name()
		return top
	}
	before, after := load(""), load(", arguments: { alternate-exchange: app.ae }")
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: before}, engine.ApplyOptions{NoPreflight: true}); err != nil {
		t.Fatal(err)
	}
	testbroker.Check(t)(f.b.RH.UpdateTopicPermissionsIn(f.vhost, other, rabbithole.TopicPermissions{Exchange: "app.x", Write: "^w$", Read: "^r$"}))
	f.notes = nil
	p := f.plan(after)
	goes := f.b.Version().AtLeast(4, 3)
	var restored *plan.Change
	for i := range p.Changes {
		if c := &p.Changes[i]; c.Kind == kind.TopicPermission {
			restored = c
		}
	}
	note := fmt.Sprintf(`deletes user %q's topic permissions for them (RabbitMQ 4.3 keeps a topic permission under its exchange), which the file does not declare, so mqctl does not write them again: set them again after the apply (rabbitmqctl set_topic_permissions -p %s %s app.x '^w$' '^r$')`, other, f.vhost, other)
	noted := strings.Contains(strings.Join(f.ownNotes(), "\n"), note)
	if goes {
		if restored == nil || restored.Action != plan.Update || restored.Name != u || len(restored.Fields) != 1 || restored.Fields[0].Field != "settings.app.x" || !strings.Contains(restored.Reason, `the replace of exchange(s) "app.x" deletes the topic permissions for them`) {
			t.Errorf("RabbitMQ %s: the topic permission change %+v; want an update of %s's, writing app.x again", f.b.Version(), restored, u)
		}
		if !noted {
			t.Errorf("RabbitMQ %s: notes %q; want one holding %s", f.b.Version(), f.ownNotes(), note)
		}
	} else if restored != nil || noted {
		t.Errorf("RabbitMQ %s keeps topic permissions: change %+v, notes %q; want neither", f.b.Version(), restored, f.ownNotes())
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: after}, engine.ApplyOptions{AllowReplace: true, NoPreflight: true}); err != nil {
		t.Fatal(err)
	}
	tps, err := f.b.RH.GetTopicPermissionsIn(f.vhost, u)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tp := range tps {
		got[tp.Exchange] = tp.Write + " " + tp.Read
	}
	if want := map[string]string{"app.x": "^a$ ^a$", "app.y": "^y$ ^y$"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("RabbitMQ %s: %s's topic permissions after the replace: %v, want %v", f.b.Version(), u, got, want)
	}
	if p := f.plan(after); !p.Empty() {
		t.Errorf("the plan after the apply: %v", changes(p))
	}
}

// TestUnreadTopicPermissionsNote: a user who is not an administrator
// cannot read topic permissions, and on RabbitMQ 4.3 the plan of a replace
// of an exchange noted that it may delete topic permissions mqctl cannot
// read, for every exchange replaced. RabbitMQ checks a topic permission
// only on a topic exchange's routing keys (check_topic_authorisation in
// rabbit_channel and rabbit_amqp_session at v4.3.5), so for an exchange
// that is not a topic exchange after the replace the note was noise: a
// topic permission for it restricts nothing, before or after. The note now
// names the replaced exchanges that are topic exchanges after the replace,
// and is left out when there are none. 4.0.5 and 3.10.8 keep topic
// permissions when their exchange goes: no note.
func TestUnreadTopicPermissionsNote(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	file := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      app.d: { type: DTYPEDARGS }
      app.t: { type: topicTARGS }
      app.ae: { type: fanout }
`
	load := func(dtype, dargs, targs string) *topology.Topology {
		return f.desired(strings.NewReplacer("DTYPE", dtype, "DARGS", dargs, "TARGS", targs).Replace(file))
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: load("direct", "", "")}, engine.ApplyOptions{NoPreflight: true}); err != nil {
		t.Fatal(err)
	}
	user, pw := f.b.User(t, "management")
	f.b.Permit(t, user, f.vhost)
	c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%d", f.b.AMQPHost, f.b.AMQPPort), Note: func(n string) { notes = append(notes, n) }})
	ae := ", arguments: { alternate-exchange: app.ae }"
	goes := f.b.Version().AtLeast(4, 3)
	for _, tc := range []struct {
		name                string
		dtype, dargs, targs string
		replaced            int
		noted               string // the exchanges the note names on 4.3; "" for no note
	}{
		{"a direct exchange replaced", "direct", ae, "", 1, ""},
		{"a direct and a topic exchange replaced", "direct", ae, ae, 2, `"app.t"`},
		{"a direct exchange replaced by a topic exchange", "topic", "", "", 1, `"app.d"`},
	} {
		notes = nil
		res, err := eng.Plan(ctx, load(tc.dtype, tc.dargs, tc.targs), engine.PlanOptions{})
		if err != nil {
			t.Fatalf("%s: plan: %v", tc.name, err)
		}
		if got := res.Plan.Summary().Replace; got != tc.replaced {
			t.Fatalf("%s: %d replaces (%v), want %d", tc.name, got, changes(res.Plan), tc.replaced)
		}
		var got []string
		for _, n := range notes {
			if strings.Contains(n, "topic permissions") {
				got = append(got, n)
			}
		}
		want := ""
		if goes && tc.noted != "" {
			want = fmt.Sprintf("the replace of topic exchange(s) %s in vhost %q deletes any topic permissions users have for them (RabbitMQ 4.3 keeps a topic permission under its exchange), and mqctl could not read whether there are any", tc.noted, f.vhost)
		}
		switch {
		case want == "" && len(got) > 0:
			t.Errorf("RabbitMQ %s, %s: notes %q; want none on topic permissions", f.b.Version(), tc.name, got)
		case want != "" && (len(got) != 1 || !strings.Contains(got[0], want)):
			t.Errorf("RabbitMQ %s, %s: notes %q; want one holding %s", f.b.Version(), tc.name, got, want)
		}
	}
}
