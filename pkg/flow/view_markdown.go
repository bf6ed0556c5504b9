package flow

import (
	"fmt"
	"io"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// MarkdownOptions configure WriteMarkdown.
type MarkdownOptions struct {
	// Fold is how many entries that only move messages are shown before
	// the rest are folded into a <details> block (0: 10). Entries that
	// lose messages are never folded.
	Fold int
	// Marks: write topology.ScopeMark before each row (the queue it is
	// about, or none), as TextOptions.Marks.
	Marks bool
}

// WriteMarkdown writes the flows for a pull-request comment, below the
// summary (Summary) the caller writes: a table, the entries that lose
// messages first and flagged, the rest folded past o.Fold. Nothing when
// the change moves no message.
func WriteMarkdown(w io.Writer, d *Diff, o MarkdownOptions) error {
	fold := o.Fold
	if fold <= 0 {
		fold = 10
	}
	var sb strings.Builder
	entries := d.entries()
	shown := 0
	for shown < len(entries) && (entries[shown].loses || entries[shown].unknown || shown < fold) {
		shown++
	}
	if shown > 0 {
		writeTable(&sb, entries[:shown], o.Marks)
	}
	if rest := entries[shown:]; len(rest) > 0 {
		fmt.Fprintf(&sb, "\n<details><summary>%s more</summary>\n\n", count(len(rest), "flow change"))
		writeTable(&sb, rest, o.Marks)
		sb.WriteString("\n</details>\n")
	}
	if t := d.truncatedExchanges(); len(t) > 0 {
		fmt.Fprintf(&sb, "\nNot every class of keys is listed for %s: their bindings make too many.\n", cells(t))
	}
	if ties := d.tieLines(""); ties != "" {
		sb.WriteString("\n" + cell(strings.TrimSuffix(ties, "\n")) + "\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func writeTable(sb *strings.Builder, entries []entry, marks bool) {
	sb.WriteString("| | messages | vhost | before | after | cause |\n|---|---|---|---|---|---|\n")
	for _, e := range entries {
		mark := ":arrow_right:"
		switch {
		case e.loses:
			mark = ":x:"
		case e.unknown:
			mark = ":grey_question:"
		}
		if marks {
			sb.WriteString(e.mark())
		}
		fmt.Fprintf(sb, "| %s | %s | %s | %s | %s | %s |\n", mark, cell(e.what), cell(e.vhost), cell(e.was), cell(e.now), cell(e.cause))
	}
	if marks {
		sb.WriteString(topology.ScopeMark("", "", ""))
	}
}

// cell is s made safe for a table cell: Markdown would read the * of a
// topic pattern as emphasis, the | as a cell's end.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`", "~", `\~`, "[", `\[`).Replace(s)
}

func cells(ss []string) string { return cell(strings.Join(ss, ", ")) }
