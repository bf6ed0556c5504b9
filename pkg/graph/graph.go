// Package graph draws a topology as a Mermaid flowchart or a Graphviz DOT
// digraph: exchanges, queues, bindings, exchange-to-exchange bindings,
// alternate exchanges, dead-letter edges and delay-tier return edges, each
// kind distinguishable at a glance. Output is deterministic: the same
// topology always renders to the same bytes.
package graph

import (
	"bufio"
	"fmt"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mqctl/mqctl/pkg/topology"
)

// Output formats accepted by Render.
const (
	FormatMermaid = "mermaid"
	FormatDOT     = "dot"
)

// Formats returns the formats Render accepts, the default first.
func Formats() []string { return []string{FormatMermaid, FormatDOT} }

// CheckFormat returns an error naming the accepted formats when format is
// not one of them.
func CheckFormat(format string) error {
	for _, f := range Formats() {
		if format == f {
			return nil
		}
	}
	return fmt.Errorf("graph format %q is not supported; use one of: %s", format, strings.Join(Formats(), ", "))
}

// Render writes t to w in format ("mermaid" or "dot"). Every vhost becomes
// its own subgraph (Mermaid) or cluster (DOT). Dead-letter edges follow the
// rules of RabbitMQ version ver (the zero Version: rmqversion.Default, 4.3).
func Render(w io.Writer, t *topology.Topology, format string, ver rmqversion.Version) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("graph: no topology to draw")
	}
	m := build(t, ver)
	bw := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case FormatDOT:
		writeDOT(bw, m)
	default:
		writeMermaid(bw, m)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s graph: %w", format, err)
	}
	return nil
}

// writeEscaped writes s with every ASCII byte that escape maps to a
// non-empty string replaced by it; invalid UTF-8 becomes U+FFFD.
func writeEscaped(w *bufio.Writer, s string, escape func(byte) string) {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				w.WriteString(s[start:i])
				w.WriteString("\uFFFD")
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		esc := escape(c)
		if esc == "" {
			i++
			continue
		}
		w.WriteString(s[start:i])
		w.WriteString(esc)
		i++
		start = i
	}
	w.WriteString(s[start:])
}
