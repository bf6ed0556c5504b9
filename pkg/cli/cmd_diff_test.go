package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
)

// TestDiffJSONGrowsLinearly: "mqctl diff -o json" of benchrun's file and
// its replace file (every class of messages of a topic exchange made
// headers reaches all n queues, every queue's dead letters through a DLX
// made fanout all n DLQs) grows with the queues, not their square: it
// wrote each list in full where an entry named it (714 MB at 10,002
// objects, and at 50,002 mqctl ran out of memory). Four times the queues
// made 12 times the bytes.
func TestDiffJSONGrowsLinearly(t *testing.T) {
	dir := t.TempDir()
	size := func(n int) int {
		old, file := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")
		if err := os.WriteFile(old, []byte(gentopo.YAML("v", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(gentopo.ReplaceYAML("v", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runMain(nil, "diff", old, file, "-o", "json")
		var doc struct {
			Flows struct {
				QueueLists [][]string `json:"queue_lists"`
			} `json:"flows"`
		}
		if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
			t.Fatalf("diff -o json of %d queues: exit %d\n%s", n, code, stderr)
		}
		// Every queue is in a list: all n DLQs reach each dead letter.
		longest := 0
		for _, l := range doc.Flows.QueueLists {
			longest = max(longest, len(l))
		}
		if longest != n {
			t.Errorf("%d queues: the longest list of queue_lists has %d", n, longest)
		}
		return len(stdout)
	}
	const n = 60
	small, large := size(n), size(4*n)
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Errorf("diff -o json: %d bytes for %d working queues, %d for %d: %.1f times, want about 4", small, n, large, 4*n, ratio)
	} else {
		t.Logf("diff -o json: %d bytes for %d working queues, %d for %d: %.1f times", small, n, large, 4*n, ratio)
	}
}
