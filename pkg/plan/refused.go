package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Why a plan is refused (Refused.Cause): stable codes, in the JSON plan.
const (
	// RefusedVersion: what the broker's version (its table, and what the
	// broker says of itself: the deprecated features it denies, the
	// exchange types it offers) refuses of the file.
	RefusedVersion = "version"
	// RefusedBrokerState: what the broker refuses given what it holds (a
	// binding whose end neither the file nor the broker has, a topic
	// permission for an exchange the vhost lacks, a URI's vhost the user
	// cannot reach, a topic key on a broker's exchange).
	RefusedBrokerState = "broker_state"
	// RefusedOwnership: the file would change or delete what another
	// owner's file manages (Plan.Conflicts).
	RefusedOwnership = "ownership"
	// RefusedDeletedEnd: a binding or topic permission names an object
	// the plan deletes.
	RefusedDeletedEnd = "deleted_end"
	// RefusedVhostLimits: a vhost's limits would refuse the apply's lock
	// or its declarations.
	RefusedVhostLimits = "vhost_limits"
	// RefusedPreflight: the broker refused the object when it was
	// declared in a throwaway vhost (plan --preflight; Plan.Preflight).
	RefusedPreflight = "preflight"
)

// Refused is one thing a plan refuses before anything changes: the
// object, where the file declares it, why, and the fix.
type Refused struct {
	// Cause is why, as a stable code (RefusedVersion, …).
	Cause string
	// Vhost is the object's vhost ("" for the broker's own objects).
	Vhost string
	// Kind and Name name the object as the plan's changes do; zero when
	// the refusal is of a part of the file that is no one object of the
	// plan (a queue's retry.backoff).
	Kind Kind
	Name string
	// Object names the object as the refusal does: `queue "q"`,
	// `binding from "x" to queue "q"`, `vhost limits`.
	Object string
	// Key is what of the object is refused (`x-max-priority`, `routing
	// key "a.#.#.#"`); "" when the whole object is.
	Key string
	Pos topology.Pos
	// Reason says why, Fix what to do ("" when mqctl cannot tell: the
	// broker's own refusal).
	Reason, Fix string
	// Owners are, for an ownership conflict, the other owners that
	// manage the object ("" the default owner).
	Owners []string
}

// RefusedError is a plan's refusal: Err is the error as the text view
// says it (on stderr), Plan the plan refused, whose Refusals say the same
// for the JSON plan. Plan changes nothing: it has no changes.
type RefusedError struct {
	Plan *Plan
	Err  error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Refuse is the refusal of a plan of desired by err, a refusal of cause
// (RefusedVersion, …): a *RefusedError whose plan carries err's
// refusals, or err itself when err says none. conflicts are the plan's
// ownership conflicts, for RefusedOwnership.
func Refuse(err error, cause string, desired *topology.Topology, conflicts []Conflict) error {
	if err == nil {
		return nil
	}
	var refused []Refused
	var re *rmqversion.RefusalsError
	switch {
	case cause == RefusedOwnership:
		for _, c := range conflicts {
			reason, fix := c.text()
			refused = append(refused, Refused{Cause: cause, Vhost: c.Vhost, Kind: c.Kind, Name: c.Name, Object: kindLabel(c.Kind) + " " + shownName(c.Kind, c.Name),
				Pos: c.Pos, Reason: strings.TrimPrefix(reason, whereOf(c.Pos)), Fix: fix, Owners: slices.Clone(c.Owners)})
		}
	case errors.As(err, &re):
		at := refsAt(desired)
		for _, r := range re.Refusals {
			ref, _ := refAt(at, r)
			refused = append(refused, Refused{Cause: cause, Vhost: r.Vhost, Kind: ref.Kind, Name: ref.Name, Object: r.Object, Key: r.Key, Pos: r.Pos, Reason: r.Reason, Fix: r.Fix})
		}
	}
	if len(refused) == 0 {
		return err
	}
	return &RefusedError{Plan: &Plan{FormatVersion: FormatVersion, Vhosts: desired.VhostNames(), Owner: desired.Owner, Refusals: refused}, Err: err}
}

// refsAt are the objects a plan of t would name, by where t declares
// each.
func refsAt(t *topology.Topology) map[topology.Pos][]ObjectRef {
	out := map[topology.Pos][]ObjectRef{}
	for _, c := range Diff(t, Current{}).Changes {
		if !c.Pos.IsZero() {
			out[c.Pos] = append(out[c.Pos], c.Ref())
		}
	}
	return out
}

// refAt is the object refusal r is of: the one object of its vhost
// declared where r says, of the kind r names it by; false when there is
// not exactly one.
func refAt(at map[topology.Pos][]ObjectRef, r rmqversion.Refusal) (ObjectRef, bool) {
	var found []ObjectRef
	pos := r.ObjectPos
	if pos.IsZero() {
		pos = r.Pos
	}
	for _, ref := range at[pos] {
		if ref.Vhost == r.Vhost && strings.HasPrefix(r.Object, kindLabel(ref.Kind)+" ") {
			found = append(found, ref)
		}
	}
	if len(found) != 1 {
		return ObjectRef{}, false
	}
	return found[0], true
}

// whereOf is the prefix a conflict's reason starts with: its place in the
// file, when known.
func whereOf(p topology.Pos) string {
	if p.Line > 0 {
		return p.String() + ": "
	}
	return ""
}

// AllRefusals are the plan's refusals and, after them, the objects the
// broker refused in the preflight (Plan.Preflight), one each.
func (p *Plan) AllRefusals() []Refused {
	out := slices.Clone(p.Refusals)
	if p.Preflight == nil {
		return out
	}
	for _, r := range p.Preflight.Refusals {
		for _, o := range r.Objects {
			out = append(out, Refused{Cause: RefusedPreflight, Vhost: o.Vhost, Kind: o.Kind, Name: o.Name, Object: fmt.Sprintf("%s %s", kindLabel(o.Kind), shownName(o.Kind, o.Name)),
				Pos: o.Pos, Reason: r.Reason})
		}
	}
	return out
}

// SplitRefusals splits err's refusals (a *rmqversion.RefusalsError of
// desired; any other error is returned as it is) by whether p declares
// their object: refuse holds those of an object p creates, updates or
// replaces, of a binding a replace of one of its ends puts back, and of
// any refusal mqctl cannot tie to one object of the plan (nil when none);
// held are the others, whose object the broker already holds exactly as
// desired declares it: p never writes it, so the broker is not asked to
// take it again (a topic key of three '#' words kept across an upgrade to
// 4.3.5, which refuses only new declarations).
func (p *Plan) SplitRefusals(desired *topology.Topology, err error) (refuse error, held []rmqversion.Refusal) {
	var re *rmqversion.RefusalsError
	if !errors.As(err, &re) {
		return err, nil
	}
	declared := map[ObjectRef]bool{}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action == Delete {
			continue
		}
		declared[c.Ref()] = true
		if c.Action == Replace {
			for _, b := range c.Bindings {
				declared[BindingRef(c.Vhost, b)] = true
			}
		}
	}
	at := refsAt(desired)
	var kept []rmqversion.Refusal
	for _, r := range re.Refusals {
		if ref, ok := refAt(at, r); ok && !declared[ref] {
			held = append(held, r)
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) == 0 {
		return nil, held
	}
	return &rmqversion.RefusalsError{Version: re.Version, Refusals: kept}, held
}

// HideText rewrites with hide what p says in words about the file and the
// broker (refusals, held changes, notes, the broker's preflight answers,
// why flows are unknown): the text views and the JSON plan then show no
// value the file took from the environment (topology.EnvValues.Hide). The
// changes themselves, which apply makes, are left as they are.
func (p *Plan) HideText(hide func(string) string) {
	if p == nil || hide == nil {
		return
	}
	for i := range p.Refusals {
		r := &p.Refusals[i]
		r.Key, r.Reason, r.Fix = hide(r.Key), hide(r.Reason), hide(r.Fix)
	}
	for i := range p.Held {
		p.Held[i].Reason = hide(p.Held[i].Reason)
	}
	for i := range p.Notes {
		p.Notes[i] = hide(p.Notes[i])
	}
	for i := range p.FlowsUnknown {
		p.FlowsUnknown[i].Reason = hide(p.FlowsUnknown[i].Reason)
	}
	if pf := p.Preflight; pf != nil {
		for i := range pf.Refusals {
			pf.Refusals[i].Reason = hide(pf.Refusals[i].Reason)
		}
		pf.Skipped = hide(pf.Skipped)
	}
}
