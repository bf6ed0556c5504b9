package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The tests here drive the engine as a program other than the CLI would,
// against the broker of scripts/broker, each in a vhost of its own; the CLI
// tests (pkg/cli, cmd/mqctl) cover what a user sees of each step.

// fixture is an engine on a fresh test vhost.
type fixture struct {
	t     *testing.T
	b     *testbroker.Broker
	c     *broker.Client
	vhost string
	notes []string
	eng   *engine.Engine
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	b := testbroker.New(t)
	c, err := broker.Connect(t.Context(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatalf("connect to the test broker: %v", err)
	}
	f := &fixture{t: t, b: b, c: c, vhost: b.Vhost(t)}
	f.eng = engine.New(c, engine.Options{Note: func(n string) { f.notes = append(f.notes, n) }})
	return f
}

// desired loads src, a file whose vhost is ${VHOST}, for the test vhost.
// ownNotes returns the notes of f's engine but those about the
// throwaway vhosts that other applies left behind: any apply sweeps them,
// and tests running meanwhile leave some on purpose.
func (f *fixture) ownNotes() []string {
	var own []string
	for _, n := range f.notes {
		if !strings.Contains(n, "killed mqctl applies left behind") {
			own = append(own, n)
		}
	}
	return own
}

func (f *fixture) desired(src string) *topology.Topology {
	f.t.Helper()
	env := func(k string) (string, bool) {
		if k == "VHOST" {
			return f.vhost, true
		}
		return "", false
	}
	t, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: env})
	if err != nil {
		f.t.Fatal(err)
	}
	// The test vhost exists with its own description: keep it.
	t.Vhosts[f.vhost].Description = "mqctl test " + f.t.Name()
	return t
}

func (f *fixture) plan(desired *topology.Topology) *plan.Plan {
	f.t.Helper()
	res, err := f.eng.Plan(context.Background(), desired, engine.PlanOptions{Save: true})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Plan
}

func changes(p *plan.Plan) []string {
	var out []string
	for _, c := range p.Changes {
		out = append(out, fmt.Sprintf("%s %s %s", c.Action, c.Kind, c.Name))
	}
	return out
}

const twoQueues = `version: 1
vhosts:
  ${VHOST}:
    queues:
      jobs: {}
      done: {}
`

// TestApplyHooks: Apply shows the final plan, asks Confirm before anything
// changes (an error there changes nothing), reports, and a plan right after
// is empty.
func TestApplyHooks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if got := changes(f.plan(f.desired(twoQueues))); !slices.Equal(got, []string{"create queue done", "create queue jobs"}) {
		t.Fatalf("plan: %v", got)
	}
	var calls []string
	var mu sync.Mutex
	hooks := func(confirm error) engine.ApplyOptions {
		calls = nil
		return engine.ApplyOptions{
			Show:    func(p *plan.Plan) error { calls = append(calls, fmt.Sprintf("show %d", len(p.Changes))); return nil },
			Confirm: func(*plan.Plan) error { calls = append(calls, "confirm"); return confirm },
			Progress: func(ev apply.Event) {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, "step")
			},
			Report: func(_ *plan.Plan, res *apply.Result) error {
				calls = append(calls, fmt.Sprintf("report %d done", len(res.Done)))
				return nil
			},
		}
	}
	no := errors.New("no")
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(twoQueues)}, hooks(no))
	if !errors.Is(err, no) || out == nil || out.Result != nil {
		t.Fatalf("declined: result %+v, err %v", out, err)
	}
	if want := []string{"show 2", "confirm"}; !slices.Equal(calls, want) {
		t.Errorf("declined: hooks %v, want %v", calls, want)
	}
	if got := changes(f.plan(f.desired(twoQueues))); len(got) != 2 {
		t.Fatalf("a declined apply changed the broker: the plan is now %v", got)
	}

	out, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(twoQueues)}, hooks(nil))
	if err != nil || out.Result == nil || !out.Result.OK() {
		t.Fatalf("apply: result %+v, err %v", out, err)
	}
	want := []string{"show 2", "confirm", "step", "step", fmt.Sprintf("report %d done", len(out.Result.Done))}
	if !slices.Equal(calls, want) {
		t.Errorf("hooks %v, want %v", calls, want)
	}
	if p := f.plan(f.desired(twoQueues)); !p.Empty() || len(p.Adopt) != 0 {
		t.Errorf("the plan right after apply: %v, adopt %v", changes(p), p.Adopt)
	}
	// Nothing to do: the plan is shown, nothing is asked.
	out, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(twoQueues)}, hooks(nil))
	if err != nil || out.Result != nil || !slices.Equal(calls, []string{"show 0"}) {
		t.Errorf("an apply with nothing to do: result %+v, err %v, hooks %v", out, err, calls)
	}
}

// TestApplyRefusesDataLoss: a queue holding a message is not deleted
// without AllowDataLoss; the plan counts the message exactly (over AMQP,
// right after it was published), is shown, and nothing is asked.
func TestApplyRefusesDataLoss(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(twoQueues)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	if err := ch.PublishWithContext(ctx, "", "jobs", false, false, amqp.Publishing{Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	oneQueue := strings.Replace(twoQueues, "      jobs: {}\n", "", 1)
	p := f.plan(f.desired(oneQueue))
	if len(p.Changes) != 1 || p.Changes[0].Name != "jobs" || p.Changes[0].Messages != 1 {
		t.Fatalf("plan: %+v", p.Changes)
	}
	var shown, asked bool
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(oneQueue)}, engine.ApplyOptions{
		Show:    func(*plan.Plan) error { shown = true; return nil },
		Confirm: func(*plan.Plan) error { asked = true; return nil },
	})
	if !errors.Is(err, apply.ErrRefused) || out == nil || out.Result != nil || !shown || asked {
		t.Fatalf("result %+v, err %v, shown %v, asked %v", out, err, shown, asked)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(oneQueue)}, engine.ApplyOptions{AllowDataLoss: true}); err != nil {
		t.Fatal(err)
	}
	if p := f.plan(f.desired(oneQueue)); !p.Empty() {
		t.Errorf("plan after the delete: %v", changes(p))
	}
}

// TestApplySavedPlan: a saved plan is applied as it is while the broker
// has not changed, and refused (ErrStalePlan) once it has.
func TestApplySavedPlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	saved := f.plan(f.desired(twoQueues))
	stale := f.plan(f.desired(twoQueues))
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Saved: saved}, engine.ApplyOptions{})
	if err != nil || out.Result == nil || len(out.Result.Done) == 0 {
		t.Fatalf("apply the saved plan: %+v, %v", out, err)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Saved: stale}, engine.ApplyOptions{}); !errors.Is(err, engine.ErrStalePlan) {
		t.Errorf("apply a stale plan: err %v, want ErrStalePlan", err)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{}, engine.ApplyOptions{}); err == nil {
		t.Error("apply of nothing: no error")
	}
}

// TestPlanTakesEarlyRead: Plan uses a read made beforehand of exactly the
// desired state's vhosts, and reads again when the read was of others.
func TestPlanTakesEarlyRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	early, err := f.eng.ReadLive(ctx, []string{f.vhost})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.eng.ReadLive(ctx, []string{f.vhost, f.vhost + "-absent"})
	if err != nil {
		t.Fatal(err)
	}
	// Declared after the reads: a plan from them does not know it.
	testbroker.Declare(t, f.c, f.vhost, &topology.Vhost{Queues: map[string]*topology.Queue{
		"jobs": {Name: "jobs", Type: topology.QueueClassic, Durable: true}}})
	for _, tc := range []struct {
		name string
		live *engine.Live
		want []string
	}{
		{"early read", early, []string{"create queue done", "create queue jobs"}},
		{"read of other vhosts", other, []string{"create queue done"}},
		{"no read", nil, []string{"create queue done"}},
	} {
		var read func() (*engine.Live, error)
		if tc.live != nil {
			read = func() (*engine.Live, error) { return tc.live, nil }
		}
		res, err := f.eng.Plan(ctx, f.desired(twoQueues), engine.PlanOptions{Read: read})
		if err != nil {
			t.Fatal(err)
		}
		if got := changes(res.Plan); !slices.Equal(got, tc.want) {
			t.Errorf("%s: plan %v, want %v", tc.name, got, tc.want)
		}
	}
}
