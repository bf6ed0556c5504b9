// Package brokerstate reads a vhost as mqctl's live tests check it: the
// objects the broker holds, mqctl's ownership record apart, and that
// record. Holds says whether a vhost holds exactly a file's objects (and
// some unmanaged ones), with the record listing exactly the file's.
//
// It is test code without a testing.TB, shared by the Go tests of pkg/cli
// and the live scripts of cmd/mqctl.
package brokerstate

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Read reads vhost from the broker, and mqctl's ownership record of it
// (nil when there is none), separately.
func Read(ctx context.Context, c *broker.Client, vhost string) (*topology.Vhost, *ownership.Record, error) {
	top, _, err := c.ReadState(ctx, []string{vhost})
	if err != nil {
		return nil, nil, fmt.Errorf("read the broker: %w", err)
	}
	recs, err := ownership.Extract(top)
	if err != nil {
		return nil, nil, fmt.Errorf("read the ownership record: %w", err)
	}
	v := top.Vhosts[vhost]
	if v == nil {
		return nil, nil, fmt.Errorf("vhost %q does not exist", vhost)
	}
	return v, recs[vhost], nil
}

// Objects is the part of a vhost that apply makes equal to the file.
type Objects struct {
	Exchanges        map[string]*topology.Exchange
	Queues           map[string]*topology.Queue
	Bindings         []*topology.Binding
	Policies         map[string]*topology.Policy
	OperatorPolicies map[string]*topology.Policy
}

// ObjectsOf returns v's objects (its bindings sorted).
func ObjectsOf(v *topology.Vhost) Objects {
	v.SortBindings()
	return Objects{Exchanges: v.Exchanges, Queues: v.Queues, Bindings: v.Bindings, Policies: v.Policies, OperatorPolicies: v.OperatorPolicies}
}

// CmpObjects compares Objects as the broker holds them: mqctl's own
// fields (positions, roles, alerts) left out.
var CmpObjects = cmp.Options{
	cmpopts.EquateEmpty(),
	cmpopts.IgnoreFields(topology.Queue{}, topology.QueueFileFields...),
	cmpopts.IgnoreFields(topology.Exchange{}, "Meta"),
	cmpopts.IgnoreFields(topology.Binding{}, "Meta"),
	cmpopts.IgnoreFields(topology.Policy{}, "Meta"),
}

// Merge returns the objects of base overlaid with those of top (top wins).
func Merge(base, top *topology.Vhost) *topology.Vhost {
	out := topology.NewVhost(top.Name)
	out.Description = top.Description
	for _, v := range []*topology.Vhost{base, top} {
		if v == nil {
			continue
		}
		for n, x := range v.Exchanges {
			out.Exchanges[n] = x
		}
		for n, q := range v.Queues {
			out.Queues[n] = q
		}
		for _, k := range kind.PolicyKinds() {
			maps.Copy(out.PoliciesOf(k), v.PoliciesOf(k))
		}
	}
	seen := map[string]bool{}
	for _, v := range []*topology.Vhost{top, base} {
		if v == nil {
			continue
		}
		for _, b := range v.Bindings {
			if seen[b.Key()] || (v == base && !bothEnds(out, b)) {
				continue // the broker dropped it with one of its ends
			}
			seen[b.Key()] = true
			out.Bindings = append(out.Bindings, b)
		}
	}
	return out
}

// bothEnds reports whether both ends of b exist in v.
func bothEnds(v *topology.Vhost, b *topology.Binding) bool {
	if _, ok := v.Exchanges[b.Source]; !ok && !topology.IsReservedName(b.Source) {
		return false
	}
	if b.DestinationType == topology.DestExchange {
		_, ok := v.Exchanges[b.Destination]
		return ok || topology.IsReservedName(b.Destination)
	}
	_, ok := v.Queues[b.Destination]
	return ok
}

// Holds checks that vhost holds exactly the objects of want (a file's
// vhost, expanded) plus the unmanaged ones want does not name (nil: none),
// and that mqctl's ownership record lists exactly want's objects, each
// with the print of the object as the broker holds it (so a plan deletes
// it once the file drops it). The error says every difference.
func Holds(ctx context.Context, c *broker.Client, vhost string, want, unmanaged *topology.Vhost) error {
	got, rec, err := Read(ctx, c, vhost)
	if err != nil {
		return err
	}
	var errs []error
	if diff := cmp.Diff(ObjectsOf(Merge(unmanaged, want)), ObjectsOf(got), CmpObjects); diff != "" {
		errs = append(errs, fmt.Errorf("the broker does not hold the file (-want +got):\n%s", diff))
	}
	if want.Description != "" && got.Description != want.Description {
		errs = append(errs, fmt.Errorf("vhost description = %q, want %q", got.Description, want.Description))
	}
	refs := map[plan.ObjectRef]bool{}
	for n := range want.Exchanges {
		refs[plan.ObjectRef{Kind: kind.Exchange, Vhost: vhost, Name: n}] = true
	}
	for n := range want.Queues {
		refs[plan.ObjectRef{Kind: kind.Queue, Vhost: vhost, Name: n}] = true
	}
	for _, b := range want.Bindings {
		refs[plan.BindingRef(vhost, b)] = true
	}
	for _, k := range kind.PolicyKinds() {
		for n := range want.PoliciesOf(k) {
			refs[plan.ObjectRef{Kind: k, Vhost: vhost, Name: n}] = true
		}
	}
	managed := map[plan.ObjectRef]plan.Print{}
	if rec != nil {
		for ref, p := range rec.Managed {
			if ref.Kind != kind.Vhost {
				managed[ref] = p
			}
		}
		if len(rec.Exchanges) != 1 && len(refs) > 0 {
			errs = append(errs, fmt.Errorf("ownership record exchanges = %v, want exactly one", rec.Exchanges))
		}
	}
	live := topology.New()
	live.Vhosts[vhost] = got
	if diff := cmp.Diff(plan.RecordedOf(live, refs), managed); diff != "" {
		errs = append(errs, fmt.Errorf("the ownership record does not list exactly the file's objects with the broker's prints (-file +record):\n%s", diff))
	}
	return errors.Join(errs...)
}
