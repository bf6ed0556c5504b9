package preflight

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/plan"
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
	verb := "refuses"
	if internalCount(e.Report) == n {
		verb = "failed on"
	}
	fmt.Fprintf(&sb, "nothing was changed: the broker %s %d %s of the plan (%s):", verb, n, plural("object", n), how)
	for _, line := range e.Report.RefusalLines() {
		sb.WriteString("\n  " + line)
	}
	if advice := InternalAdvice(e.Report); advice != "" {
		sb.WriteString("\n" + advice)
		if n-internalCount(e.Report) == 0 {
			return sb.String()
		}
		sb.WriteString("\nFix the others in the file")
	} else {
		sb.WriteString("\nFix them in the file")
	}
	sb.WriteString(" and plan again (`mqctl plan --preflight` asks the broker without applying)")
	return sb.String()
}

// internalMark ends the reason of a refusal the broker answered with a
// 5xx (internalReason): an internal error, with no reason of its own.
const internalMark = "an internal error of the broker, not a refusal it gives a reason for"

// internalReason is the reason of err, the broker's refusal in its words
// reason, where it answered with a 5xx: its status and words (none, or
// the status's text, for a crash), marked as an internal error.
// RabbitMQ 4.3.6, 4.0.5 and 3.10.8 answer so a policy whose max-age is a
// number: its validation crashes (TestInternalErrorAgainstBroker).
func internalReason(err error, reason string) string {
	var ae *broker.APIError
	if !errors.As(err, &ae) || ae.Status < 500 {
		return reason
	}
	words := ""
	if reason != "" && reason != http.StatusText(ae.Status) {
		words = fmt.Sprintf(": %q", reason)
	}
	return fmt.Sprintf("HTTP %d (%s)%s, %s", ae.Status, http.StatusText(ae.Status), words, internalMark)
}

// internalCount counts the objects of pf's refusals the broker answered
// with an internal error.
func internalCount(pf *plan.Preflight) int {
	n := 0
	for _, r := range pf.Refusals {
		if strings.HasSuffix(r.Reason, internalMark) {
			n += len(r.Objects)
		}
	}
	return n
}

// InternalAdvice is what to do about the objects of pf the broker answered
// with an internal error (HTTP 5xx) rather than a reason: "" when none.
// Nothing was changed; the broker's log has the reason; a value of a type
// its validation does not expect is the usual cause (fix it, ask again);
// a broker that was unwell answers otherwise once it is well; and
// --no-preflight, which goes on without asking, meets the same answer in
// the real write unless the cause was the throwaway vhost's, and stops the
// apply there, the changes before it made.
func InternalAdvice(pf *plan.Preflight) string {
	n := internalCount(pf)
	if n == 0 {
		return ""
	}
	them := "it"
	if n > 1 {
		them = "them"
	}
	return fmt.Sprintf("The broker failed on %s (HTTP 5xx) instead of saying what it refuses, so mqctl cannot say what to fix. "+
		"RabbitMQ's log has the reason: an [error] line at the time of this run naming the request's crash (`rabbitmq-diagnostics log_tail` on the node, or its log file). "+
		"Where it names the broker's validation (rabbit_policies, rabbit_amqqueue, rabbit_exchange: a value of a type it does not expect, such as a number where it takes a text), fix that value in the file; "+
		"where the broker was unwell (a memory alarm, a node restarting), run the command again once it is well. "+
		"`mqctl apply --no-preflight` goes on without asking the broker first, but the write of %s most likely meets the same error and stops the apply there, with the changes before it made: use it only if you accept that risk",
		them, them)
}

func plural(w string, n int) string {
	if n == 1 {
		return w
	}
	return w + "s"
}
