package flow

import (
	"slices"
	"sort"
	"sync"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// defaultMaxClasses is Options.MaxClasses's default: at 10,000 a plan
// deleting a 50,000-object vhost held 30,000 routes and went past 100 MB.
const defaultMaxClasses = 1000

// vhostCompare is the comparison of one vhost: both sides, and what has
// been worked out about them so far.
type vhostCompare struct {
	vhost string
	ver   rmqversion.Version
	max   int
	b, a  *side
	// policiesSame: both sides have the same policies and operator
	// policies.
	policiesSame bool
	exchanges    map[string]*exchangeChange
	flows        map[[2]string]*flowChange
	classMemo    map[classKey]classList
	// dlChanged are the queues whose dead letters may go elsewhere after
	// the change (see findDeadLetterChanges).
	dlChanged map[string]bool
	// shovels are where the shovels of the after side move messages in
	// this vhost (nil: none).
	shovels *shovelDests
	d       *Diff
}

// compare is Compare's body.
func compare(before, after *topology.Topology, o Options) *Diff {
	d := &Diff{}
	maxClasses := o.MaxClasses
	if maxClasses <= 0 {
		maxClasses = defaultMaxClasses
	}
	shovels := shovelledInto(after, o.Here)
	env := o.Env.Scopes()
	for _, name := range vhostNames(before, after, o.Vhosts) {
		c := newVhostCompare(name, vhostOf(before, name), vhostOf(after, name), o.Version, maxClasses, d)
		c.b.env, c.a.env = env, env
		c.b.vhost, c.a.vhost = name, name
		c.shovels = shovels[name]
		c.routes()
		c.findDeadLetterChanges()
		c.deadLetters()
		c.silenced()
		c.expiring()
		c.refusing()
		c.newQueueLimits()
		c.trimming()
		c.links(o.Here)
		c.ties()
	}
	d.sort()
	return d
}

// vhostNames returns the vhosts to compare: only, or else every vhost of
// either side; sorted, each once.
func vhostNames(before, after *topology.Topology, only []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if only != nil {
		for _, n := range only {
			add(n)
		}
	} else {
		for _, t := range []*topology.Topology{before, after} {
			if t != nil {
				for n := range t.Vhosts {
					add(n)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// vhostOf returns vhost name of t, nil when t or the vhost is missing.
func vhostOf(t *topology.Topology, name string) *topology.Vhost {
	if t == nil {
		return nil
	}
	return t.Vhosts[name]
}

// newVhostCompare indexes both sides of vhost name, at the same time.
func newVhostCompare(name string, vb, va *topology.Vhost, ver rmqversion.Version, maxClasses int, d *Diff) *vhostCompare {
	c := &vhostCompare{vhost: name, ver: ver.OrDefault(), max: maxClasses, d: d,
		exchanges: map[string]*exchangeChange{}, flows: map[[2]string]*flowChange{}, classMemo: map[classKey]classList{},
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.b = newSide(vb, name, c.ver)
	}()
	c.a = newSide(va, name, c.ver)
	wg.Wait()
	c.policiesSame = true
	for _, k := range kind.PolicyKinds() {
		c.policiesSame = c.policiesSame && policiesEqual(c.b.v.PoliciesOf(k), c.a.v.PoliciesOf(k))
	}
	return c
}

// truncate records that the classes of exchange x went past the cap.
func (c *vhostCompare) truncate(x string) {
	c.d.Truncated = append(c.d.Truncated, c.vhost+"/"+x)
}

// ties adds the policy ties of either side whose policies' definitions
// differ (Tie): one for both sides where each has it.
func (c *vhostCompare) ties() {
	var out []Tie
	for _, sd := range []struct {
		s    *side
		name string
	}{{c.b, "before"}, {c.a, "after"}} {
		for _, t := range sd.s.sim.Ties() {
			if t.Assumed == nil || t.Other == nil || argsEqual(t.Assumed.Definition, t.Other.Definition) {
				continue
			}
			tie := Tie{Vhost: c.vhost, Side: sd.name, Kind: "exchange", Name: t.Object, Operator: t.Operator, Assumed: t.Assumed.Name, Other: t.Other.Name}
			if t.Queue {
				tie.Kind = "queue"
			}
			if i := slices.IndexFunc(out, func(o Tie) bool { o.Side = tie.Side; return o == tie }); i >= 0 {
				out[i].Side = "both"
				continue
			}
			out = append(out, tie)
		}
	}
	c.d.Ties = append(c.d.Ties, out...)
}
