package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

const pendingFile = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      x1: { type: direct }
`

// theirBinding is another team's binding on x1, which a replace of x1
// took down.
var theirBinding = &topology.Binding{Source: "x1", Destination: "theirs", DestinationType: topology.DestQueue, RoutingKey: "t"}

// leaveRestoreList makes the state an apply killed after its first delete
// of a replace leaves: another team's queue, whose binding to x1 is gone,
// and the restore list listing it (restore.go).
func leaveRestoreList(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	if err := f.c.DeclareQueue(ctx, f.vhost, &topology.Queue{Name: "theirs", Type: topology.QueueClassic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeclareExchange(ctx, f.vhost, ownership.RestoreExchange(7, []*topology.Binding{theirBinding})); err != nil {
		t.Fatal(err)
	}
}

// TestPendingWorkIsPlanned: an apply with no change to make still puts
// back the bindings of a restore list left by an apply killed during a
// replace (and deletes the list), and finishes an ownership record swap
// a killed apply left as two exchanges. Before, the plan said "No
// changes" (--detailed-exitcode 0) while apply re-declared the bindings
// and deleted the list; and apply did not finish the swap at all unless
// other changes ran. Now the plan lists each (text and JSON records,
// Plan.Records, so exit 2), apply does it, and the plan after is empty.
func TestPendingWorkIsPlanned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		leave func(t *testing.T, f *fixture)
		cause string
		text  []string
		after func(t *testing.T, f *fixture)
	}{
		{
			name:  "restore list",
			leave: leaveRestoreList,
			cause: plan.RecordRestore,
			text:  []string{"No change to the file's objects:", `took down 1 binding that the file does not declare (restore list mqctl.restore.7): apply declares it again`, "x1 -> queue theirs [t]"},
			after: func(t *testing.T, f *fixture) {
				rec := f.record()
				if len(rec.RestoreLists) > 0 {
					t.Errorf("restore lists left after the apply: %v", rec.RestoreLists)
				}
				if got := brokerObjects(t, f); !slices.Contains(got, "binding x1 queue theirs t") {
					t.Errorf("their binding was not put back: %v", got)
				}
			},
		},
		{
			name: "unfinished record swap",
			leave: func(t *testing.T, f *fixture) {
				rec := f.record()
				next := ownership.OwnerExchange("", f.vhost, rec.Generation+1, rec.Managed)
				if err := f.c.DeclareExchange(context.Background(), f.vhost, next); err != nil {
					t.Fatal(err)
				}
				if got := f.record(); len(got.Exchanges) != 2 {
					t.Fatalf("the record is %v, want two exchanges", got.Exchanges)
				}
			},
			cause: plan.RecordUnfinished,
			text:  []string{"Only mqctl's ownership record changes:", "left as several exchanges by an apply stopped while rewriting it: apply writes it as one exchange again"},
			after: func(t *testing.T, f *fixture) {
				if rec := f.record(); len(rec.Exchanges) != 1 || len(rec.Managed) != 1 {
					t.Errorf("the record after the apply: exchanges %v, %d objects; want one exchange listing x1", rec.Exchanges, len(rec.Managed))
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := context.Background()
			if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(pendingFile)}, engine.ApplyOptions{NoPreflight: true}); err != nil {
				t.Fatal(err)
			}
			tc.leave(t, f)
			p := f.plan(f.desired(pendingFile))
			if !p.Empty() || !p.Records() {
				t.Fatalf("plan: changes %v, records %v; want no change and the pending work as records (exit 2)", changes(p), p.RecordChanges())
			}
			var causes []string
			for _, r := range p.RecordChanges() {
				causes = append(causes, r.Cause)
			}
			if !slices.Equal(causes, []string{tc.cause}) {
				t.Errorf("record changes %v, want [%s]", causes, tc.cause)
			}
			var text, js bytes.Buffer
			if err := plan.WriteText(&text, p, plan.RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.text {
				if !strings.Contains(text.String(), want) {
					t.Errorf("the text plan does not say %q:\n%s", want, text.String())
				}
			}
			if err := plan.WriteJSON(&js, p); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`"cause": %q`, tc.cause); !strings.Contains(js.String(), want) {
				t.Errorf("the JSON plan has no %s:\n%s", want, js.String())
			}
			if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(pendingFile)}, engine.ApplyOptions{NoPreflight: true}); err != nil {
				t.Fatal(err)
			}
			tc.after(t, f)
			if p := f.plan(f.desired(pendingFile)); !p.Empty() || p.Records() {
				t.Errorf("the plan after the apply: changes %v, records %v", changes(p), p.RecordChanges())
			}
		})
	}
}

// TestLeftRestoreListPermission: the restore lists an earlier killed
// apply left are deleted (and their bindings put back) by the next apply,
// with changes or without; a user without configure on their names had
// the note that the list could not be deleted at every apply, for ever.
// Now the check before the apply asks for it: refused before anything
// changes, naming the list and the permission, with the set_permissions
// fix and not the advice to leave objects out of the file (which does not
// declare the list); granted, the apply deletes the list and puts its
// binding back.
func TestLeftRestoreListPermission(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(pendingFile)}, engine.ApplyOptions{NoPreflight: true}); err != nil {
		t.Fatal(err)
	}
	leaveRestoreList(t, f)
	user, pw := f.b.User(t, "management")
	c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%d", f.b.AMQPHost, f.b.AMQPPort), Note: func(n string) { notes = append(notes, n) }})
	want := fmt.Sprintf(`delete the restore list "mqctl.restore.7" of vhost %q (an internal exchange), left by an apply stopped during a replace, once its bindings are back needs configure permission on exchange "mqctl.restore.7": the configure regexp of user %q in vhost %q does not match "mqctl.restore.7"`, f.vhost, user, f.vhost)
	for _, tc := range []struct {
		configure string
		refused   bool
	}{
		{`^(x1|theirs|mqctl\.lock|mqctl\.ownership\.[0-9]+)$`, true},
		{`^(x1|theirs|mqctl\.lock|mqctl\.ownership\.[0-9]+|mqctl\.restore\.[0-9]+)$`, false},
	} {
		testbroker.Check(t)(f.b.RH.UpdatePermissionsIn(f.vhost, user, rabbithole.Permissions{Configure: tc.configure, Write: `^(x1|theirs)$`, Read: `^x1$`}))
		objects := brokerObjects(t, f)
		notes = nil
		_, err := eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(pendingFile)}, engine.ApplyOptions{NoPreflight: true})
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), "apply refused, nothing was changed") || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "set_permissions") {
				t.Fatalf("configure %s: apply: %v\nwant it refused by the check: %s, with the set_permissions fix", tc.configure, err, want)
			}
			if strings.Contains(err.Error(), "out of the file") {
				t.Errorf("the refusal advises leaving objects out of the file, which does not declare the restore list: %v", err)
			}
			if got := brokerObjects(t, f); !slices.Equal(got, objects) {
				t.Errorf("the refused apply changed the broker:\nbefore %v\nafter  %v", objects, got)
			}
			if rec := f.record(); len(rec.RestoreLists) != 1 {
				t.Errorf("restore lists after the refused apply: %v", rec.RestoreLists)
			}
			continue
		}
		if err != nil {
			t.Fatalf("configure %s: apply: %v", tc.configure, err)
		}
		for _, n := range notes {
			if strings.Contains(n, "could not be deleted") {
				t.Errorf("note: %s", n)
			}
		}
		if rec := f.record(); len(rec.RestoreLists) > 0 {
			t.Errorf("restore lists left after the apply: %v", rec.RestoreLists)
		}
		if got := brokerObjects(t, f); !slices.Contains(got, "binding x1 queue theirs t") {
			t.Errorf("their binding was not put back: %v", got)
		}
	}
}
