package graph

import (
	"bufio"
	"strconv"
)

// mermaidLegend is written as comments under the header; the classDefs and
// linkStyles below make the kinds visible in the rendered diagram.
const mermaidLegend = `%% mqctl graph. Legend:
%%   {{exchange}} hexagon: type on the second line; dashed border = internal; grey = built-in
%%   [(queue)] cylinder: blue = working queue, red = dead-letter queue (DLQ), yellow = delay tier
%%   red dashed box = referenced but not declared
%%   --> binding, labelled with its routing keys (headers: x-match and headers)
%%   ==> alternate exchange
%%   -.-> red dashed: dead-letter edge, labelled with the dead-letter routing key when set
%%   -.-> blue dotted: delay-tier return, labelled with the tier's TTL ("after 10s")
`

const mermaidClasses = `classDef exchange fill:#fff4dd,stroke:#d79b00,color:#000
classDef internal fill:#fff4dd,stroke:#d79b00,stroke-dasharray:4 3,color:#000
classDef builtin fill:#eeeeee,stroke:#888888,color:#000
classDef queue fill:#dae8fc,stroke:#6c8ebf,color:#000
classDef dlq fill:#f8cecc,stroke:#b85450,color:#000
classDef delay fill:#fff2cc,stroke:#d6b656,color:#000
classDef missing fill:#ffffff,stroke:#cc0000,stroke-dasharray:3 3,color:#cc0000
`

func mermaidShape(k nodeKind) (open, close, class string) {
	switch k {
	case nodeExchange:
		return "{{", "}}", "exchange"
	case nodeInternalExchange:
		return "{{", "}}", "internal"
	case nodeBuiltinExchange:
		return "{{", "}}", "builtin"
	case nodeDLQ:
		return "[(", ")]", "dlq"
	case nodeDelay:
		return "[(", ")]", "delay"
	case nodeMissing:
		return "[", "]", "missing"
	default:
		return "[(", ")]", "queue"
	}
}

func mermaidArrow(k edgeKind) string {
	switch k {
	case edgeAlternate:
		return "==>"
	case edgeDeadLetter, edgeDelay:
		return "-.->"
	default:
		return "-->"
	}
}

func writeMermaid(w *bufio.Writer, m *model) {
	w.WriteString("flowchart LR\n")
	w.WriteString(mermaidLegend)
	w.WriteString(mermaidClasses)
	var deadLetter, delay, alternate []int
	index := 0
	for _, c := range m.clusters {
		w.WriteString("subgraph ")
		w.WriteString(c.id)
		w.WriteString(`["`)
		writeMermaidText(w, c.title)
		w.WriteString("\"]\n")
		for _, n := range c.nodes {
			open, close, class := mermaidShape(n.kind)
			w.WriteString("  ")
			w.WriteString(n.id)
			w.WriteString(open)
			w.WriteByte('"')
			writeMermaidLines(w, n.lines)
			w.WriteByte('"')
			w.WriteString(close)
			w.WriteString(":::")
			w.WriteString(class)
			w.WriteByte('\n')
		}
		for _, e := range c.edges {
			w.WriteString("  ")
			w.WriteString(e.from)
			w.WriteByte(' ')
			w.WriteString(mermaidArrow(e.kind))
			if len(e.labels) > 0 {
				w.WriteString(`|"`)
				writeMermaidLines(w, e.labels)
				w.WriteString(`"|`)
			}
			w.WriteByte(' ')
			w.WriteString(e.to)
			w.WriteByte('\n')
			switch e.kind {
			case edgeDeadLetter:
				deadLetter = append(deadLetter, index)
			case edgeDelay:
				delay = append(delay, index)
			case edgeAlternate:
				alternate = append(alternate, index)
			}
			index++
		}
		w.WriteString("end\n")
	}
	writeLinkStyle(w, deadLetter, "stroke:#b85450,stroke-width:1.5px,stroke-dasharray:6 4")
	writeLinkStyle(w, delay, "stroke:#3a6ea5,stroke-width:1.5px,stroke-dasharray:2 3")
	writeLinkStyle(w, alternate, "stroke:#8e44ad,stroke-width:2px")
}

func writeLinkStyle(w *bufio.Writer, idx []int, style string) {
	if len(idx) == 0 {
		return
	}
	w.WriteString("linkStyle ")
	var buf [20]byte
	for i, n := range idx {
		if i > 0 {
			w.WriteByte(',')
		}
		w.Write(strconv.AppendInt(buf[:0], int64(n), 10))
	}
	w.WriteByte(' ')
	w.WriteString(style)
	w.WriteByte('\n')
}

func writeMermaidLines(w *bufio.Writer, lines []string) {
	for i, l := range lines {
		if i > 0 {
			w.WriteString("<br/>")
		}
		writeMermaidText(w, l)
	}
}

// writeMermaidText writes s for use inside a double-quoted Mermaid label.
// Characters Mermaid or its HTML labels would interpret are written as
// Mermaid entity codes (#quot;, #35;, …); invalid UTF-8 becomes U+FFFD.
func writeMermaidText(w *bufio.Writer, s string) { writeEscaped(w, s, mermaidEscape) }

func mermaidEscape(c byte) string {
	switch c {
	case '"':
		return "#quot;"
	case '#':
		return "#35;"
	case '<':
		return "#lt;"
	case '>':
		return "#gt;"
	case '&':
		return "#amp;"
	case '|':
		return "#124;"
	case '`':
		return "#96;"
	case '%':
		return "#37;" // "%%" starts a Mermaid comment
	}
	if c < 0x20 || c == 0x7f {
		return "#" + strconv.Itoa(int(c)) + ";"
	}
	return ""
}
