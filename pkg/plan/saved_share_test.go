package plan

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestSavedChangesShareArguments: the queues a saved plan replaces hold
// their arguments' names, and the values they share (a dead-letter
// exchange, an overflow, a limit), once, as read by apply PLANFILE; each
// its own dead-letter routing key.
func TestSavedChangesShareArguments(t *testing.T) {
	p, err := StreamSaved(bytes.NewReader(savedBytes(t, benchReplacePlan(t, 20))))
	if err != nil {
		t.Fatal(err)
	}
	var queues []*topology.Queue
	for _, c := range p.Changes {
		if q, ok := As[topology.Queue](c.After); ok && c.Action == Replace {
			queues = append(queues, q)
		}
	}
	if len(queues) < 2 {
		t.Fatalf("%d queues replaced", len(queues))
	}
	a, b := queues[0].Arguments, queues[1].Arguments
	name := func(args map[string]any, k string) *byte {
		for n := range args {
			if n == k {
				return unsafe.StringData(n)
			}
		}
		return nil
	}
	for _, k := range []string{"x-dead-letter-exchange", "x-overflow", "x-max-length"} {
		if name(a, k) == nil || name(a, k) != name(b, k) {
			t.Errorf("argument %s: its name is held by each queue", k)
		}
	}
	for _, k := range []string{"x-dead-letter-exchange", "x-overflow"} {
		x, _ := a[k].(string)
		y, _ := b[k].(string)
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("argument %s: %q and %q, each its own", k, x, y)
		}
	}
	if a["x-dead-letter-routing-key"] == b["x-dead-letter-routing-key"] {
		t.Errorf("the two queues have the same dead-letter routing key: %v", a["x-dead-letter-routing-key"])
	}
}
