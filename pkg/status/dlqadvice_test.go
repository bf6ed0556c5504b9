package status

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/lint"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestDeadLettersAlertNamesTheTools: a DLQ holding dead letters is an alert
// that says how to look at them and replay them, with the queue and vhost
// as a shell takes them, --from-queue where the dead letters of several
// queues meet, and, for a stream (which mqctl dlq does not read), what
// does.
func TestDeadLettersAlertNamesTheTools(t *testing.T) {
	dlq := func(name, typ string, from ...string) *Queue {
		return &Queue{Name: name, Role: topology.RoleDeadLetter, Type: typ, DeadLettersFrom: from, Present: true, Known: true, Messages: 3, Ready: 3}
	}
	for _, tc := range []struct {
		name, vhost string
		q           *Queue
		want        []string
		never       []string
	}{
		{"one origin, vhost /", "/", dlq("work.dlq", topology.QueueQuorum, "work"),
			[]string{"DLQ holds 3 dead letters (from work): ", "`mqctl dlq peek work.dlq --vhost /`", "`mqctl dlq replay work.dlq --vhost /`", "--dry-run"},
			[]string{"--from-queue"}},
		{"names a shell must quote", "shop floor", dlq("orders's dlq", topology.QueueClassic, "a", "b"),
			[]string{`mqctl dlq peek 'orders'\''s dlq' --vhost 'shop floor'`, `mqctl dlq replay 'orders'\''s dlq' --vhost 'shop floor'`, "those of one queue alone with --from-queue a"},
			nil},
		{"a stream", "/", dlq("audit.dlq", topology.QueueStream, "audit"),
			[]string{"mqctl dlq does not read a stream", "stream consumer from an offset"},
			[]string{"mqctl dlq peek"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := problems(tc.vhost, tc.q, false, lint.Finding{})
			if len(ps) != 1 || ps[0].Kind != KindDeadLetters || ps[0].Severity != Alert {
				t.Fatalf("problems = %+v; want one dead-letters alert", ps)
			}
			for _, w := range tc.want {
				if !strings.Contains(ps[0].Message, w) {
					t.Errorf("the alert lacks %q:\n%s", w, ps[0].Message)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(ps[0].Message, n) {
					t.Errorf("the alert has %q:\n%s", n, ps[0].Message)
				}
			}
		})
	}
}
