package engine

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestHeldRefusalThatStopsTheNode: a policy whose max-age is a list, which
// a 3.10 broker holds exactly as the file declares it (so the plan does not
// declare it and refuses nothing), is no harmless leftover as a held
// refusal is: the note says the harm is in force now and to fix it at once,
// not that the broker "would refuse to declare it again".
func TestHeldRefusalThatStopsTheNode(t *testing.T) {
	r := rmqversion.Refusal{Vhost: "v", Object: `policy "keep"`, Key: `max-age: ["7", "D"]`, StopsNode: true,
		Reason: "the node shuts down", Fix: `write it as one string, "7D"`}
	note := heldRefusalNote(rmqversion.MustParse("3.10.8"), r)
	for _, want := range []string{`policy "keep" in vhost "v"`, "it is in force now", "the node shuts down", "Fix it before a stream it applies to rolls a segment", `"7D"`, "nothing is replaced"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%s", want, note)
		}
	}
	if strings.Contains(note, "would refuse to declare it again") {
		t.Errorf("note calls the harm a refusal to come:\n%s", note)
	}
}
