package plan

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestSplitRefusals: RabbitMQ 4.3.6's refusals of a file are kept for
// what the plan declares (a create, a replace, a binding a replace of its
// queue puts back) and set apart (held) for what the broker already holds
// exactly as the file declares it.
func TestSplitRefusals(t *testing.T) {
	load := func(src string) *topology.Topology {
		t.Helper()
		top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return top
	}
	const topic = "version: 1\nvhosts:\n  v:\n    exchanges:\n      t: { type: topic }\n    queues:\n      q:\n        arguments: { x-max-length: %d }\n        bindings: [{ exchange: t, routing_key: \"#.a.#.b.#\" }]\n      c.q: { arguments: { x-consumer-timeout: %d } }\n"
	file := func(maxLen, timeout int) string {
		return fmt.Sprintf(topic, maxLen, timeout)
	}
	v := rmqversion.MustParse("4.3.6")
	for _, tc := range []struct {
		name      string
		broker    string // "" for an empty broker
		refuse    []string
		held      []string
		desiredOf string
	}{
		{name: "nothing held: every refusal kept", desiredOf: file(10, 60000), refuse: []string{`queue "c.q"`, `binding from "t" to queue "q"`}},
		{name: "all held as declared: none kept", broker: file(10, 60000), desiredOf: file(10, 60000), held: []string{`queue "c.q"`, `binding from "t" to queue "q"`}},
		{name: "the bound queue replaced: its binding kept", broker: file(10, 60000), desiredOf: file(20, 60000), refuse: []string{`binding from "t" to queue "q"`}, held: []string{`queue "c.q"`}},
		{name: "the classic queue replaced: kept", broker: file(10, 60000), desiredOf: file(10, 90000), refuse: []string{`queue "c.q"`}, held: []string{`binding from "t" to queue "q"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desired := load(tc.desiredOf)
			cur := Current{}
			if tc.broker != "" {
				cur.State = load(tc.broker)
			}
			p := Diff(desired, cur)
			refuse, held := p.SplitRefusals(desired, v.Check(desired))
			var got []string
			var re *rmqversion.RefusalsError
			if errors.As(refuse, &re) {
				for _, r := range re.Refusals {
					got = append(got, r.Object)
				}
			} else if refuse != nil {
				t.Fatalf("refuse: %v (%T)", refuse, refuse)
			}
			var gotHeld []string
			for _, r := range held {
				gotHeld = append(gotHeld, r.Object)
			}
			if !slices.Equal(got, tc.refuse) || !slices.Equal(gotHeld, tc.held) {
				t.Errorf("plan %v: refused %q, held %q; want %q, %q", p.Changes, got, gotHeld, tc.refuse, tc.held)
			}
		})
	}
}

// TestRefusedAtTheArgument: a refusal of one argument is placed at the
// argument, and the plan's refusal still names its object (kind and
// name), found by where the object is declared.
func TestRefusedAtTheArgument(t *testing.T) {
	const src = "version: 1\nvhosts:\n  v:\n    queues:\n      q:\n        type: quorum\n        arguments:\n          x-max-priority: 5\n"
	desired, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var re *RefusedError
	if !errors.As(Refuse(rmqversion.MustParse("4.3.6").Check(desired), RefusedVersion, desired, nil), &re) || len(re.Plan.Refusals) != 1 {
		t.Fatalf("want one refusal, got %v", re)
	}
	r := re.Plan.Refusals[0]
	if r.Kind != kind.Queue || r.Name != "q" || r.Key != "x-max-priority" || r.Pos.String() != "t.yaml:8:27" {
		t.Errorf("refusal %s %q of %q at %s; want queue \"q\" of x-max-priority at t.yaml:8:27", r.Kind, r.Name, r.Key, r.Pos)
	}
}
