package broker

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestListedExchangesHandedOver: a read under WithListedExchanges hands
// the hook each exchange it wants of a vhost's exchange listing, mapped as
// the state read maps it, whichever way the vhost is read: from the
// definitions export (4.3.6, an administrator) or from the lists (4.0.5;
// 4.3.6 for a management user). The engine decodes mqctl's ownership
// records so while the rest of the vhost streams in.
func TestListedExchangesHandedOver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version, tags, source string
	}{
		{"4.3.6", `["administrator"]`, SourceDefinitions},
		{"4.0.5", `["administrator"]`, SourceLists},
		{"4.3.6", `["management"]`, SourceLists},
	} {
		t.Run(tc.version+" "+tc.tags, func(t *testing.T) {
			t.Parallel()
			c, _ := versionBroker(t, tc.version, tc.tags, "")
			var (
				mu  sync.Mutex
				got = map[string]*topology.Exchange{}
			)
			ctx := WithListedExchanges(context.Background(), func(name string) bool { return name == "events" }, func(vhost string, e *topology.Exchange) {
				mu.Lock()
				defer mu.Unlock()
				got[vhost+"/"+e.Name] = e
			})
			top, live, err := c.ReadTopology(ctx, []string{"v"})
			if err != nil {
				t.Fatal(err)
			}
			if live.Source != tc.source {
				t.Fatalf("Source = %q, want %q", live.Source, tc.source)
			}
			want := top.Vhosts["v"].Exchanges["events"]
			if want == nil {
				t.Fatal("the read has no exchange events")
			}
			if len(got) != 1 || got["v/events"] == nil {
				t.Fatalf("handed %v, want v/events alone", got)
			}
			if diff := cmp.Diff(want, got["v/events"]); diff != "" {
				t.Errorf("handed over (-read +handed):\n%s", diff)
			}
		})
	}
}

// TestListedExchangesWaitForTheHold: under HoldDefinitions the exchanges
// are handed over only once the hold ends, so that what the hook makes of
// them (a decoded record) is not held beside the file being loaded; a
// read cancelled before then hands nothing over. Without a hold, and for
// the lists (whose decoding is not held), at once.
func TestListedExchangesWaitForTheHold(t *testing.T) {
	t.Parallel()
	exchanges := []exchangeJSON{{Name: "events", Type: "topic", Durable: true}}
	for _, tc := range []struct {
		name           string
		hold, released bool
		lists          bool // the exchanges of the lists, not held
		want           bool // handed over
	}{
		{"no hold", false, false, false, true},
		{"hold ended", true, true, false, true},
		{"hold not ended, read cancelled", true, false, false, false},
		{"hold not ended, the lists", true, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ready := make(chan struct{})
			if tc.released {
				close(ready)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tc.hold {
				ctx = HoldDefinitions(ctx, ready)
				if !tc.released {
					cancel() // the read is cancelled while the file still loads
				}
			}
			defer cancel()
			handed, early := false, false
			ctx = WithListedExchanges(ctx, func(string) bool { return true }, func(string, *topology.Exchange) {
				handed = true
				select {
				case <-ready:
				default:
					early = tc.hold && !tc.lists
				}
			})
			listed(ctx, "v", exchanges, !tc.lists)
			if handed != tc.want || early {
				t.Errorf("handed over: %v (before the hold ended: %v), want %v", handed, early, tc.want)
			}
		})
	}
}
