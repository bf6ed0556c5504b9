package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/engine"
)

// TestReplaceRefusesClientsBindings: replacing an exchange takes down the
// bindings of a client's exclusive queue, which only the client's own
// connection may bind again: plan says so in a note, apply refuses it
// before anything changes without AllowDataLoss, and with it replaces the
// exchange, the client's binding gone. Before, plan listed no such binding
// and said "no message goes anywhere else", and apply replaced the
// exchange at once: the subscriber received nothing after (found by the
// third live hunt).
func TestReplaceRefusesClientsBindings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const before = "version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n      ev: { type: direct }\n    queues:\n      mine: { bindings: [{ exchange: ev, routing_key: m }] }\n"
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(before)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(q.Name, "k", "ev", false, nil); err != nil {
		t.Fatal(err)
	}

	after := f.desired(strings.Replace(before, "direct", "topic", 1))
	f.notes = nil
	f.plan(after)
	want := `exchange "ev" in vhost "` + f.vhost + `" is replaced, which takes down 1 binding to exclusive or server-named queues (a client's own, which only its connection may bind: apply restores none of them): ev -> queue ` + q.Name + ` [k]`
	if notes := strings.Join(f.ownNotes(), "\n"); !strings.Contains(notes, want) {
		t.Errorf("plan's notes:\n%s\nwant one saying %s", notes, want)
	}

	_, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: after}, engine.ApplyOptions{AllowReplace: true})
	if !errors.Is(err, apply.ErrRefused) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("apply: %v, want a refusal saying %s", err, want)
	}
	if got := f.exchangeType("ev"); got != "direct" {
		t.Errorf("exchange ev is %s after the refusal, want direct (nothing changed)", got)
	}

	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: after}, engine.ApplyOptions{AllowReplace: true, AllowDataLoss: true}); err != nil {
		t.Fatalf("apply with AllowDataLoss: %v", err)
	}
	if got := f.exchangeType("ev"); got != "topic" {
		t.Errorf("exchange ev is %s, want topic", got)
	}
	if p := f.plan(after); !p.Empty() {
		t.Errorf("the second plan is not empty: %v", changes(p))
	}
}

// exchangeType is the type of exchange name in f's vhost, as the broker
// reports it.
func (f *fixture) exchangeType(name string) string {
	f.t.Helper()
	x, _, err := f.c.ReadTopology(context.Background(), []string{f.vhost})
	if err != nil {
		f.t.Fatal(err)
	}
	e := x.Vhosts[f.vhost].Exchanges[name]
	if e == nil {
		return ""
	}
	return e.Type
}
