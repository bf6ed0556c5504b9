package preflight

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRefused is wrapped by RefusedError.
var ErrRefused = errors.New("the broker refuses part of the plan")

// RefusedError is the error of an apply (or of plan --preflight) whose
// preflight the broker refused: nothing was changed.
type RefusedError struct{ Report *Report }

func (e *RefusedError) Unwrap() error { return ErrRefused }

// Error lists each cause once, in the broker's words, with every object
// it refuses for it, where the file declares it.
func (e *RefusedError) Error() string {
	var sb strings.Builder
	n := e.Report.Refused()
	how := "each shape was tried in a throwaway vhost first"
	if e.Report.ByWrite {
		how = "apply's first write, made alone, which the broker refused whole"
	}
	fmt.Fprintf(&sb, "nothing was changed: the broker refuses %d %s of the plan (%s):", n, plural("object", n), how)
	for _, line := range e.Report.RefusalLines() {
		sb.WriteString("\n  " + line)
	}
	sb.WriteString("\nFix them in the file and plan again (`mqctl plan --preflight` asks the broker without applying)")
	return sb.String()
}

func plural(w string, n int) string {
	if n == 1 {
		return w
	}
	return w + "s"
}
