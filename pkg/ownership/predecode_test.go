package ownership

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestExtractAllTakesPredecoded: ExtractAllWith takes a record decoded
// beside the read (Predecoded.Add, from the exchange listing) instead of
// decoding it again, only where the state read holds that very exchange:
// a vhost read again may hold another record of the same name, and a
// record Add could not read is decoded again for the error that names its
// owner. Every case reads as ExtractAll does.
func TestExtractAllTakesPredecoded(t *testing.T) {
	t.Parallel()
	refs := func(names ...string) map[plan.ObjectRef]plan.Print {
		m := map[plan.ObjectRef]plan.Print{}
		for i, n := range names {
			m[plan.ObjectRef{Kind: kind.Queue, Vhost: "v", Name: n}] = plan.Print(i + 7)
		}
		return m
	}
	record := func(gen int64, r map[plan.ObjectRef]plan.Print) *topology.Exchange {
		e := OwnerExchange("team-a", "v", gen, r)
		e.Arguments = asBroker(t, e.Arguments) // as the broker gives it back
		return e
	}
	read := record(3, refs("q1", "q2"))
	copied := *read // the listing's element mapped again: equal, another value
	unreadable := &topology.Exchange{Name: RecordName("team-a", 3), Type: "fanout", Internal: true, Arguments: topology.Args{ArgFormat: int64(9)}}
	for _, tc := range []struct {
		name  string
		state *topology.Exchange // the record the state read holds
		added *topology.Exchange // the record Add decoded (nil: none)
		taken bool               // the decoded map is the one Add made
	}{
		{"the same exchange", read, &copied, true},
		{"none added", read, nil, false},
		{"read again: another record of that name", read, record(3, refs("q1", "q9")), false},
		{"unreadable", unreadable, unreadable, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			state := func() *topology.Topology {
				tp := topology.New()
				v := tp.Vhost("v")
				e := *tc.state
				v.Exchanges[e.Name] = &e
				v.Exchanges["orders"] = &topology.Exchange{Name: "orders", Type: "topic", Durable: true}
				return tp
			}
			want, wantErr := ExtractAll(state())
			var pre Predecoded
			if tc.added != nil {
				pre.Add("v", tc.added)
			}
			got, err := ExtractAllWith(state(), &pre)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, want ExtractAll's %v", err, wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("records (-ExtractAll +ExtractAllWith):\n%s", diff)
			}
			rec := got["v"]["team-a"]
			var added map[plan.ObjectRef]plan.Print
			if d := pre.m[predecodedKey{"v", RecordName("team-a", 3)}]; d != nil {
				<-d.done
				added = d.managed
			}
			if taken := added != nil && reflect.ValueOf(rec.Managed).UnsafePointer() == reflect.ValueOf(added).UnsafePointer(); taken != tc.taken {
				t.Errorf("took the record Add decoded: %v, want %v", taken, tc.taken)
			}
		})
	}
}
