package plan

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestStaleObjects: apply's refusal of a stale saved plan names what
// changed on the broker since the plan was made, from the prints the
// plan keeps (through WriteSaved and ReadSaved, as apply reads them):
// each object created, changed or deleted, by kind, name and vhost, the
// first five and a count of the rest; the deleted ones the plan or the
// records name, the others counted; the kinds about users only when the
// saved fingerprint covers them. Before, it said only "the broker changed
// since this plan was made".
func TestStaleObjects(t *testing.T) {
	q := func(name string, sum uint64) ObjectSum {
		return ObjectSum{ObjectRef: ObjectRef{Kind: kind.Queue, Vhost: "v", Name: name}, Sum: sum}
	}
	user := ObjectSum{ObjectRef: ObjectRef{Kind: kind.User, Name: "deploy"}, Access: true, Sum: 1}
	userNewPassword := user
	userNewPassword.Sum = 2
	var many, manyMore []ObjectSum
	for i := range 8 {
		many = append(many, q(fmt.Sprintf("q%d", i), 1))
		manyMore = append(manyMore, q(fmt.Sprintf("q%d", i), 2))
	}
	tests := []struct {
		name        string
		before, now []ObjectSum
		access      bool
		known       []ObjectRef
		unread      map[string][]topology.Unread
		want        string
	}{
		{"created", []ObjectSum{q("a", 1)}, []ObjectSum{q("a", 1), q("theirs", 7)}, false, nil, nil, `queue "theirs" in vhost "v" created`},
		{"changed", []ObjectSum{q("a", 1)}, []ObjectSum{q("a", 2)}, false, nil, nil, `queue "a" in vhost "v" changed`},
		{"deleted, named by the plan", []ObjectSum{q("a", 1), q("b", 1)}, []ObjectSum{q("a", 1)}, false, []ObjectRef{{Kind: kind.Queue, Vhost: "v", Name: "b"}}, nil, `queue "b" in vhost "v" deleted`},
		{"deleted, not named", []ObjectSum{q("a", 1), q("b", 1)}, []ObjectSum{q("a", 1)}, false, nil, nil, `1 queue in vhost "v" deleted (the plan keeps no name of it)`},
		{"all three", []ObjectSum{q("a", 1), q("b", 1)}, []ObjectSum{q("a", 3), q("c", 1)}, false, []ObjectRef{{Kind: kind.Queue, Vhost: "v", Name: "b"}}, nil,
			`queue "a" in vhost "v" changed, queue "b" in vhost "v" deleted and queue "c" in vhost "v" created`},
		{"the first five, and a count", many, manyMore, false, nil, nil,
			`queue "q0" in vhost "v" changed, queue "q1" in vhost "v" changed, queue "q2" in vhost "v" changed, queue "q3" in vhost "v" changed, queue "q4" in vhost "v" changed and 3 more objects`},
		{"deleted, not named, two kinds", []ObjectSum{q("a", 1), q("b", 1), q("c", 1), {ObjectRef: ObjectRef{Kind: kind.Policy, Vhost: "v", Name: "cap"}, Sum: 1}}, []ObjectSum{q("a", 1)}, false, nil, nil,
			`1 policy in vhost "v" deleted (the plan keeps no name of it) and 2 queues in vhost "v" deleted (the plan keeps no name of them)`},
		{"not readable now, named", []ObjectSum{q("a", 1), q("b", 1)}, []ObjectSum{}, false, []ObjectRef{{Kind: kind.Queue, Vhost: "v", Name: "b"}},
			map[string][]topology.Unread{"v": {{Vhost: "v", Kind: kind.Queue, Reason: "forbidden"}}},
			`queue "b" in vhost "v" no longer readable by this user and 1 queue in vhost "v" no longer readable by this user (the plan keeps no name of it)`},
		{"a vhost not shown now", []ObjectSum{{ObjectRef: ObjectRef{Kind: kind.Vhost, Vhost: "v", Name: "v"}, Sum: 1}, {ObjectRef: ObjectRef{Kind: kind.Policy, Vhost: "v", Name: "cap"}, Sum: 1}, q("a", 1), {ObjectRef: ObjectRef{Kind: kind.Queue, Vhost: "w", Name: "b"}, Sum: 1}},
			[]ObjectSum{{ObjectRef: ObjectRef{Kind: kind.Queue, Vhost: "w", Name: "b"}, Sum: 2}}, false, []ObjectRef{{Kind: kind.Policy, Vhost: "v", Name: "cap"}},
			map[string][]topology.Unread{"v": {{Vhost: "v", Kind: kind.Vhost, Reason: "not shown"}}},
			`queue "b" in vhost "w" changed and vhost "v" and what the plan saw in it (3 objects) no longer readable by this user`},
		{"a user's password, with a users section", []ObjectSum{q("a", 1), user}, []ObjectSum{q("a", 1), userNewPassword}, true, nil, nil, `user "deploy" changed`},
		{"a user's password, without", []ObjectSum{q("a", 1), user}, []ObjectSum{q("a", 1), q("b", 1), userNewPassword}, false, nil, nil, `queue "b" in vhost "v" created`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Saved and read back, as apply reads the plan.
			p := &Plan{Fingerprint: "sha256:x", ObjectPrints: PrintsOf(tt.before, tt.access)}
			var buf bytes.Buffer
			if err := WriteSaved(&buf, p); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(buf.String(), "deploy") || strings.Contains(buf.String(), `"theirs"`) {
				t.Errorf("the saved plan names the broker's objects in its prints:\n%s", buf.String())
			}
			back, err := ReadSaved(&buf, "p.plan")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back.ObjectPrints, p.ObjectPrints) {
				t.Fatalf("prints read back %v, want %v", back.ObjectPrints, p.ObjectPrints)
			}
			if got := StaleObjects(back.ObjectPrints, tt.now, tt.access, tt.known, tt.unread).String(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	// A plan saved by an older mqctl keeps no prints.
	if got, want := StaleObjects(nil, []ObjectSum{q("a", 1)}, false, nil, nil).String(), "the plan was saved by an older mqctl, which kept no print of each object to tell which changed"; got != want {
		t.Errorf("no prints: got %q, want %q", got, want)
	}
}
