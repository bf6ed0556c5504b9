package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
)

// An apply whose steps were all done but whose ownership record another
// apply wrote first says so, and to plan again: applying again at once
// would decide from a state read before the other apply's changes.
func TestIncompleteAdvice(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  apply.Result
		want string
	}{
		{"record raced", apply.Result{Done: make([]apply.Step, 2), RecordErr: fmt.Errorf("%w of vhost %q", apply.ErrRecordRaced, "v")},
			"another apply wrote mqctl's ownership record at the same time (see above): nothing was lost; run mqctl plan again"},
		{"a write answered 500 twice and read back not done", apply.Result{Done: make([]apply.Step, 1), Remaining: make([]apply.Step, 1),
			Failed: []apply.Failure{{Err: fmt.Errorf("%w; %w (after one more try)", fmt.Errorf("the management API at http://localhost:15672 answered 500 (Internal Server Error): %w", broker.ErrOutcomeUnknown), apply.ErrNotDone)}}},
			"apply 1 step failed after 1 of 3 steps; nothing was lost: fix the cause and run mqctl apply again"},
		{"a write with no answer", apply.Result{Done: make([]apply.Step, 1),
			Failed: []apply.Failure{{Err: fmt.Errorf("no answer from the management API: %w", broker.ErrOutcomeUnknown)}}},
			"apply 1 step failed: the management API could not be reached after 1 of 2 steps; nothing was lost: run mqctl apply again once it answers"},
		{"record not written", apply.Result{Done: make([]apply.Step, 2), RecordErr: errors.New("no answer")},
			"the ownership record could not be written after 2 of 2 steps; nothing was lost: fix the cause and run mqctl apply again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := incomplete(&tc.res).Error(); !strings.Contains(got, tc.want) {
				t.Errorf("incomplete = %s\nwant it to say %s", got, tc.want)
			}
		})
	}
}
