package export

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// flowWidth is the widest line a flow-style mapping or sequence may take.
const flowWidth = 100

// escapeDollar protects a literal "$" from the loader's ${VAR}
// interpolation: "$" before "{" or "$" is written "$$"; any other "$" is
// read back as itself.
func escapeDollar(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		sb.WriteByte(s[i])
		if s[i] == '$' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '$') {
			sb.WriteByte('$')
		}
	}
	return sb.String()
}

// str is a string scalar; the encoder quotes it when it would otherwise read
// back as something else (a number, a bool, null, …).
func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: escapeDollar(s)}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off":
		// Booleans in YAML 1.1: quoted so that no reader takes them for one.
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func intNode(i int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(i, 10)}
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

func sequence() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"} }

// add appends key: value to mapping m.
func add(m *yaml.Node, key string, value *yaml.Node) {
	m.Content = append(m.Content, str(key), value)
}

// valueNode renders a normalised argument value.
func valueNode(v any) *yaml.Node {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return boolNode(x)
	case int64:
		return intNode(x)
	case int:
		return intNode(int64(x))
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: s}
	case string:
		return str(x)
	case []any:
		seq := sequence()
		for _, e := range x {
			seq.Content = append(seq.Content, valueNode(e))
		}
		return seq
	case map[string]any:
		m := mapping()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(m, k, valueNode(x[k]))
		}
		return m
	default:
		return str(fmt.Sprint(x))
	}
}

// flowify renders small collections on one line ({type: topic},
// [a, b]): a mapping whose members are scalars or flow collections of
// scalars, or a sequence of scalars, that fits in flowWidth columns from indent.
// It returns the estimated width of n on one line and how deeply it nests,
// or width -1 when n stays in block style.
func flowify(n *yaml.Node, indent int) (width, depth int) {
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.ContainsAny(n.Value, "\n\r\t") {
			return -1, 0
		}
		w := utf8.RuneCountInString(n.Value)
		if n.Tag == "!!str" && needsQuotes(n.Value) {
			w += 2 + strings.Count(n.Value, `"`) + strings.Count(n.Value, `\`)
		}
		return w, 0
	case yaml.MappingNode, yaml.SequenceNode:
		width = 2
		ok := true
		for i, c := range n.Content {
			w, d := flowify(c, indent+2)
			if w < 0 || d > 1 || (n.Kind == yaml.SequenceNode && d > 0) {
				ok = false
				continue
			}
			depth = max(depth, d+1)
			width += w + 2
			if n.Kind == yaml.MappingNode && i%2 == 1 {
				width-- // "k: v" instead of "k, v"
			}
		}
		if !ok || indent+width > flowWidth {
			return -1, 0
		}
		n.Style = yaml.FlowStyle
		return width, max(depth, 1)
	}
	return -1, 0
}

// needsQuotes is a conservative guess at whether the encoder quotes s.
func needsQuotes(s string) bool {
	if s == "" {
		return true
	}
	return strings.ContainsAny(s, ":#{}[],&*!|>'\"%@` ") || s != strings.TrimSpace(s)
}
