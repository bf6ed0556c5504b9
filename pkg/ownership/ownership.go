// Package ownership keeps mqctl's record of what it manages on the broker
// itself, so there is no local state file to lose or share.
//
// The record of a vhost is an internal exchange in that vhost named
// "mqctl.ownership.<generation>" whose arguments list the managed objects.
// An exchange is used because any user who may configure the vhost may
// declare one (no administrator tag needed), it survives restarts when
// durable, nobody can publish to an internal exchange, and it shows up,
// self-describing, in the management UI. Exchange arguments cannot change,
// so a new record is declared under the next generation before the old one
// is deleted: a crash in between leaves two records, and the newest wins.
package ownership

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Prefix starts the name of every record exchange.
const Prefix = "mqctl.ownership."

// Argument names inside a record exchange.
const (
	ArgFormat  = "x-mqctl-format"
	ArgManaged = "x-mqctl-managed"
	format     = int64(1)
)

// Record is the ownership record of one vhost.
type Record struct {
	Vhost string
	// Generation of the newest record exchange (0 when there is none).
	Generation int64
	// Exchanges are the names of every record exchange found (old
	// generations left by an interrupted write included).
	Exchanges []string
	// Managed holds the managed objects of the vhost.
	Managed map[plan.ObjectRef]bool
}

// IsRecord reports whether an exchange name belongs to a record.
func IsRecord(name string) bool {
	if !strings.HasPrefix(name, Prefix) {
		return false
	}
	_, err := strconv.ParseInt(name[len(Prefix):], 10, 64)
	return err == nil
}

// Extract removes the record exchanges from t (they are mqctl's own
// bookkeeping, not part of the topology) and returns each vhost's record.
// A record that cannot be read is an error naming it.
func Extract(t *topology.Topology) (map[string]*Record, error) {
	out := map[string]*Record{}
	for _, vn := range t.VhostNames() {
		v := t.Vhosts[vn]
		rec := &Record{Vhost: vn, Managed: map[plan.ObjectRef]bool{}}
		out[vn] = rec
		var newest *topology.Exchange
		for _, en := range v.ExchangeNames() {
			if !IsRecord(en) {
				continue
			}
			gen, _ := strconv.ParseInt(en[len(Prefix):], 10, 64)
			rec.Exchanges = append(rec.Exchanges, en)
			if newest == nil || gen > rec.Generation {
				newest, rec.Generation = v.Exchanges[en], gen
			}
		}
		for _, en := range rec.Exchanges {
			delete(v.Exchanges, en)
		}
		// Bindings to or from a record exchange are not part of the topology either.
		kept := v.Bindings[:0]
		for _, b := range v.Bindings {
			if IsRecord(b.Source) || (b.DestinationType == topology.DestExchange && IsRecord(b.Destination)) {
				continue
			}
			kept = append(kept, b)
		}
		v.Bindings = kept
		if newest == nil {
			continue
		}
		if err := decode(vn, newest, rec.Managed); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func decode(vhost string, e *topology.Exchange, into map[plan.ObjectRef]bool) error {
	bad := func(why string) error {
		return fmt.Errorf("ownership record %q in vhost %q is unreadable (%s): delete that exchange and run apply again to rebuild it from the file", e.Name, vhost, why)
	}
	if f, ok := e.Arguments.Int(ArgFormat); !ok || f != format {
		return bad(fmt.Sprintf("%s is %v, this mqctl reads %d", ArgFormat, e.Arguments[ArgFormat], format))
	}
	list, ok := e.Arguments[ArgManaged].([]any)
	if !ok && e.Arguments[ArgManaged] != nil {
		return bad(ArgManaged + " is not a list")
	}
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			return bad(fmt.Sprintf("entry %v is not a string", item))
		}
		kind, name, ok := strings.Cut(s, ":")
		if !ok {
			return bad(fmt.Sprintf("entry %q has no kind", s))
		}
		into[plan.ObjectRef{Kind: plan.Kind(kind), Vhost: vhost, Name: name}] = true
	}
	return nil
}

// Exchange builds the record exchange of generation gen listing refs (only
// the refs of vhost are kept).
func Exchange(vhost string, gen int64, refs map[plan.ObjectRef]bool) *topology.Exchange {
	entries := make([]string, 0, len(refs))
	for r := range refs {
		if r.Vhost == vhost {
			entries = append(entries, string(r.Kind)+":"+r.Name)
		}
	}
	sort.Strings(entries)
	list := make([]any, len(entries))
	for i, s := range entries {
		list[i] = s
	}
	return &topology.Exchange{
		Name:     Prefix + strconv.FormatInt(gen, 10),
		Type:     "fanout",
		Durable:  true,
		Internal: true,
		Arguments: topology.Args{
			ArgFormat:  format,
			ArgManaged: list,
		},
	}
}

// Equal reports whether the record already lists exactly refs (for vhost).
func (r *Record) Equal(refs map[plan.ObjectRef]bool) bool {
	n := 0
	for ref := range refs {
		if ref.Vhost != r.Vhost {
			continue
		}
		n++
		if !r.Managed[ref] {
			return false
		}
	}
	return n == len(r.Managed) && len(r.Exchanges) <= 1
}

// Merge returns the union of the per-vhost records as one managed set.
func Merge(recs map[string]*Record) map[plan.ObjectRef]bool {
	out := map[plan.ObjectRef]bool{}
	for _, r := range recs {
		for ref := range r.Managed {
			out[ref] = true
		}
	}
	return out
}
