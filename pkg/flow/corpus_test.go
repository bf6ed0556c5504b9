package flow_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// withoutEveryOtherBinding is t with every second binding of each vhost
// gone (a copy: t is not changed).
func withoutEveryOtherBinding(t *topology.Topology) *topology.Topology {
	out := topology.New()
	for name, v := range t.Vhosts {
		c := *v
		c.Bindings = nil
		for i, b := range v.Bindings {
			if i%2 == 0 {
				c.Bindings = append(c.Bindings, b)
			}
		}
		out.Vhosts[name] = &c
	}
	return out
}

// TestCorpus compares every definitions file of the corpus with itself,
// with nothing, and with itself less every other binding: a topology
// compared with itself moves no message; one created from nothing loses
// none; and on the real topologies, every class a comparison reports
// routes as reported, before and after, and differs.
func TestCorpus(t *testing.T) {
	_, files := corpus.Files(t)
	read, routes := 0, 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		tp, _, err := definitions.Read(name, data)
		if err != nil {
			continue // not a readable definitions file (failing_case*, templates)
		}
		read++
		if d := flow.Compare(tp, tp, flow.Options{}); !d.Empty() {
			t.Errorf("%s compared with itself moves messages: %+v", name, d)
		}
		if d := flow.Compare(nil, tp, flow.Options{}); d.LosesMessages() {
			t.Errorf("%s created from nothing loses messages: %+v", name, d)
		}
		thinned := withoutEveryOtherBinding(tp)
		d := flow.Compare(tp, thinned, flow.Options{})
		for _, r := range d.Routes {
			routes++
			m := route.Message{Exchange: r.Exchange, RoutingKey: r.Class.RoutingKey, Headers: r.Class.Headers}
			before := route.New(tp.Vhosts[r.Vhost]).Publish(m).Queues()
			after := route.New(thinned.Vhosts[r.Vhost]).Publish(m).Queues()
			if !slices.Equal(before, r.Before) || !slices.Equal(after, r.After) || slices.Equal(before, after) {
				t.Errorf("%s: exchange %q in vhost %q, class %+v: reported %v -> %v, simulated %v -> %v", name, r.Exchange, r.Vhost, r.Class, r.Before, r.After, before, after)
			}
		}
	}
	if read < 40 {
		t.Errorf("read only %d definitions files of the corpus", read)
	}
	t.Logf("%d definitions files, %d routes checked against the simulator", read, routes)
}
