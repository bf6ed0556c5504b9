package cli

import (
	"strings"
	"testing"
)

// TestTakeOverFromOnce: plan and apply refuse --take-over-from given
// twice, naming both owners and the way to merge their files (one apply
// with each in turn), before reading the file or the broker. Before, the
// flag kept the last owner and dropped the first without a word: a team
// merging team-a's and team-b's files into one took over team-b's records
// only, and the plan never said team-a's was ignored.
func TestTakeOverFromOnce(t *testing.T) {
	const want = `given twice (team-a, then team-b): a plan takes over one owner's records; to merge several owners' files into this one, plan and apply once with each in turn (--take-over-from team-a, then --take-over-from team-b)`
	for _, args := range [][]string{
		{"plan", "-f", "missing.yaml", "--take-over-from", "team-a", "--take-over-from", "team-b"},
		{"apply", "-f", "missing.yaml", "--take-over-from=team-a", "--take-over-from=team-b", "--auto-approve"},
	} {
		t.Run(args[0], func(t *testing.T) {
			stdout, stderr, code := runMain(map[string]string{"MQCTL_SERVER": "http://127.0.0.1:1"}, args...)
			if code != 1 || !strings.Contains(stderr, want) || stdout != "" {
				t.Errorf("mqctl %s: exit %d, stdout %q, stderr %q; want exit 1 and an error saying %s", strings.Join(args, " "), code, stdout, stderr, want)
			}
		})
	}
}
