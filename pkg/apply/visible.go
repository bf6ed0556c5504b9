package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Pending lists the effects of the done steps that state does not show:
// objects declared (with the settings declared) or put that it lacks or
// shows otherwise, and objects deleted that it still lists. Only the last
// step on an object counts (a replace deletes, then declares). Each entry
// reads like `queue "q" in vhost "v"`; none means every step is visible.
//
// The comparison is the plan's own (plan.Diff), so "visible" means exactly
// "a plan read from this state would not list the change again".
func Pending(done []Step, state *topology.Topology) []string {
	if state == nil {
		state = topology.New()
	}
	type key struct {
		kind        plan.Kind
		vhost, name string
	}
	last := map[key]Step{}
	var order []key
	vhostGone := map[string]bool{}
	for _, s := range done {
		k := key{vhost: s.Vhost, name: s.Name}
		switch s.Op {
		case OpCreateVhost, OpUpdateVhost:
			k.kind = plan.KindVhost
			delete(vhostGone, s.Vhost)
		case OpDeleteVhost:
			vhostGone[s.Vhost] = true
			continue
		case OpDeclareExchange, OpDeleteExchange:
			k.kind = plan.KindExchange
		case OpDeclareQueue, OpDeleteQueue:
			k.kind = plan.KindQueue
		case OpBind, OpUnbind:
			k.kind, k.name = plan.KindBinding, s.Binding.Key()
		case OpPutItem, OpDeleteItem:
			k.kind = s.Change.Kind
		case OpPutPolicy, OpDeletePolicy:
			k.kind = plan.KindPolicy
		case OpPutOpPolicy, OpDeleteOpPolicy:
			k.kind = plan.KindOperatorPolicy
		default:
			continue
		}
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = s
	}

	want, have := topology.New(), topology.New()
	managed := map[plan.ObjectRef]plan.Print{} // NoPrint: DeleteChanged plans their deletes
	vh := func(t *topology.Topology, name string) *topology.Vhost {
		if t.Vhosts[name] == nil {
			t.Vhosts[name] = topology.NewVhost(name)
		}
		return t.Vhosts[name]
	}
	for _, k := range order {
		s := last[k]
		if s.Op == OpPutItem || s.Op == OpDeleteItem {
			// Compared for this kind only, wherever it lives.
			want.Declare(k.kind)
			have.Declare(k.kind)
		}
		if k.vhost == "" && (s.Op == OpPutItem || s.Op == OpDeleteItem) {
			// An object of the broker's own (a user).
			if s.Op == OpPutItem {
				want.Items.Put(s.Change.After.Item)
			}
			if it := state.Items.Get(k.kind, k.name); it != nil {
				have.Items.Put(it)
				managed[plan.ObjectRef{Kind: k.kind, Name: k.name}] = plan.NoPrint
			}
			continue
		}
		if vhostGone[k.vhost] {
			continue
		}
		w := vh(want, k.vhost)
		cur := state.Vhosts[k.vhost]
		if cur == nil {
			continue // the vhost itself is missing: Diff plans it all again
		}
		h := vh(have, k.vhost)
		h.Description, h.DefaultQueueType = cur.Description, cur.DefaultQueueType
		ref := plan.ObjectRef{Kind: k.kind, Vhost: k.vhost, Name: k.name}
		switch s.Op {
		case OpCreateVhost, OpUpdateVhost:
			if m := s.Change.After.Vhost; m != nil {
				w.Description, w.DefaultQueueType = m.Description, m.DefaultQueueType
			}
		case OpDeclareExchange:
			w.Exchanges[k.name] = s.Change.After.Exchange
			if e := cur.Exchanges[k.name]; e != nil {
				h.Exchanges[k.name] = e
			}
		case OpDeleteExchange:
			if e := cur.Exchanges[k.name]; e != nil {
				h.Exchanges[k.name], managed[ref] = e, plan.NoPrint
			}
		case OpDeclareQueue:
			w.Queues[k.name] = s.Change.After.Queue
			if q := cur.Queues[k.name]; q != nil {
				h.Queues[k.name] = q
			}
		case OpDeleteQueue:
			if q := cur.Queues[k.name]; q != nil {
				h.Queues[k.name], managed[ref] = q, plan.NoPrint
			}
		case OpBind, OpUnbind:
			b := findBinding(cur, k.name)
			if s.Op == OpBind {
				w.Bindings = append(w.Bindings, s.Binding)
			}
			if b != nil {
				h.Bindings = append(h.Bindings, b)
				managed[plan.BindingRef(k.vhost, b)] = plan.NoPrint
			}
		case OpPutPolicy, OpDeletePolicy:
			if s.Op == OpPutPolicy {
				w.Policies[k.name] = s.Change.After.Policy
			}
			if p := cur.Policies[k.name]; p != nil {
				h.Policies[k.name], managed[ref] = p, plan.NoPrint
			}
		case OpPutOpPolicy, OpDeleteOpPolicy:
			if s.Op == OpPutOpPolicy {
				w.OperatorPolicies[k.name] = s.Change.After.Policy
			}
			if p := cur.OperatorPolicies[k.name]; p != nil {
				h.OperatorPolicies[k.name], managed[ref] = p, plan.NoPrint
			}
		case OpPutItem, OpDeleteItem:
			if s.Op == OpPutItem {
				w.Items.Put(s.Change.After.Item)
			}
			if it := cur.Items.Get(k.kind, k.name); it != nil {
				h.Items.Put(it)
				managed[ref] = plan.NoPrint
			}
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(vhostGone)) {
		if state.Vhosts[name] != nil {
			out = append(out, fmt.Sprintf("vhost %q (deleted, still listed)", name))
		}
	}
	p := plan.DiffWith(want, plan.Current{State: have, Managed: managed}, plan.Options{DeleteChanged: true})
	for _, c := range p.Changes {
		if c.Kind == plan.KindVhost {
			if c.Action == plan.Create {
				out = append(out, fmt.Sprintf("vhost %q", c.Vhost))
			} else {
				out = append(out, fmt.Sprintf("vhost %q (%s)", c.Vhost, fieldNames(c.Fields)))
			}
			continue
		}
		if c.Vhost != "" && state.Vhosts[c.Vhost] == nil {
			continue // reported with its vhost
		}
		what := fmt.Sprintf("%s %q in vhost %q", c.Kind, c.Name, c.Vhost)
		if c.Vhost == "" {
			what = fmt.Sprintf("%s %q", c.Kind, c.Name)
		}
		switch c.Action {
		case plan.Delete:
			what += " (deleted, still listed)"
		case plan.Replace, plan.Update:
			what += " (" + fieldNames(c.Fields) + " not as declared)"
		}
		out = append(out, what)
	}
	return out
}

func findBinding(v *topology.Vhost, key string) *topology.Binding {
	for _, b := range v.Bindings {
		if b.Key() == key {
			return b
		}
	}
	return nil
}

func fieldNames(fields []plan.FieldChange) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Field
	}
	return strings.Join(names, ", ")
}

// ErrNotVisible is wrapped when the read endpoint does not show an apply's
// changes in time.
var ErrNotVisible = errors.New("changes not visible")

// WaitOptions bound WaitVisible.
type WaitOptions struct {
	// Timeout is how long to wait in all (DefaultVisibleTimeout when zero).
	Timeout time.Duration
	// Interval is the first pause between reads, doubled up to a second.
	Interval time.Duration
	// Waiting, when set, is called once if the first read does not show
	// everything yet, with what is missing.
	Waiting func(pending []string)
}

// DefaultVisibleTimeout bounds WaitVisible when WaitOptions.Timeout is zero.
const DefaultVisibleTimeout = 30 * time.Second

// WaitVisible reads the state with read until it shows every done step
// (see Pending), or fails after the timeout naming what is still missing.
// read is typically the broker client of the endpoint later plans read
// from, so that a plan right after apply is empty there too.
func WaitVisible(ctx context.Context, read func(ctx context.Context) (*topology.Topology, error), done []Step, opts WaitOptions) error {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultVisibleTimeout
	}
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	deadline := time.Now().Add(opts.Timeout)
	pause := opts.Interval
	told := false
	for {
		state, err := read(ctx)
		if err != nil {
			return fmt.Errorf("read the broker back: %w", err)
		}
		pending := Pending(done, state)
		if len(pending) == 0 {
			return nil
		}
		if !told && opts.Waiting != nil {
			opts.Waiting(pending)
			told = true
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("after %s the broker still does not show %s: %w", opts.Timeout, summarize(pending), ErrNotVisible)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the changes to show: %w", ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

func summarize(items []string) string {
	const most = 5
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
}
