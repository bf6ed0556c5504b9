package apply

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestPlannedRecordsKeepShared: an object another owner's record lists
// too is dropped from this owner's record only when this file no longer
// names it (left to the other owner); one both files still declare alike
// (shared, recorded by both) stays in it. Since b68e4c0 marked the shared
// ones Recorded too, an apply of team-b's that changed anything in the
// vhost dropped the shared queue q from team-b's record (its next plan
// adopted it again), and team-a's file dropping q then deleted it while
// team-b's still declared it (4.3.6).
func TestPlannedRecordsKeepShared(t *testing.T) {
	t.Parallel()
	q := plan.ObjectRef{Kind: kind.Queue, Vhost: "v", Name: "q"}
	left := plan.ObjectRef{Kind: kind.Queue, Vhost: "v", Name: "left"}
	rec := &ownership.Record{Vhost: "v", Owner: "team-b", Managed: map[plan.ObjectRef]plan.Print{q: 7, left: 8}}
	for _, tc := range []struct {
		name  string
		other plan.OtherOwned
		ref   plan.ObjectRef
		keeps bool
	}{
		{"shared, recorded by both", plan.OtherOwned{ObjectRef: q, Owners: []string{"team-a"}, Shared: true, Recorded: true}, q, true},
		{"no longer named, left to the other owner", plan.OtherOwned{ObjectRef: left, Owners: []string{"team-a"}, Recorded: true}, left, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &executor{opts: Options{Records: map[string]*ownership.Record{"v": rec}}}
			managed, _ := e.plannedRecords(&plan.Plan{Owner: "team-b", Others: []plan.OtherOwned{tc.other}})
			if _, ok := managed[tc.ref]; ok != tc.keeps {
				t.Errorf("record after apply lists %v: %v, want %v", tc.ref, ok, tc.keeps)
			}
		})
	}
}
