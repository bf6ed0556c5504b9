package apply

import (
	"context"
	"errors"
	"fmt"
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
// Each object written is compared with what state holds of it as the plan
// compares them (plan.ObjectFields), so "visible" means exactly "a plan
// read from this state would not list the change again".
func Pending(done []Step, state *topology.Topology) []string {
	if state == nil {
		state = topology.New()
	}
	order, last := lastSteps(done)
	w := &visibility{state: state, gone: map[string]bool{}, missing: map[string]bool{}, lookups: map[stepKey]func(string) plan.Object{}}
	// A vhost deleted takes everything in it along; one that is missing
	// is said once, for all that was written in it.
	for _, k := range order {
		if k.kind.Container() {
			w.gone[k.vhost] = last[k].Delete
		}
	}
	for _, k := range order {
		if k.kind.Container() {
			w.vhost(k, last[k])
		} else {
			w.object(k, last[k])
		}
	}
	return w.out
}

// stepKey is the object a step is on.
type stepKey struct {
	kind        plan.Kind
	vhost, name string // a binding's name is its plan.BindingName
}

// lastSteps is the last of done's steps on each object, and the objects
// in the order of their first step.
func lastSteps(done []Step) (order []stepKey, last map[stepKey]Step) {
	last = map[stepKey]Step{}
	for _, s := range done {
		k := stepKey{kind: s.Kind(), vhost: s.Vhost, name: s.Name}
		if k.kind == "" {
			continue
		}
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = s
	}
	return order, last
}

// visibility is Pending's comparison of the steps with state.
type visibility struct {
	state         *topology.Topology
	gone, missing map[string]bool                      // vhosts deleted, and those missing from state
	lookups       map[stepKey]func(string) plan.Object // per vhost and kind, what state holds (plan.Lookup)
	out           []string
}

// vhost compares the step s on vhost k with state.
func (w *visibility) vhost(k stepKey, s Step) {
	switch v := w.state.Vhosts[k.vhost]; {
	case s.Delete && v != nil:
		w.out = append(w.out, fmt.Sprintf("vhost %q (deleted, still listed)", k.vhost))
	case s.Delete:
	case v == nil:
		w.missing[k.vhost] = true
		w.out = append(w.out, fmt.Sprintf("vhost %q", k.vhost))
	default:
		if fields := plan.ObjectFields(k.kind, plan.ObjectOf(w.state, k.kind, k.vhost, k.name), s.Change.After); len(fields) > 0 {
			w.out = append(w.out, fmt.Sprintf("vhost %q (%s)", k.vhost, fieldNames(fields)))
		}
	}
}

// object compares the step s on object k, in a vhost or the broker's
// own, with state.
func (w *visibility) object(k stepKey, s Step) {
	var held plan.Object // what state holds of the object
	where := ""
	if k.vhost == "" {
		held = plan.ObjectOf(w.state, k.kind, "", k.name)
	} else {
		if w.gone[k.vhost] || w.missing[k.vhost] {
			return
		}
		v := w.state.Vhosts[k.vhost]
		if v == nil {
			w.missing[k.vhost] = true
			w.out = append(w.out, fmt.Sprintf("vhost %q", k.vhost))
			return
		}
		at := stepKey{kind: k.kind, vhost: k.vhost}
		if w.lookups[at] == nil {
			w.lookups[at] = plan.Lookup(v, k.kind)
		}
		held = w.lookups[at](k.name)
		where = fmt.Sprintf(" in vhost %q", k.vhost)
	}
	what := fmt.Sprintf("%s %q%s", k.kind, k.name, where)
	switch {
	case s.Delete && held != nil:
		w.out = append(w.out, what+" (deleted, still listed)")
	case s.Delete:
	case held == nil:
		w.out = append(w.out, what)
	default:
		if fields := plan.ObjectFields(k.kind, held, s.Change.After); len(fields) > 0 {
			w.out = append(w.out, what+" ("+fieldNames(fields)+" not as declared)")
		}
	}
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
