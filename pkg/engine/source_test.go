package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
)

// sourceFile is a vhost with what the definitions export of RabbitMQ 4.3
// leaves out or holds differently (an internal exchange, an
// exchange-to-exchange binding, a binding with arguments, a policy) and
// twenty queues, each bound to events when bound is true.
func sourceFile(bound bool) string {
	var sb strings.Builder
	sb.WriteString(`version: 1
vhosts:
  ${VHOST}:
    exchanges:
      events: { type: topic }
      hidden: { type: fanout, internal: true }
      match: { type: headers }
    queues:
      hdr: {}
      behind: {}
`)
	for i := range 20 {
		if bound {
			fmt.Fprintf(&sb, "      q%02d: { bindings: [{ exchange: events, routing_key: \"k.%02d.#\" }] }\n", i, i)
		} else {
			fmt.Fprintf(&sb, "      q%02d: {}\n", i)
		}
	}
	sb.WriteString(`    bindings:
      - { source: events, destination: hidden, destination_type: exchange, routing_key: "#" }
      - { source: hidden, destination: behind, destination_type: queue }
      - { source: match, destination: hdr, destination_type: queue, arguments: { x-match: all, region: eu, tier: 2 } }
    policies:
      cap: { pattern: "^q", apply_to: queues, definition: { max-length: 1000 } }
`)
	return sb.String()
}

// TestPlanThroughEitherRead: after an apply, an administrator's plan reads
// the vhost from its definitions export on RabbitMQ 4.3 (from the lists on
// 4.0 and 3.10, where they are the quicker read) and a user with the
// management tag only plans through the lists (the export needs the
// administrator tag): both plans are empty, with one fingerprint. An apply
// that then drops 20 bindings deletes them by their properties_key, which
// the definitions export does not carry (one listing of the vhost's
// bindings gives them), and the next plan is empty.
func TestPlanThroughEitherRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(sourceFile(true))}, engine.ApplyOptions{}); err != nil || !out.Result.OK() {
		t.Fatalf("apply: %v", err)
	}

	user, pass := f.b.User(t, "management")
	f.b.Permit(t, user, f.vhost)
	uc, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pass})
	if err != nil {
		t.Fatal(err)
	}
	wantSource := broker.SourceLists
	if f.b.Version().AtLeast(4, 3) {
		wantSource = broker.SourceDefinitions
	}
	var prints []string
	for _, r := range []struct {
		who    string
		eng    *engine.Engine
		source string
	}{
		{"administrator", f.eng, wantSource},
		{"management user", engine.New(uc, engine.Options{}), broker.SourceLists},
	} {
		l, err := r.eng.ReadLive(ctx, []string{f.vhost})
		if err != nil {
			t.Fatalf("%s: %v", r.who, err)
		}
		if l.Source() != r.source {
			t.Errorf("RabbitMQ %s, %s: read from %q, want %q", f.b.Version(), r.who, l.Source(), r.source)
		}
		res, err := r.eng.Plan(ctx, f.desired(sourceFile(true)), engine.PlanOptions{Read: func() (*engine.Live, error) { return l, nil }, Save: true})
		if err != nil {
			t.Fatalf("%s: %v", r.who, err)
		}
		if p := res.Plan; !p.Empty() || len(p.Adopt) != 0 || len(p.Unread) != 0 {
			t.Errorf("%s: the plan right after apply: %v, adopt %v, unread %v", r.who, changes(p), p.Adopt, p.Unread)
		}
		prints = append(prints, res.Plan.Fingerprint)
	}
	if prints[0] != prints[1] {
		t.Errorf("fingerprints differ: %s (administrator) vs %s (management user)", prints[0], prints[1])
	}

	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(sourceFile(false))}, engine.ApplyOptions{})
	if err != nil || !out.Result.OK() {
		t.Fatalf("apply dropping the bindings: %v", err)
	}
	deleted := 0
	for _, s := range out.Result.Done {
		if s.Change != nil && s.Change.Kind == kind.Binding && s.Change.Action == plan.Delete {
			deleted++
		}
	}
	if deleted != 20 {
		t.Errorf("apply deleted %d bindings, want 20: %v", deleted, changes(out.Plan))
	}
	if p := f.plan(f.desired(sourceFile(false))); !p.Empty() {
		t.Errorf("the plan after the bindings were dropped: %v", changes(p))
	}
}
