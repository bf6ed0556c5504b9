package lint

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// refCatchers is MQ104's catchers as a direct reading of queue name's
// dead-letter deliveries (as before fee0f60): every binding into another
// queue they follow, in order, but for those of the queue's own DLQ.
func refCatchers(p *Pass, name string, d *dlInfo) (bindings []*topology.Binding, ok bool) {
	if !d.HasDLRK || p.dlrkShared(name, d) {
		return nil, false
	}
	var own bool
	ignored := 0
	seen := map[*topology.Binding]bool{}
	for _, r := range d.Routes {
		for _, del := range r.Route.Result.Deliveries {
			tq := p.Vhost.Queues[del.Queue]
			if tq == nil || len(del.Path) == 0 || p.isDelay(del.Queue) || del.Queue == name {
				continue
			}
			last := del.Path[len(del.Path)-1]
			b := p.bindingOf(last)
			switch {
			case tq.Origin == name || (tq.Origin == "" && last.Exchange == d.Exchange && last.BindingKey == d.DLRK):
				own = true
			case b == nil || seen[b]:
			case b.Meta.Ignores("MQ104") || b.Meta.Ignores("dead-letters-cross-delivered"):
				seen[b] = true
				ignored++
			default:
				seen[b] = true
				bindings = append(bindings, b)
			}
		}
	}
	return bindings, own && len(bindings)+ignored > 0
}

// The catchers and bindings' groups that queues sharing one fanout
// dead-letter exchange share (catchIndex, caughtBy) say what a direct
// reading of each queue's deliveries says (refCatchers): the same
// bindings in the same order, each with the same queues, keys and
// exchanges as its finding names them; on indexes scanned (3 queues) and
// mapped (12), with a queue and a binding marked to ignore MQ104, a queue
// bound to the exchange with a queue's key (its own DLQ by key), and a
// second exchange.
func TestSharedCatchersAgreeWithDeliveries(t *testing.T) {
	fanout := func(n int, extra func(b *builder)) func() *builder {
		return func() *builder {
			b := newBuilder()
			b.exchange("fdlx", "fanout")
			for i := 1; i <= n; i++ {
				b.dlqPair(fmt.Sprintf("w%02d", i), "", "", "fdlx", nil)
			}
			if extra != nil {
				extra(b)
			}
			return b
		}
	}
	for _, tc := range []struct {
		name  string
		build func() *builder
	}{
		{"2 queues", fanout(2, nil)},
		{"3 queues", fanout(3, nil)},
		{"12 queues", fanout(12, nil)},
		{"12 queues, one ignoring MQ104", fanout(12, func(b *builder) { b.v.Queues["w02"].Ignore = []string{"MQ104"} })},
		{"12 queues, one DLQ's binding ignoring MQ104", fanout(12, func(b *builder) {
			for _, bd := range b.v.Bindings {
				if bd.Destination == "w03.dlq" {
					bd.Ignore = []string{"dead-letters-cross-delivered"}
				}
			}
		})},
		{"12 queues and a queue bound with one's key", fanout(12, func(b *builder) {
			b.queue("audit", nil)
			b.bind("fdlx", "audit", "w04")
		})},
		{"3 queues and a queue bound with one's key", fanout(3, func(b *builder) {
			b.queue("audit", nil)
			b.bind("fdlx", "audit", "w02")
		})},
		{"12 queues on two exchanges", fanout(12, func(b *builder) {
			b.exchange("other", "fanout")
			for i := 1; i <= 10; i++ {
				b.dlqPair(fmt.Sprintf("x%02d", i), "", "", "other", nil)
			}
			b.queue("both", nil)
			b.bind("fdlx", "both", "")
			b.bind("other", "both", "")
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.build()
			v := b.v
			p := &Pass{Vhost: v, facts: newFacts(v, newSimulator(v, Options{}.Version.OrDefault())), enabled: func(string) bool { return true }}
			g := p.caughtGroups()
			// The reference groups, as caughtGroups made them.
			var order []*topology.Binding
			queues := map[*topology.Binding][]string{}
			for _, name := range p.queueNames {
				d := p.dl[name]
				if d == nil || d.Missing {
					continue
				}
				want, wantOwn := refCatchers(p, name, d)
				_, own := p.catchers(name, d)
				if own != wantOwn {
					t.Errorf("queue %s: catchers say %v, the deliveries %v", name, own, wantOwn)
					continue
				}
				if !own || p.Vhost.Queues[name].Meta.Ignores("MQ104") {
					continue
				}
				for _, bd := range want {
					if queues[bd] == nil {
						order = append(order, bd)
					}
					queues[bd] = append(queues[bd], name)
				}
			}
			if len(order) == 0 {
				t.Fatal("no binding takes the dead letters of another queue: the file is not the case")
			}
			if !slices.Equal(g.order, order) {
				t.Errorf("bindings in order %v, the deliveries give %v", names(g.order), names(order))
			}
			for _, bd := range order {
				qs := queues[bd]
				if g.count[bd] != len(qs) {
					t.Errorf("binding %s: %d queues, want %d", bindingName(bd), g.count[bd], len(qs))
					continue
				}
				if len(qs) < 2 {
					continue
				}
				s := g.summary(p, bd)
				var keys []string
				exch := map[string]bool{}
				for _, q := range qs {
					exch[p.dl[q].Exchange] = true
					if !slices.Contains(keys, p.dl[q].DLRK) {
						keys = append(keys, p.dl[q].DLRK)
					}
				}
				got := fmt.Sprintf("%s; %s; one exchange %v, %s", queuesListOf(s.firstNames, s.queues), joinOrQuotedOf(s.firstKeys, s.keys), s.oneExch, s.first)
				want := fmt.Sprintf("%s; %s; one exchange %v, %s", queuesList(qs), joinOrQuoted(keys), len(exch) == 1, p.dl[qs[0]].Exchange)
				if got != want {
					t.Errorf("binding %s: %s, want %s", bindingName(bd), got, want)
				}
			}
			// Each queue's own finding names the bindings that take its
			// dead letters alone.
			for _, name := range p.queueNames {
				d := p.dl[name]
				if d == nil || d.Missing {
					continue
				}
				want, own := refCatchers(p, name, d)
				if !own {
					continue
				}
				var alone []*topology.Binding
				for _, bd := range want {
					if len(queues[bd]) <= 1 {
						alone = append(alone, bd)
					}
				}
				cs, _ := p.catchers(name, d)
				if got := g.alone(cs); !slices.Equal(got, alone) {
					t.Errorf("queue %s: alone %v, want %v", name, names(got), names(alone))
				}
			}
		})
	}
}

func names(bs []*topology.Binding) []string {
	var out []string
	for _, b := range bs {
		out = append(out, bindingName(b))
	}
	return out
}
