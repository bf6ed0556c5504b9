package gentopo

import (
	"encoding/json"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
)

func TestYAMLExpandsToObjects(t *testing.T) {
	top, err := loader.LoadBytes("gen.yaml", []byte(YAML("v", 50)), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := top.Vhosts["v"]
	if got := len(v.Queues) + len(v.Bindings) + len(v.Exchanges); got != Objects(50) {
		t.Errorf("%d objects, want %d", got, Objects(50))
	}
	data, err := Definitions(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Queues, Exchanges, Bindings []map[string]any }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Queues) != 100 || len(doc.Bindings) != 100 || len(doc.Exchanges) != 2 {
		t.Errorf("definitions hold %d queues, %d bindings, %d exchanges", len(doc.Queues), len(doc.Bindings), len(doc.Exchanges))
	}
	if doc.Queues[0]["arguments"].(map[string]any)["x-queue-type"] != "classic" {
		t.Errorf("queue type missing from the definitions: %v", doc.Queues[0])
	}
}
