package graph

import (
	"bufio"
)

const dotLegend = `  // mqctl graph. Legend:
  //   hexagon: exchange, type on the second line; dashed border = internal; grey = built-in
  //   cylinder: queue; blue = working queue, red = dead-letter queue (DLQ), yellow = delay tier
  //   red dashed box: referenced but not declared
  //   solid edge: binding, labelled with its routing keys (headers: x-match and headers)
  //   bold purple edge: alternate exchange
  //   red dashed edge: dead-letter, labelled with the dead-letter routing key when set
  //   blue dotted edge: delay-tier return, labelled with the tier's TTL ("after 10s")
`

const dotDefaults = `  graph [rankdir=LR, fontname="Helvetica", fontsize=11];
  node [fontname="Helvetica", fontsize=10, style=filled];
  edge [fontname="Helvetica", fontsize=9];
`

func dotNodeAttrs(k nodeKind) string {
	switch k {
	case nodeExchange:
		return `shape=hexagon, fillcolor="#fff4dd", color="#d79b00"`
	case nodeInternalExchange:
		return `shape=hexagon, style="filled,dashed", fillcolor="#fff4dd", color="#d79b00"`
	case nodeBuiltinExchange:
		return `shape=hexagon, fillcolor="#eeeeee", color="#888888"`
	case nodeDLQ:
		return `shape=cylinder, fillcolor="#f8cecc", color="#b85450"`
	case nodeDelay:
		return `shape=cylinder, fillcolor="#fff2cc", color="#d6b656"`
	case nodeMissing:
		return `shape=box, style="dashed", color="#cc0000", fontcolor="#cc0000"`
	default:
		return `shape=cylinder, fillcolor="#dae8fc", color="#6c8ebf"`
	}
}

func dotEdgeAttrs(k edgeKind) string {
	switch k {
	case edgeAlternate:
		return `style=bold, color="#8e44ad", fontcolor="#8e44ad"`
	case edgeDeadLetter:
		return `style=dashed, color="#b85450", fontcolor="#b85450"`
	case edgeDelay:
		return `style=dotted, color="#3a6ea5", fontcolor="#3a6ea5"`
	default:
		return ""
	}
}

func writeDOT(w *bufio.Writer, m *model) {
	w.WriteString("digraph mqctl {\n")
	w.WriteString(dotLegend)
	w.WriteString(dotDefaults)
	for _, c := range m.clusters {
		w.WriteString("  subgraph \"cluster_")
		w.WriteString(c.id)
		w.WriteString("\" {\n    label=\"")
		writeDOTText(w, c.title)
		w.WriteString("\";\n    style=rounded;\n    color=\"#999999\";\n")
		for _, n := range c.nodes {
			w.WriteString("    \"")
			w.WriteString(n.id)
			w.WriteString("\" [label=\"")
			writeDOTLines(w, n.lines)
			w.WriteString("\", ")
			w.WriteString(dotNodeAttrs(n.kind))
			w.WriteString("];\n")
		}
		for _, e := range c.edges {
			w.WriteString("    \"")
			w.WriteString(e.from)
			w.WriteString("\" -> \"")
			w.WriteString(e.to)
			w.WriteByte('"')
			attrs := dotEdgeAttrs(e.kind)
			if len(e.labels) > 0 || attrs != "" {
				w.WriteString(" [")
				if len(e.labels) > 0 {
					w.WriteString("label=\"")
					writeDOTLines(w, e.labels)
					w.WriteByte('"')
					if attrs != "" {
						w.WriteString(", ")
					}
				}
				w.WriteString(attrs)
				w.WriteByte(']')
			}
			w.WriteString(";\n")
		}
		w.WriteString("  }\n")
	}
	w.WriteString("}\n")
}

func writeDOTLines(w *bufio.Writer, lines []string) {
	for i, l := range lines {
		if i > 0 {
			w.WriteString(`\n`)
		}
		writeDOTText(w, l)
	}
}

// writeDOTText writes s for use inside a double-quoted DOT label: quotes
// and backslashes are escaped (so no Graphviz escape such as \N or \l is
// triggered by a name), & is written as &amp; (Graphviz decodes entities),
// line breaks become \n, other control characters
// become spaces and invalid UTF-8 becomes U+FFFD.
func writeDOTText(w *bufio.Writer, s string) { writeEscaped(w, s, dotEscape) }

func dotEscape(c byte) string {
	switch {
	case c == '"':
		return `\"`
	case c == '\\':
		return `\\`
	case c == '&':
		return "&amp;" // Graphviz decodes HTML entities in labels
	case c == '\n' || c == '\r':
		return `\n`
	case c < 0x20 || c == 0x7f:
		return " "
	}
	return ""
}
