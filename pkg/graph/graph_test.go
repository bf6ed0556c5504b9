package graph

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	gold "github.com/mqctl/mqctl/internal/golden"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// --- topology builders -------------------------------------------------

func exchange(v *topology.Vhost, name, typ string, mod ...func(*topology.Exchange)) {
	x := &topology.Exchange{Name: name, Type: typ, Durable: true}
	for _, f := range mod {
		f(x)
	}
	v.Exchanges[name] = x
}

func queue(v *topology.Vhost, name string, args topology.Args, mod ...func(*topology.Queue)) {
	q := &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Arguments: args.Normalized(), Role: topology.RoleWorking}
	for _, f := range mod {
		f(q)
	}
	v.Queues[name] = q
}

func bind(v *topology.Vhost, src, dst, key string, args topology.Args) {
	v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestQueue, RoutingKey: key, Arguments: args.Normalized()})
}

func bindExchange(v *topology.Vhost, src, dst, key string) {
	v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestExchange, RoutingKey: key})
}

func role(r topology.QueueRole, origin string) func(*topology.Queue) {
	return func(q *topology.Queue) { q.Role, q.Origin = r, origin }
}

// smallTopology exercises every node and edge kind: topic/fanout/headers/
// internal exchanges, an exchange-to-exchange binding, an alternate
// exchange, sugar DLQ and delay tiers (Role set), a structural DLQ and delay
// tier (Role not set), a DLX set by policy, a dead letter straight to a
// queue through the default exchange, a built-in amq.* source and
// references to undeclared objects; and a second vhost with hostile names.
func smallTopology() *topology.Topology {
	t := topology.New()
	v := t.Vhost("/")
	exchange(v, "orders", "topic", func(x *topology.Exchange) { x.Arguments = topology.Args{"alternate-exchange": "orders.unrouted"} })
	exchange(v, "orders.dlx", "topic")
	exchange(v, "orders.unrouted", "fanout", func(x *topology.Exchange) { x.Internal = true })
	exchange(v, "audit", "fanout", func(x *topology.Exchange) { x.Internal = true })
	exchange(v, "reports", "headers")

	queue(v, "orders.shipping", topology.Args{"x-dead-letter-exchange": "orders.dlx", "x-dead-letter-routing-key": "orders.shipping"}, func(q *topology.Queue) { q.Type = topology.QueueQuorum })
	queue(v, "orders.shipping.dlq", nil, role(topology.RoleDeadLetter, "orders.shipping"), func(q *topology.Queue) { q.Type = topology.QueueQuorum })
	for _, d := range []int64{10_000, 60_000} {
		name := "orders.shipping.retry." + loader.FormatDuration(d)
		queue(v, name, topology.Args{"x-message-ttl": d, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.shipping"},
			role(topology.RoleDelay, "orders.shipping"), func(q *topology.Queue) { q.Delay = d; q.Type = topology.QueueQuorum })
	}
	queue(v, "orders.unrouted.store", topology.Args{"x-max-length": 1000})
	queue(v, "audit.log", nil) // DLX comes from policy audit-dlx
	queue(v, "audit.parked", nil)
	queue(v, "reports.pdf", nil)
	queue(v, "legacy", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "legacy.parking"})
	queue(v, "legacy.parking", nil)
	queue(v, "legacy.wait", topology.Args{"x-message-ttl": 1500, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "legacy"})
	queue(v, "lost", topology.Args{"x-dead-letter-exchange": "no.such.dlx"})

	bind(v, "orders", "orders.shipping", "order.created", nil)
	bind(v, "orders", "orders.shipping", "order.paid", nil)
	bind(v, "orders.dlx", "orders.shipping.dlq", "orders.shipping", nil)
	bind(v, "orders.dlx", "audit.parked", "audit.#", nil)
	bind(v, "orders.unrouted", "orders.unrouted.store", "", nil)
	bindExchange(v, "orders", "audit", "#")
	bind(v, "audit", "audit.log", "", nil)
	bind(v, "reports", "reports.pdf", "", topology.Args{"x-match": "any", "format": "pdf", "priority": 1})
	bind(v, "amq.topic", "legacy", "legacy.*", nil)
	bind(v, "ghost", "lost", "k", nil)
	v.Policies["audit-dlx"] = &topology.Policy{Name: "audit-dlx", Pattern: `^audit\.log$`, ApplyTo: "queues",
		Definition: topology.Args{"dead-letter-exchange": "orders.dlx", "dead-letter-routing-key": "audit.log"}}

	w := t.Vhost(`weird "vhost"`)
	exchange(w, "a.b", "direct")
	exchange(w, "a_b", "direct")
	exchange(w, "end", "direct")
	queue(w, `q "quoted" \ back/slash`, nil)
	queue(w, "ünïcödé 注文 <b>&amp;</b> | `tick` #1", nil)
	queue(w, "new\nline", nil)
	bind(w, "a.b", `q "quoted" \ back/slash`, `key "x" \N`, nil)
	bind(w, "a_b", "ünïcödé 注文 <b>&amp;</b> | `tick` #1", "#quot; %% -->", nil)
	bind(w, "end", "new\nline", "", nil)
	return t
}

func render(t *testing.T, top *topology.Topology, format string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, top, format, rmqversion.Default); err != nil {
		t.Fatalf("Render(%s): %v", format, err)
	}
	return buf.String()
}

// --- golden files ------------------------------------------------------

func TestGolden(t *testing.T) {
	for _, tc := range []struct{ format, file string }{
		{FormatMermaid, "small.mmd"},
		{FormatDOT, "small.dot"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			got := render(t, smallTopology(), tc.format)
			gold.Check(t, filepath.Join("testdata", tc.file), []byte(got))
		})
	}
}

func TestDeterministic(t *testing.T) {
	for _, format := range Formats() {
		first := render(t, smallTopology(), format)
		for i := 0; i < 5; i++ {
			top := smallTopology()
			// Binding order in the file must not matter.
			b := top.Vhosts["/"].Bindings
			for l, r := 0, len(b)-1; l < r; l, r = l+1, r-1 {
				b[l], b[r] = b[r], b[l]
			}
			if got := render(t, top, format); got != first {
				t.Fatalf("%s output changed between renders of the same topology", format)
			}
		}
	}
}

// --- structural checks -------------------------------------------------

var (
	mmdID       = `[A-Za-z][A-Za-z0-9_]*`
	mmdNodeRe   = regexp.MustCompile(`^  (` + mmdID + `)(\{\{|\[\(|\[)"([^"]*)"(\}\}|\)\]|\]):::(\w+)$`)
	mmdEdgeRe   = regexp.MustCompile(`^  (` + mmdID + `) (-->|==>|-\.->)(?:\|"([^"]*)"\|)? (` + mmdID + `)$`)
	mmdSubRe    = regexp.MustCompile(`^subgraph (` + mmdID + `)\["([^"]*)"\]$`)
	mmdClassRe  = regexp.MustCompile(`^classDef (\w+) \S+$|^classDef \w+ [^"]+$`)
	mmdLinkRe   = regexp.MustCompile(`^linkStyle ([0-9,]+) [^"]+$`)
	mmdEntityRe = regexp.MustCompile(`#([a-z]+|[0-9]+);`)
)

type mermaidGraph struct {
	nodes   map[string]string // id -> class
	labels  map[string]string // id -> raw label
	edges   [][3]string       // from, arrow, to
	eLabels []string
}

// parseMermaid checks out line by line: every line is the header, a
// comment, a classDef, a subgraph or end, a node, an edge or a linkStyle;
// every edge endpoint is a declared node; every linkStyle index is an edge.
func parseMermaid(t *testing.T, out string) mermaidGraph {
	t.Helper()
	g := mermaidGraph{nodes: map[string]string{}, labels: map[string]string{}}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "flowchart LR" {
		t.Fatalf("first line = %q, want %q", lines[0], "flowchart LR")
	}
	depth := 0
	var linkIdx []int
	for i, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "%%"), mmdClassRe.MatchString(l):
		case mmdSubRe.MatchString(l):
			depth++
		case l == "end":
			depth--
			if depth < 0 {
				t.Fatalf("line %d: end without subgraph", i+2)
			}
		case mmdNodeRe.MatchString(l):
			m := mmdNodeRe.FindStringSubmatch(l)
			if _, dup := g.nodes[m[1]]; dup {
				t.Errorf("line %d: node %s declared twice", i+2, m[1])
			}
			g.nodes[m[1]] = m[5]
			g.labels[m[1]] = m[3]
		case mmdEdgeRe.MatchString(l):
			m := mmdEdgeRe.FindStringSubmatch(l)
			g.edges = append(g.edges, [3]string{m[1], m[2], m[4]})
			g.eLabels = append(g.eLabels, m[3])
		case mmdLinkRe.MatchString(l):
			for _, s := range strings.Split(mmdLinkRe.FindStringSubmatch(l)[1], ",") {
				n, err := strconv.Atoi(s)
				if err != nil {
					t.Fatalf("line %d: bad linkStyle index %q", i+2, s)
				}
				linkIdx = append(linkIdx, n)
			}
		default:
			t.Errorf("line %d is not valid mqctl Mermaid: %q", i+2, l)
		}
	}
	if depth != 0 {
		t.Errorf("%d subgraph(s) not closed", depth)
	}
	for _, e := range g.edges {
		for _, id := range []string{e[0], e[2]} {
			if _, ok := g.nodes[id]; !ok {
				t.Errorf("edge %s %s %s: endpoint %s is not a declared node", e[0], e[1], e[2], id)
			}
		}
	}
	for _, n := range linkIdx {
		if n >= len(g.edges) {
			t.Errorf("linkStyle index %d, but only %d edges", n, len(g.edges))
		}
	}
	return g
}

// dotToken is a DOT lexeme: a quoted string (unescaped), an ID, or punctuation.
type dotToken struct {
	text   string
	quoted bool
}

func lexDOT(t *testing.T, src string) []dotToken {
	t.Helper()
	var toks []dotToken
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"':
			var sb strings.Builder
			i++
			for ; ; i++ {
				if i >= len(src) {
					t.Fatal("unterminated DOT string")
				}
				if src[i] == '\n' {
					t.Fatal("raw newline inside a DOT string")
				}
				if src[i] == '\\' && i+1 < len(src) {
					sb.WriteByte(src[i])
					sb.WriteByte(src[i+1])
					i++
					continue
				}
				if src[i] == '"' {
					i++
					break
				}
				sb.WriteByte(src[i])
			}
			toks = append(toks, dotToken{text: sb.String(), quoted: true})
		case strings.HasPrefix(src[i:], "->"):
			toks = append(toks, dotToken{text: "->"})
			i += 2
		case strings.ContainsRune("{}[];=,", rune(c)):
			toks = append(toks, dotToken{text: string(c)})
			i++
		default:
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '.' || src[j] == '#' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			if j == i {
				t.Fatalf("unexpected character %q in DOT output at offset %d", c, i)
			}
			toks = append(toks, dotToken{text: src[i:j]})
			i = j
		}
	}
	return toks
}

type dotGraph struct {
	nodes  map[string]map[string]string // id -> attributes
	edges  [][2]string
	eAttrs []map[string]string
}

// parseDOT checks the output's structure: balanced braces and brackets,
// statements of the forms mqctl writes, every edge endpoint declared.
func parseDOT(t *testing.T, out string) dotGraph {
	t.Helper()
	toks := lexDOT(t, out)
	g := dotGraph{nodes: map[string]map[string]string{}}
	if len(toks) < 3 || toks[0].text != "digraph" || toks[2].text != "{" {
		t.Fatalf("DOT output does not start with `digraph NAME {`: %v", toks[:min(3, len(toks))])
	}
	attrs := func(i int) (map[string]string, int) {
		a := map[string]string{}
		if i >= len(toks) || toks[i].text != "[" {
			return a, i
		}
		for i++; i < len(toks) && toks[i].text != "]"; {
			if i+2 >= len(toks) || toks[i+1].text != "=" {
				t.Fatalf("bad attribute list near token %d (%q)", i, toks[i].text)
			}
			a[toks[i].text] = toks[i+2].text
			i += 3
			if toks[i].text == "," {
				i++
			}
		}
		if i >= len(toks) {
			t.Fatal("unterminated attribute list")
		}
		return a, i + 1
	}
	depth := 1
	for i := 3; i < len(toks); {
		tk := toks[i]
		switch {
		case tk.text == "}" && !tk.quoted:
			depth--
			i++
			if depth < 0 {
				t.Fatal("unbalanced }")
			}
		case tk.text == "subgraph" && !tk.quoted:
			if toks[i+2].text != "{" {
				t.Fatalf("subgraph %q not followed by {", toks[i+1].text)
			}
			depth++
			i += 3
		case !tk.quoted && (tk.text == "graph" || tk.text == "node" || tk.text == "edge"):
			_, i = attrs(i + 1)
		case i+1 < len(toks) && toks[i+1].text == "=":
			i += 3
		case i+1 < len(toks) && toks[i+1].text == "->":
			a, next := attrs(i + 3)
			g.edges = append(g.edges, [2]string{tk.text, toks[i+2].text})
			g.eAttrs = append(g.eAttrs, a)
			i = next
		case tk.quoted:
			a, next := attrs(i + 1)
			if _, dup := g.nodes[tk.text]; dup {
				t.Errorf("node %s declared twice", tk.text)
			}
			g.nodes[tk.text] = a
			i = next
		default:
			t.Fatalf("unexpected DOT token %q at %d", tk.text, i)
		}
		if i < len(toks) && toks[i].text == ";" {
			i++
		}
	}
	if depth != 0 {
		t.Errorf("unbalanced braces: depth %d at end", depth)
	}
	for _, e := range g.edges {
		for _, id := range e {
			if _, ok := g.nodes[id]; !ok {
				t.Errorf("edge %s -> %s: endpoint %s is not a declared node", e[0], e[1], id)
			}
		}
	}
	return g
}

func TestMermaidStructure(t *testing.T) {
	out := render(t, smallTopology(), FormatMermaid)
	g := parseMermaid(t, out)
	if len(g.edges) == 0 || len(g.nodes) == 0 {
		t.Fatal("no nodes or edges parsed")
	}
	for id, label := range g.labels {
		rest := mmdEntityRe.ReplaceAllString(label, "")
		rest = strings.ReplaceAll(rest, "<br/>", "")
		if strings.ContainsAny(rest, "\"#<>&|`%\n") {
			t.Errorf("node %s: label %q has an unescaped special character", id, label)
		}
	}
	for i, label := range g.eLabels {
		rest := strings.ReplaceAll(mmdEntityRe.ReplaceAllString(label, ""), "<br/>", "")
		if strings.ContainsAny(rest, "\"#<>&|`%\n") {
			t.Errorf("edge %d: label %q has an unescaped special character", i, label)
		}
	}
}

func TestDOTStructure(t *testing.T) {
	out := render(t, smallTopology(), FormatDOT)
	g := parseDOT(t, out)
	if len(g.edges) == 0 || len(g.nodes) == 0 {
		t.Fatal("no nodes or edges parsed")
	}
	t.Run("graphviz", func(t *testing.T) { runGraphviz(t, out) })
}

// runGraphviz renders DOT with Graphviz's dot when it is installed and
// fails on any error or warning it prints.
func runGraphviz(t *testing.T, src string) {
	t.Helper()
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz `dot` is not installed (apt-get install graphviz): skipping the render check")
	}
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = strings.NewReader(src)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dot -Tsvg failed: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("dot -Tsvg warned:\n%s", stderr.String())
	}
	if !bytes.Contains(stdout.Bytes(), []byte("<svg")) {
		t.Errorf("dot -Tsvg wrote no SVG")
	}
}

// --- what a reader of the diagram sees ----------------------------------

// edgeKinds maps "from -> to" (by node label's first line) to the edge's
// arrow and label in Mermaid output.
func mermaidEdges(t *testing.T, out string) (map[string]string, map[string]string) {
	t.Helper()
	g := parseMermaid(t, out)
	name := func(id string) string {
		l := g.labels[id]
		if i := strings.Index(l, "<br/>"); i >= 0 {
			l = l[:i]
		}
		return l
	}
	edges := map[string]string{}
	for i, e := range g.edges {
		k := name(e[0]) + " -> " + name(e[2])
		if _, dup := edges[k]; dup {
			t.Errorf("two edges %s", k)
		}
		edges[k] = e[1] + " " + g.eLabels[i]
	}
	classes := map[string]string{}
	for id, c := range g.nodes {
		classes[name(id)] = c
	}
	return edges, classes
}

func TestWhatTheDiagramShows(t *testing.T) {
	edges, classes := mermaidEdges(t, render(t, smallTopology(), FormatMermaid))
	wantEdges := map[string]string{
		// bindings, all keys of one pair on one edge
		"orders -> orders.shipping":                    "--> order.created<br/>order.paid",
		"orders.dlx -> orders.shipping.dlq":            "--> orders.shipping",
		"orders -> audit":                              "--> #35;", // exchange-to-exchange
		"audit -> audit.log":                           "--> ",     // fanout: keys do not matter
		"reports -> reports.pdf":                       "--> x-match=any, format=pdf, priority=1",
		"amq.topic -> legacy":                          "--> legacy.*",
		"ghost -> lost":                                "--> k",
		"orders -> orders.unrouted":                    "==> alternate",
		"orders.shipping -> orders.dlx":                "-.-> dead-letter: orders.shipping",
		"audit.log -> orders.dlx":                      "-.-> dead-letter: audit.log",      // DLX from a policy
		"legacy -> legacy.parking":                     "-.-> dead-letter: legacy.parking", // via the default exchange
		"lost -> no.such.dlx":                          "-.-> dead-letter",
		"orders.shipping.retry.10s -> orders.shipping": "-.-> after 10s",
		"orders.shipping.retry.1m -> orders.shipping":  "-.-> after 1m",
		"legacy.wait -> legacy":                        "-.-> after 1500ms",
	}
	for k, want := range wantEdges {
		if got, ok := edges[k]; !ok {
			t.Errorf("missing edge %s (%s)", k, want)
		} else if got != want {
			t.Errorf("edge %s = %q, want %q", k, got, want)
		}
	}
	wantClasses := map[string]string{
		"orders":                    "exchange",
		"orders.unrouted":           "internal",
		"amq.topic":                 "builtin",
		"ghost":                     "missing",
		"no.such.dlx":               "missing",
		"orders.shipping":           "queue",
		"orders.shipping.dlq":       "dlq",
		"orders.shipping.retry.10s": "delay",
		"legacy.parking":            "dlq",   // structural: reached by legacy's dead letters
		"audit.parked":              "dlq",   // structural, through a policy DLX and a topic binding
		"legacy.wait":               "delay", // structural: TTL + default exchange back to legacy
		"legacy":                    "queue", // a delay tier returns to it: still a working queue
		"lost":                      "queue",
	}
	for n, want := range wantClasses {
		if got := classes[n]; got != want {
			t.Errorf("node %s drawn as %q, want %q", n, got, want)
		}
	}
}

func TestEdgeKindsDistinctInDOT(t *testing.T) {
	g := parseDOT(t, render(t, smallTopology(), FormatDOT))
	styles := map[string]map[string]bool{}
	for _, a := range g.eAttrs {
		kind := "binding"
		switch l := a["label"]; {
		case l == "alternate":
			kind = "alternate"
		case strings.HasPrefix(l, "dead-letter"):
			kind = "dead-letter"
		case strings.HasPrefix(l, "after "):
			kind = "delay"
		}
		if styles[kind] == nil {
			styles[kind] = map[string]bool{}
		}
		styles[kind][a["style"]+"/"+a["color"]] = true
	}
	seen := map[string]string{}
	for kind, s := range styles {
		if len(s) != 1 {
			t.Errorf("%s edges are drawn in %d styles: %v", kind, len(s), s)
		}
		for st := range s {
			if other, ok := seen[st]; ok {
				t.Errorf("%s and %s edges share style %q", kind, other, st)
			}
			seen[st] = kind
		}
	}
	if len(styles) != 4 {
		t.Errorf("edge kinds found: %v, want binding, alternate, dead-letter, delay", styles)
	}
}

func TestEscaping(t *testing.T) {
	for _, tc := range []struct{ in, mermaid, dot string }{
		{`a "b"`, `a #quot;b#quot;`, `a \"b\"`},
		{`order.#`, `order.#35;`, `order.#`},
		{`<b>&amp;`, `#lt;b#gt;#amp;amp;`, `<b>&amp;amp;`},
		{"x|y`z", "x#124;y#96;z", "x|y`z"},
		{"50%% off", "50#37;#37; off", "50%% off"},
		{`back\slash \N`, `back\slash \N`, `back\\slash \\N`},
		{"new\nline", "new#10;line", `new\nline`},
		{"注文 ünï", "注文 ünï", "注文 ünï"},
		{"bad\xffutf8", "bad\uFFFDutf8", "bad\uFFFDutf8"},
	} {
		var m, d bytes.Buffer
		mw, dw := bufio.NewWriter(&m), bufio.NewWriter(&d)
		writeMermaidText(mw, tc.in)
		writeDOTText(dw, tc.in)
		mw.Flush()
		dw.Flush()
		if m.String() != tc.mermaid {
			t.Errorf("mermaid(%q) = %q, want %q", tc.in, m.String(), tc.mermaid)
		}
		if d.String() != tc.dot {
			t.Errorf("dot(%q) = %q, want %q", tc.in, d.String(), tc.dot)
		}
	}
}

func TestNodeIDs(t *testing.T) {
	a := newIDAllocator()
	got := []string{a.id("Q0", "a.b"), a.id("Q0", "a_b"), a.id("Q0", "a_b_2"), a.id("Q0", "注"), a.id("Q0", "end"), a.id("Q1", "a.b")}
	want := []string{"Q0_a_b", "Q0_a_b_2", "Q0_a_b_2_2", "Q0_u6ce8", "Q0_end", "Q1_a_b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IDs (-want +got):\n%s", diff)
	}
}

func TestMultiVhostClusters(t *testing.T) {
	out := render(t, smallTopology(), FormatMermaid)
	if n := strings.Count(out, "\nsubgraph "); n != 2 {
		t.Errorf("%d Mermaid subgraphs, want one per vhost (2)", n)
	}
	dot := render(t, smallTopology(), FormatDOT)
	if n := strings.Count(dot, "subgraph \"cluster_"); n != 2 {
		t.Errorf("%d DOT clusters, want one per vhost (2)", n)
	}
	if !strings.Contains(dot, `label="vhost weird \"vhost\""`) {
		t.Errorf("DOT cluster label for vhost `weird \"vhost\"` missing or badly escaped")
	}
}

func TestRenderErrors(t *testing.T) {
	var buf bytes.Buffer
	err := Render(&buf, smallTopology(), "png", rmqversion.Default)
	if err == nil || !strings.Contains(err.Error(), `"png"`) || !strings.Contains(err.Error(), "mermaid, dot") {
		t.Errorf("Render(png) error = %v, want one naming the format and the accepted ones", err)
	}
	if err := Render(&buf, nil, FormatDOT, rmqversion.Default); err == nil {
		t.Error("Render(nil topology) succeeded")
	}
	if err := Render(failWriter{}, smallTopology(), FormatMermaid, rmqversion.Default); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("write error not reported: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

func TestEmptyTopology(t *testing.T) {
	for _, format := range Formats() {
		out := render(t, topology.New(), format)
		if format == FormatMermaid {
			parseMermaid(t, out)
		} else {
			parseDOT(t, out)
			runGraphviz(t, out)
		}
	}
}

// --- size ---------------------------------------------------------------

// bigTopology has n/2 working queues, each with a topic binding, a DLX
// and its own DLQ bound behind it: n queues, n bindings.
func bigTopology(n int) *topology.Topology {
	t := topology.New()
	v := t.Vhost("bench")
	exchange(v, "events", "topic")
	exchange(v, "events.dlx", "direct")
	for i := 0; i < n/2; i++ {
		q := fmt.Sprintf("svc%03d.q%05d", i%100, i)
		queue(v, q, topology.Args{"x-dead-letter-exchange": "events.dlx", "x-dead-letter-routing-key": q, "x-max-length": 10000})
		queue(v, q+".dlq", nil, role(topology.RoleDeadLetter, q))
		bind(v, "events", q, fmt.Sprintf("svc%03d.event%d.#", i%100, i), nil)
		bind(v, "events.dlx", q+".dlq", q, nil)
	}
	return t
}

// TestLargeTopology renders 10,000 queues in both formats and checks the
// result is complete; speed is measured by BenchmarkGraph10k.
func TestLargeTopology(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	top := bigTopology(10_000)
	for _, format := range Formats() {
		var buf bytes.Buffer
		if err := Render(&buf, top, format, rmqversion.Default); err != nil {
			t.Fatal(err)
		}
		if format == FormatDOT {
			if g := parseDOT(t, buf.String()); len(g.edges) != 15_000 {
				t.Errorf("%d DOT edges, want 10,000 bindings + 5,000 dead-letter edges", len(g.edges))
			}
		}
	}
}

func BenchmarkGraph10k(b *testing.B) {
	top := bigTopology(10_000)
	for _, format := range Formats() {
		b.Run(format, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := Render(&buf, top, format, rmqversion.Default); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}

// An x-modulus-hash exchange delivers each message to one of its
// destinations: the diagram says so on the exchange and gives each edge its
// share of the bindings, never the keys (which do not matter to it).
func TestModulusHashIsDrawnAsOneOf(t *testing.T) {
	top := topology.New()
	v := top.Vhost("/")
	exchange(v, "work", "x-modulus-hash")
	exchange(v, "spill", "fanout")
	for _, q := range []string{"w1", "w2", "s1"} {
		queue(v, q, nil)
	}
	bind(v, "work", "w1", "a", nil)
	bind(v, "work", "w1", "b", nil) // bound twice: twice the share
	bind(v, "work", "w2", "a", nil)
	bindExchange(v, "work", "spill", "")
	bind(v, "spill", "s1", "", nil)
	out := render(t, top, FormatMermaid)
	edges, _ := mermaidEdges(t, out)
	want := map[string]string{
		"work -> w1":    "--> share 2/4",
		"work -> w2":    "--> share 1/4",
		"work -> spill": "--> share 1/4",
		"spill -> s1":   "--> ",
	}
	if diff := cmp.Diff(want, edges); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}
	if !strings.Contains(out, "x-modulus-hash, 1 of 3 (hash)") {
		t.Errorf("the exchange's label does not say it picks 1 of 3 destinations:\n%s", out)
	}
	t.Run("graphviz", func(t *testing.T) { runGraphviz(t, render(t, top, FormatDOT)) })
}

// An x-local-random exchange delivers each message to one of its classic
// queues at random: the diagram says so on the exchange.
func TestLocalRandomIsDrawnAsOneOf(t *testing.T) {
	top := topology.New()
	v := top.Vhost("/")
	exchange(v, "rpc", "x-local-random")
	for _, q := range []string{"r1", "r2"} {
		queue(v, q, nil)
		bind(v, "rpc", q, "", nil)
	}
	if out := render(t, top, FormatMermaid); !strings.Contains(out, "x-local-random, 1 of 2 (random, local)") {
		t.Errorf("the exchange's label does not say it picks 1 of 2 queues at random:\n%s", out)
	}
}

// A quorum queue with the broker's delayed retry (4.3) says how long its
// returned messages wait; before 4.3 the broker ignores the arguments and
// the diagram says nothing.
func TestDelayedRetryIsDrawn(t *testing.T) {
	top := topology.New()
	v := top.Vhost("/")
	queue(v, "work", topology.Args{"x-delayed-retry-type": "failed", "x-delayed-retry-min": 1000, "x-delayed-retry-max": 60000}, func(q *topology.Queue) { q.Type = topology.QueueQuorum })
	queue(v, "flat", topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": 500}, func(q *topology.Queue) { q.Type = topology.QueueQuorum })
	var buf bytes.Buffer
	if err := Render(&buf, top, FormatMermaid, rmqversion.MustParse("4.3")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"quorum, retry after 1s…1m", "quorum, retry after 500ms (all)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("4.3: the diagram does not say %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := Render(&buf, top, FormatMermaid, rmqversion.MustParse("4.0")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "retry after") {
		t.Errorf("4.0 has no delayed retry, but the diagram draws one:\n%s", buf.String())
	}
}
