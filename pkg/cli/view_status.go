package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mqctl/mqctl/pkg/status"
)

// statusView shows what status found: the report to a person (text) or to
// a program (its JSON document, json), and the notes on stderr.
type statusView struct {
	json   bool
	w      io.Writer
	stderr io.Writer
	color  bool
}

// restores tells, on stderr, of the bindings an apply stopped in the
// middle of a replace left to put back (pendingRestores).
func (v statusView) restores(rs []pendingRestore) {
	for _, r := range rs {
		if r.err != nil {
			fmt.Fprintf(v.stderr, "mqctl: note: %v\n", r.err)
			continue
		}
		n := len(r.missing)
		fmt.Fprintf(v.stderr, "mqctl: note: vhost %q: an apply stopped in the middle of a replace (killed, or cut from the broker) and left %d %s it took down, which the file does not declare, to put back (restore list %s): %s; run mqctl apply: it declares %s again once %s ends exist\n",
			r.vhost, n, pluralize("binding", n), strings.Join(r.lists, ", "), strings.Join(r.missing, "; "), them(n), their(n))
	}
}

// report writes the status report r.
func (v statusView) report(r *status.Report) error {
	var err error
	if v.json {
		err = status.WriteJSON(v.w, r)
	} else {
		err = status.WriteText(v.w, r, status.TextOptions{Color: v.color})
	}
	if err != nil {
		return fmt.Errorf("write the status: %w", err)
	}
	return nil
}

// their is the possessive for n things: "its" or "their".
func their(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}
