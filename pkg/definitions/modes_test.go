package definitions

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/internal/corpus"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The strict mode (Read, for files) and the lenient mode (MapLive, for a
// broker's answers) apply one set of rules: a valid definitions file maps
// to the same topology either way, as it would once imported and read
// back. Each corpus file Read accepts is split per vhost the way
// GET /api/definitions/{vhost} answers (objects without "vhost") and
// mapped leniently.
func TestStrictAndLenientAgreeOnCorpus(t *testing.T) {
	_, files := corpus.Files(t)
	compared := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		strict, rep, err := ReadWithOptions(filepath.Base(path), data, ReadOptions{DefaultVhost: "/"})
		if err != nil {
			continue // rejected files have no topology to compare
		}
		if why := notComparable(rep); why != "" {
			t.Logf("%s: not compared: %s", filepath.Base(path), why)
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			docs := splitPerVhost(t, data)
			for _, name := range strict.VhostNames() {
				want := strict.Vhosts[name]
				doc := new(Document)
				raw := docs[name]
				if raw == nil {
					raw = []byte(`{}`) // a vhost without objects
				}
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.UseNumber()
				if err := doc.DecodeStream(dec); err != nil {
					t.Fatalf("vhost %q: DecodeStream: %v", name, err)
				}
				got, err := MapLive(LiveVhost{Name: name, Description: want.Description, DefaultQueueType: want.DefaultQueueType, Tags: want.Tags}, doc)
				if err != nil {
					t.Fatalf("vhost %q: MapLive: %v", name, err)
				}
				// MapLive maps no items: the live read takes those from
				// pkg/broker's item drivers, which TestItemsAsTheLiveReadMakesThem
				// (items_test.go) compares with Read's.
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreTypes(topology.Meta{}), cmpopts.IgnoreFields(topology.Vhost{}, "Items")); diff != "" {
					t.Errorf("vhost %q: strict (-) and lenient (+) differ:\n%s", name, diff)
				}
			}
		})
		compared++
	}
	if compared == 0 {
		t.Fatal("no corpus file was compared")
	}
}

// notComparable says why a file Read accepts is no valid document to
// compare: what Read warns about is where the two modes part on purpose
// (a file's duplicates keep the first, a broker has none).
func notComparable(rep *Report) string {
	for _, w := range rep.Warnings {
		if bytes.Contains([]byte(w), []byte("declared twice")) || bytes.Contains([]byte(w), []byte("listed twice")) {
			return w
		}
	}
	return ""
}

// splitPerVhost renders a definitions file as one definitions document per
// vhost, as the broker answers GET /api/definitions/{vhost}.
func splitPerVhost(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		t.Fatal(err)
	}
	single := top["rabbitmq_definition_format"] == "single_virtual_host"
	per := map[string]map[string][]any{}
	for _, key := range []string{"exchanges", "queues", "bindings", "policies", "operator_policies", "parameters"} {
		list, _ := top[key].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			vh, _ := m["vhost"].(string)
			if single || vh == "" {
				vh = "/"
			}
			delete(m, "vhost")
			if l, isList := m["arguments"].([]any); isList && len(l) == 0 {
				m["arguments"] = map[string]any{} // some old exports write []; the management API answers {}
			}
			if per[vh] == nil {
				per[vh] = map[string][]any{}
			}
			per[vh][key] = append(per[vh][key], m)
		}
	}
	out := map[string][]byte{}
	for vh, doc := range per {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		out[vh] = b
	}
	return out
}
