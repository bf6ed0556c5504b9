package flow

import (
	"cmp"
	"slices"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// sort orders every list of d (by vhost, then exchange or queue, then
// reason and class) and drops repeated Truncated names.
func (d *Diff) sort() {
	slices.SortFunc(d.Routes, func(a, b Route) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Exchange, b.Exchange), compareClass(&a.Class, &b.Class))
	})
	slices.SortFunc(d.DeadLetters, func(a, b DeadLetter) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Queue, b.Queue), cmp.Compare(reasonRank(a.Reason), reasonRank(b.Reason)), compareClass(a.Class, b.Class))
	})
	slices.SortFunc(d.DelayTiers, func(a, b DelayTier) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Queue, b.Queue), compareClass(a.Class, b.Class))
	})
	slices.SortFunc(d.Silenced, func(a, b Silenced) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Queue, b.Queue))
	})
	slices.SortFunc(d.Expiring, func(a, b Expiring) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Queue, b.Queue))
	})
	slices.SortFunc(d.Refusing, func(a, b Refusing) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Queue, b.Queue))
	})
	slices.SortFunc(d.Trimming, func(a, b Trimming) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Queue, b.Queue))
	})
	slices.SortFunc(d.Links, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(d.Unlisted, func(a, b Unlisted) int { return cmp.Compare(a.Vhost, b.Vhost) })
	slices.SortStableFunc(d.Ties, func(a, b Tie) int {
		return cmp.Or(cmp.Compare(a.Vhost, b.Vhost), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(boolRank(a.Operator), boolRank(b.Operator)))
	})
	slices.Sort(d.Truncated)
	d.Truncated = slices.Compact(d.Truncated)
}

// compareClass orders classes by routing key, then headers (nil first).
func compareClass(a, b *Class) int {
	switch {
	case a == nil || b == nil:
		return cmp.Compare(boolRank(a != nil), boolRank(b != nil))
	}
	return cmp.Or(cmp.Compare(a.RoutingKey, b.RoutingKey), cmp.Compare(topology.Args(a.Headers).Canonical(), topology.Args(b.Headers).Canonical()))
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reasonRank orders reasons as route lists them.
func reasonRank(r route.Reason) int {
	return slices.Index([]route.Reason{route.Rejected, route.Expired, route.MaxLen, route.DeliveryLimit}, r)
}
