package plan

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"
)

// TestStreamSavedFlowsApart: the saved plan read with its flows apart is
// the plan StreamSaved reads but for its flows, which ReadSavedFlows reads
// from where StreamSavedFlowsApart says they are, the same (a queue's
// dead letters that go alike holding their ends once). The plan read
// so holds less by the flows (apply PLANFILE holds them only to show
// them). A plan whose flows the plan holds (none) says so (-1).
func TestStreamSavedFlowsApart(t *testing.T) {
	doc := savedBytes(t, benchReplacePlan(t, 200))
	whole, err := StreamSaved(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if whole.Flows == nil || len(whole.Flows.DeadLetters) == 0 || len(whole.Flows.Routes) == 0 {
		t.Fatal("the replace plan has no flows to leave apart")
	}
	held := func(read func() *Plan) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p := read()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(p)
		return after.HeapAlloc - before.HeapAlloc
	}
	var apart *Plan
	var at int64
	heldApart := held(func() *Plan {
		if apart, at, err = StreamSavedFlowsApart(bytes.NewReader(doc)); err != nil {
			t.Fatal(err)
		}
		return apart
	})
	heldWhole := held(func() *Plan { p, _ := StreamSaved(bytes.NewReader(doc)); return p })
	if apart.Flows != nil || at < 0 {
		t.Fatalf("the plan read with its flows apart has flows (%v), or says they are at %d", apart.Flows != nil, at)
	}
	t.Logf("the plan read holds %d bytes with its flows, %d without", heldWhole, heldApart)
	if heldApart > heldWhole*9/10 {
		t.Errorf("the plan read with its flows apart holds %d bytes, the plan with them %d: it holds them, or the like", heldApart, heldWhole)
	}
	flows, err := ReadSavedFlows(bytes.NewReader(doc[at:]))
	if err != nil {
		t.Fatalf("read the flows at %d: %v", at, err)
	}
	if !reflect.DeepEqual(flows, whole.Flows) {
		t.Error("the flows read apart are not those StreamSaved reads")
	}
	// A queue's dead letters that go alike hold their ends once.
	shared := 0
	for i, dl := range flows.DeadLetters[1:] {
		prev := flows.DeadLetters[i]
		if dl.Queue == prev.Queue && reflect.DeepEqual(dl.After, prev.After) {
			if dl.After != prev.After {
				t.Fatalf("dead letters %d and %d of queue %q go alike, and each holds its own end", i, i+1, dl.Queue)
			}
			shared++
		}
	}
	if shared == 0 {
		t.Error("no queue's dead letters go alike in the replace plan")
	}
	apart.Flows = whole.Flows
	if !reflect.DeepEqual(apart, whole) {
		t.Error("the plan read with its flows apart is not, but for its flows, the one StreamSaved reads")
	}
	// No flows: the plan holds them (none).
	none := savedBytes(t, &Plan{Fingerprint: "f"})
	if p, at, err := StreamSavedFlowsApart(bytes.NewReader(none)); err != nil || at != -1 || p.Flows != nil {
		t.Errorf("a plan without flows: at %d, flows %v, %v", at, p != nil && p.Flows != nil, err)
	}
}
