package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// What a RabbitMQ cluster adds to plan and apply.
//
// A classic queue lives on one node. While that node is down (RabbitMQ
// 3.10), the other nodes still list the queue in their definitions, but
// answer 404 to GET and DELETE of it, refuse to declare or bind it ("home
// node … is down or inaccessible"), and leave its bindings out of every
// listing until the node is back. A plain diff would then plan to bind it
// again (and fail), or "delete" it with a 404 taken for success while it
// waits, messages and all, on the stopped node's disk. holdBackDownQueues
// keeps such changes out of the plan and says why.

// queueRef is a queue by vhost and name.
type queueRef struct{ vhost, name string }

// holdBackDownQueues removes from p the changes on classic queues whose
// home node is down: bindings to them, and deleting or replacing them. Each
// such queue gets a note on stderr naming its node and what waits for it.
// Only the queues the plan would touch are checked: one GET each, and one
// queue listing per vhost where one of them does not answer.
func holdBackDownQueues(ctx context.Context, c *broker.Client, p *plan.Plan, l *live, stderr io.Writer) error {
	cands := map[queueRef]bool{}
	created := map[queueRef]bool{}
	for _, ch := range p.Changes {
		if ch.Kind == plan.KindQueue && ch.Action == plan.Create {
			created[queueRef{ch.Vhost, ch.Name}] = true
		}
	}
	for _, ch := range p.Changes {
		if r, ok := touchedQueue(ch); ok && !created[r] && isClassicOnBroker(l, r) {
			cands[r] = true
		}
	}
	if len(cands) == 0 {
		return nil
	}
	down, err := downQueues(ctx, c, cands)
	if err != nil || len(down) == 0 {
		return err
	}
	held := map[queueRef][]string{}
	kept := p.Changes[:0]
	for _, ch := range p.Changes {
		if r, ok := touchedQueue(ch); ok && down[r] != "" {
			held[r] = append(held[r], fmt.Sprintf("%s %s %s", ch.Action, ch.Kind, ch.Name))
			continue
		}
		kept = append(kept, ch)
	}
	p.Changes = kept
	refs := make([]queueRef, 0, len(held))
	for r := range held {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool {
		return refs[i].vhost < refs[j].vhost || (refs[i].vhost == refs[j].vhost && refs[i].name < refs[j].name)
	})
	for _, r := range refs {
		fmt.Fprintf(stderr, "mqctl: note: queue %q in vhost %q lives on node %s, which is down: RabbitMQ hides its bindings and refuses to change it until that node is back, so this run leaves it alone (%s); run again once %s is back\n",
			r.name, r.vhost, down[r], strings.Join(held[r], "; "), down[r])
	}
	return nil
}

// touchedQueue is the existing queue a change acts on: the destination of a
// new binding, or the queue deleted or replaced.
func touchedQueue(ch plan.Change) (queueRef, bool) {
	switch {
	case ch.Kind == plan.KindBinding && ch.Action == plan.Create && ch.After != nil && ch.After.Binding != nil &&
		ch.After.Binding.DestinationType == topology.DestQueue:
		return queueRef{ch.Vhost, ch.After.Binding.Destination}, true
	case ch.Kind == plan.KindQueue && (ch.Action == plan.Delete || ch.Action == plan.Replace):
		return queueRef{ch.Vhost, ch.Name}, true
	}
	return queueRef{}, false
}

// isClassicOnBroker reports whether the broker state read for the plan
// holds r as a classic queue (quorum queues and streams have no home node).
func isClassicOnBroker(l *live, r queueRef) bool {
	if l == nil || l.current.State == nil {
		return false
	}
	v := l.current.State.Vhosts[r.vhost]
	if v == nil {
		return false
	}
	q := v.Queues[r.name]
	return q != nil && (q.Type == "" || q.Type == topology.QueueClassic)
}

// downQueues returns, for each queue of cands whose home node is down, that
// node's name.
func downQueues(ctx context.Context, c *broker.Client, cands map[queueRef]bool) (map[queueRef]string, error) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		missing = map[string]bool{} // vhosts with a queue that does not answer
		errs    []error
	)
	sem := make(chan struct{}, 8)
	for r := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := c.QueueStatsNow(ctx, r.vhost, r.name)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, broker.ErrVhostNotFound):
			case errors.Is(err, broker.ErrNotFound):
				missing[r.vhost] = true
			case err != nil:
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	down := map[queueRef]string{}
	for vh := range missing {
		pl, err := c.QueuePlacements(ctx, vh)
		if err != nil {
			return nil, err
		}
		for r := range cands {
			if q, ok := pl[r.name]; ok && r.vhost == vh && q.Down {
				node := q.Node
				if node == "" {
					node = "(unknown)"
				}
				down[r] = node
			}
		}
	}
	return down, nil
}

// waitVisible waits, after an apply through several management endpoints,
// until the endpoint a later plan reads from (the first that answers, as
// for any command) shows every change apply made: a plan right after apply
// is then empty there too, not only on the node apply wrote through. With a
// single endpoint apply reads where it wrote, and there is nothing to wait
// for.
func (g *globals) waitVisible(ctx context.Context, c *broker.Client, stderr io.Writer, res *apply.Result, vhosts []string) error {
	if len(c.Servers()) < 2 || len(res.Done) == 0 || len(vhosts) == 0 {
		return nil
	}
	cfg, _, err := g.brokerConfig()
	if err != nil {
		return err
	}
	reader, err := broker.Connect(ctx, cfg)
	if err != nil {
		return fmt.Errorf("apply is complete, but its changes could not be read back: %w", err)
	}
	read := func(ctx context.Context) (*topology.Topology, error) {
		t, _, err := reader.ReadTopology(ctx, vhosts)
		return t, err
	}
	err = apply.WaitVisible(ctx, read, res.Done, apply.WaitOptions{Waiting: func(pending []string) {
		them := "them"
		if len(pending) == 1 {
			them = "it"
		}
		fmt.Fprintf(stderr, "mqctl: waiting until %s shows %d %s of this apply (it does not show %s yet)\n",
			reader.Server(), len(pending), pluralize("change", len(pending)), them)
	}})
	if err != nil {
		if reader.Server() == c.Server() {
			return fmt.Errorf("apply is complete, but reading %s back: %w", reader.Server(), err)
		}
		return fmt.Errorf("apply is complete on %s, but %s (which plans read from): %w", c.Server(), reader.Server(), err)
	}
	return nil
}
