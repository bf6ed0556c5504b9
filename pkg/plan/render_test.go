package plan

import (
	"bytes"
	"path/filepath"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	gold.Check(t, filepath.Join("testdata", name), got)
}

func samplePlan() *Plan {
	desired := vh("/", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Queues["orders.shipping"] = q("orders.shipping", topology.Args{"x-max-priority": int64(10), "x-dead-letter-exchange": "orders.dlx"})
		v.Queues["fresh"] = q("fresh", topology.Args{"x-message-ttl": int64(60000)})
		v.Bindings = []*topology.Binding{bind("orders", "orders.shipping", "order.created")}
		v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: "^events\\.", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(100000)}}
	})
	current := vh("/", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Queues["orders.shipping"] = q("orders.shipping", topology.Args{"x-dead-letter-exchange": "orders.dlx"})
		v.Queues["old"] = q("old", nil)
		v.Queues["theirs"] = q("theirs", nil)
		v.Bindings = []*topology.Binding{bind("orders", "orders.shipping", "order.created")}
		v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: "^events\\.", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(50000)}}
	})
	managed := map[ObjectRef]bool{{KindQueue, "/", "old"}: true, {KindQueue, "/", "orders.shipping"}: true}
	stats := map[ObjectRef]QueueStats{{KindQueue, "/", "old"}: {Messages: 3}, {KindQueue, "/", "orders.shipping"}: {Messages: 12, Consumers: 2}}
	return Diff(desired, Current{State: current, Managed: managed, Stats: stats, Fingerprint: "abc123"})
}

func TestRenderText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, samplePlan(), RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan.txt", buf.Bytes())

	buf.Reset()
	if err := WriteText(&buf, samplePlan(), RenderOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("\x1b[35m-/+\x1b[0m queue")) {
		t.Errorf("colour output should paint the replace marker:\n%q", buf.String())
	}

	buf.Reset()
	if err := WriteText(&buf, Diff(topology.New(), Current{State: topology.New()}), RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "No changes. The broker matches the file.\n" {
		t.Errorf("empty plan renders %q", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	p := samplePlan()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan.json", buf.Bytes())
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("plan changed through JSON (-before +after):\n%s", diff)
	}
	if _, err := ReadJSON(bytes.NewBufferString(`{"format_version":"99","changes":[]}`)); err == nil {
		t.Error("a plan of another format version must be refused")
	}
}
