package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Restore lists (ownership/restore.go): the bindings a replace takes down
// that no file declares and mqctl does not manage (another team's queue
// bound to a replaced exchange) are written down on the broker before the
// replace begins, and put back from there by the apply after an apply
// that could not (killed between a replace's halves, its host or the
// broker gone). Before, such an apply left them gone for good: the next
// plan declared the replaced exchange again but could not know them, and
// said nothing.

// foreignTakenDown is, per vhost, the bindings the replaces of p take
// down that mqctl does not manage and p does not declare again otherwise:
// those only p knows.
func foreignTakenDown(p *plan.Plan, recs map[string]*ownership.Record) map[string][]*topology.Binding {
	adopted := map[plan.ObjectRef]bool{}
	for _, ref := range p.Adopt {
		adopted[ref] = true
	}
	out := map[string][]*topology.Binding{}
	seen := map[plan.ObjectRef]bool{}
	for _, c := range p.Changes {
		if c.Action != plan.Replace {
			continue
		}
		for _, b := range c.Bindings {
			ref := plan.BindingRef(c.Vhost, b)
			if seen[ref] || adopted[ref] {
				continue // the file declares it: the next plan makes it again
			}
			seen[ref] = true
			if r := recs[c.Vhost]; r != nil {
				if _, mine := r.Managed[ref]; mine {
					continue // mqctl's, so the file's (or deleted with the plan)
				}
			}
			out[c.Vhost] = append(out[c.Vhost], b)
		}
	}
	return out
}

// writeRestoreLists writes, before apply changes anything, the restore
// list of each vhost where p's replaces take down bindings only p knows,
// and returns their names per vhost. An error means nothing was changed.
func (e *Engine) writeRestoreLists(ctx context.Context, p *plan.Plan, recs map[string]*ownership.Record) (map[string][]string, error) {
	lists := foreignTakenDown(p, recs)
	vhosts := make([]string, 0, len(lists))
	for vh := range lists {
		vhosts = append(vhosts, vh)
	}
	sort.Strings(vhosts)
	written := map[string][]string{}
	seq := time.Now().UnixNano()
	for _, vh := range vhosts {
		x := ownership.RestoreExchange(seq, lists[vh])
		if err := e.c.DeclareExchange(ctx, vh, x); err != nil {
			return written, fmt.Errorf("apply refused before its first change: it writes down, as exchange %q in vhost %q, the %d %s its replaces take down that the file does not declare, so that an apply stopped half way puts them back, and the broker refused it: %w",
				x.Name, vh, len(lists[vh]), pluralWord("binding", len(lists[vh])), err)
		}
		written[vh] = append(written[vh], x.Name)
	}
	return written, nil
}

// putBack declares again the bindings of the restore lists of l's records
// (left by earlier applies) and of those this apply wrote (written, with
// its own bindings), once the apply is over, and deletes the lists once
// every binding is back. complete: every step of the apply was done, so
// what an end is missing for stays missing (the file no longer declares
// it), and is reported lost, and the lists go too. Otherwise those lists
// stay for the next apply.
func (e *Engine) putBack(ctx context.Context, state *topology.Topology, recs map[string]*ownership.Record, written map[string][]string, mine map[string][]*topology.Binding, complete bool) {
	ctx = context.WithoutCancel(ctx)
	vhosts := map[string]bool{}
	for vh, r := range recs {
		if r != nil && len(r.RestoreLists) > 0 {
			vhosts[vh] = true
		}
	}
	for vh := range written {
		vhosts[vh] = true
	}
	for _, vh := range slices.Sorted(maps.Keys(vhosts)) {
		var lists []string
		var bindings []*topology.Binding
		seen := map[string]bool{}
		if r := recs[vh]; r != nil {
			lists = append(lists, r.RestoreLists...)
			for _, b := range r.Restore {
				seen[b.Key()] = true
				bindings = append(bindings, b)
			}
		}
		lists = append(lists, written[vh]...)
		for _, b := range mine[vh] {
			if !seen[b.Key()] {
				seen[b.Key()] = true
				bindings = append(bindings, b)
			}
		}
		var back, gone, refused []string
		failed := false
		for _, b := range bindings {
			err := e.c.DeclareBinding(ctx, vh, b)
			switch {
			case err == nil:
				back = append(back, bindingText(b))
			case errors.Is(err, broker.ErrNotFound) && !errors.Is(err, broker.ErrVhostNotFound):
				gone = append(gone, bindingText(b))
			case !errors.Is(err, broker.ErrUnreachable) && !errors.Is(err, broker.ErrOutcomeUnknown) && !errors.Is(err, broker.ErrVhostNotFound):
				// The broker's decision (an exclusive queue of a client's
				// connection, a permission): asking again would not help.
				refused = append(refused, fmt.Sprintf("%s (%v)", bindingText(b), err))
			default:
				failed = true
				e.note("binding %s in vhost %q, taken down by a replace, could not be put back (%v); the next apply tries again (restore list %s)", bindingText(b), vh, err, strings.Join(lists, ", "))
			}
		}
		if missing := missingRestores(state, vh, recs[vh]); len(missing) > 0 {
			var put []string
			for _, b := range missing {
				if slices.Contains(back, bindingText(b)) {
					put = append(put, bindingText(b))
				}
			}
			if len(put) > 0 {
				e.note("vhost %q: %d %s that an apply stopped during a replace had taken down, which the file does not declare, %s back: %s",
					vh, len(put), pluralWord("binding", len(put)), isAre(len(put)), strings.Join(put, "; "))
			}
		}
		if failed || len(gone) > 0 && !complete {
			// Those whose end is missing may come back with the rest of
			// the apply, which did not end: the list stays.
			continue
		}
		if len(gone) > 0 {
			e.note("vhost %q: %d %s taken down by a replace of an apply that stopped half way cannot be put back: an end of each no longer exists: %s",
				vh, len(gone), pluralWord("binding", len(gone)), strings.Join(gone, "; "))
		}
		if len(refused) > 0 {
			e.note("vhost %q: the broker refused to put back %d %s taken down by a replace, which the file does not declare: %s; bind %s again by hand where still needed",
				vh, len(refused), pluralWord("binding", len(refused)), strings.Join(refused, "; "), them(len(refused)))
		}
		for _, name := range lists {
			if err := e.c.DeleteExchange(ctx, vh, name, broker.DeleteExchangeOptions{}); err != nil && !errors.Is(err, broker.ErrNotFound) {
				e.note("the restore list %q of vhost %q could not be deleted (%v): the next apply deletes it", name, vh, err)
			}
		}
	}
}

// noteRestoreLists tells, in a plan, of the bindings that an apply stopped
// during a replace took down and did not put back (those of its restore
// list that state, the broker's, lacks).
func (e *Engine) noteRestoreLists(state *topology.Topology, recs map[string]*ownership.Record) {
	names := make([]string, 0, len(recs))
	for vh, r := range recs {
		if r != nil && len(r.RestoreLists) > 0 {
			names = append(names, vh)
		}
	}
	sort.Strings(names)
	for _, vh := range names {
		missing := missingRestores(state, vh, recs[vh])
		if len(missing) == 0 {
			continue
		}
		var bs []string
		for _, b := range missing {
			bs = append(bs, bindingText(b))
		}
		e.note("vhost %q: an apply stopped in the middle of a replace (killed, or cut from the broker) and left %d %s it took down, which the file does not declare, to put back (restore list %s): %s; the next apply declares %s again once %s ends exist",
			vh, len(bs), pluralWord("binding", len(bs)), strings.Join(recs[vh].RestoreLists, ", "), strings.Join(bs, "; "), them(len(bs)), theirIts(len(bs)))
	}
}

// restoresOf is what the next apply does with the restore lists of recs
// (putBack): per vhost, the lists it deletes and the bindings of theirs
// that state lacks, which it declares again.
func restoresOf(state *topology.Topology, recs map[string]*ownership.Record) []plan.Restore {
	var out []plan.Restore
	for _, vh := range slices.Sorted(maps.Keys(recs)) {
		r := recs[vh]
		if r == nil || len(r.RestoreLists) == 0 {
			continue
		}
		rs := plan.Restore{Vhost: vh, Lists: slices.Clone(r.RestoreLists)}
		for _, b := range missingRestores(state, vh, r) {
			rs.Missing = append(rs.Missing, bindingText(b))
		}
		out = append(out, rs)
	}
	return out
}

// missingRestores are the bindings of r's restore lists that vhost vh of
// state does not hold.
func missingRestores(state *topology.Topology, vh string, r *ownership.Record) []*topology.Binding {
	if r == nil || len(r.Restore) == 0 {
		return nil
	}
	have := map[string]bool{}
	if v := state.Vhosts[vh]; v != nil {
		for _, b := range v.Bindings {
			have[b.Key()] = true
		}
	}
	var out []*topology.Binding
	for _, b := range r.Restore {
		if !have[b.Key()] {
			out = append(out, b)
		}
	}
	return out
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func theirIts(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

// applyComplete reports whether res did every step.
func applyComplete(res *apply.Result) bool { return res != nil && res.OK() }

func bindingText(b *topology.Binding) string {
	s := fmt.Sprintf("%s -> %s %s", b.Source, b.DestinationType, b.Destination)
	if b.RoutingKey != "" {
		s += fmt.Sprintf(" [%s]", b.RoutingKey)
	}
	if len(b.Arguments) > 0 {
		s += " " + b.Arguments.Canonical()
	}
	return s
}

func pluralWord(w string, n int) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
