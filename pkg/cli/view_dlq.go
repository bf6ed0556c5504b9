package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/dlq"
)

// dlqView shows what dlq peek and dlq replay do: the messages peeked and
// the replay's report to a person (text) or to a program (their JSON
// documents, json); the notes and the replay's progress on stderr.
type dlqView struct {
	json   bool
	w      io.Writer
	stderr io.Writer
}

func newDLQView(g *globals, cmd *cobra.Command) dlqView {
	return dlqView{json: g.output == "json", w: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
}

// note writes a note on stderr.
func (v dlqView) note(format string, args ...any) {
	fmt.Fprintf(v.stderr, "mqctl: note: "+format+"\n", args...)
}

// peek writes the messages peek read.
func (v dlqView) peek(res *dlq.PeekResult, o dlq.PeekRender) error {
	if v.json {
		return dlq.WritePeekJSON(v.w, res, o)
	}
	return dlq.WritePeekText(v.w, res, o)
}

// replay writes the replay's report.
func (v dlqView) replay(rep *dlq.Report, o dlq.ReplayRender) error {
	if v.json {
		return dlq.WriteReplayJSON(v.w, rep, o)
	}
	return dlq.WriteReplayText(v.w, rep, o)
}

// progress reports every 1000 messages on stderr.
func (v dlqView) progress(dry bool) func(dlq.Outcome) {
	verb := "replay"
	if dry {
		verb = "dry run"
	}
	return func(o dlq.Outcome) {
		if o.Index%1000 == 0 {
			fmt.Fprintf(v.stderr, "mqctl: %s: %d messages done\n", verb, o.Index)
		}
	}
}
