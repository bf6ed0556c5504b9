package preflight

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestInternalErrorAgainstBroker: a trial the broker answers with a 5xx
// instead of a refusal with a reason. RabbitMQ 4.3.6, 4.0.5 and 3.10.8
// answer a policy whose max-age is a number (5, not "5s") with 500 and no
// body: its validation crashes (rabbit_amqqueue:check_max_age/1 takes a
// binary). The version table refuses that policy before a preflight runs,
// so the plan here is made by hand, as a value the table does not know
// would reach the broker. The report and RefusedError say what failed,
// that nothing was changed, and how to go on.
func TestInternalErrorAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	ctx := context.Background()
	c, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatal(err)
	}
	pol := &topology.Policy{Name: "retention", Pattern: "^events$", ApplyTo: "streams", Definition: topology.Args{"max-age": 5},
		Meta: topology.Meta{Pos: topology.Pos{File: "topology.yaml", Line: 9, Col: 7}}}
	other := &topology.Queue{Name: "events", Type: topology.QueueStream, Durable: true, Arguments: topology.Args{"x-max-age": "7D"}}
	p := &plan.Plan{Changes: []plan.Change{
		{Action: plan.Create, Kind: kind.Queue, Vhost: vh, Name: other.Name, After: plan.Of(other)},
		{Action: plan.Create, Kind: kind.Policy, Vhost: vh, Name: pol.Name, After: plan.Of(pol), Pos: pol.Pos},
	}}
	rep, err := Run(ctx, c, p, &topology.Topology{Vhosts: map[string]*topology.Vhost{vh: {Name: vh}}}, Options{})
	if err != nil {
		t.Fatalf("RabbitMQ %s: the preflight did not finish: %v", b.Version(), err)
	}
	if len(rep.Refusals) != 1 || len(rep.Refusals[0].Objects) != 1 || rep.Refusals[0].Objects[0].Name != "retention" {
		t.Fatalf("RabbitMQ %s: refusals %+v; want the policy's alone", b.Version(), rep.Refusals)
	}
	msg := (&RefusedError{Report: rep}).Error()
	for _, want := range []string{
		"nothing was changed: the broker failed on 1 object of the plan (each shape was tried in a throwaway vhost first):",
		`topology.yaml:9:7: policy "retention" in vhost "` + vh + `": HTTP 500 (Internal Server Error), an internal error of the broker, not a refusal it gives a reason for`,
		"RabbitMQ's log has the reason",
		"fix that value in the file",
		"run the command again once it is well",
		"`mqctl apply --no-preflight` goes on without asking the broker first, but the write of it most likely meets the same error",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("RabbitMQ %s: the error lacks %q:\n%s", b.Version(), want, msg)
		}
	}
	if !errors.Is(&RefusedError{Report: rep}, ErrRefused) {
		t.Error("not ErrRefused")
	}
	if _, gerr := c.GetPolicy(ctx, kind.Policy, vh, "retention"); gerr == nil {
		t.Errorf("the policy is on the broker's vhost %s", vh)
	}
}
