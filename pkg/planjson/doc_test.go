package planjson_test

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/jsondoc"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/planjson"
)

// The page that documents the JSON plan, field by field.
const page = "../../docs/plan-json.md"

// fields, section and rows are internal/jsondoc's, shared with the other
// JSON documents' page tests.
var (
	fields = jsondoc.Fields
	rows   = jsondoc.Rows
)

var (
	backticked = regexp.MustCompile("`([a-z_-]+)`")
	quoted     = regexp.MustCompile(`"([a-z_-]+)"`)
	parens     = regexp.MustCompile(`\([^()]*\)`)
)

// section is the page's text from the heading to the next heading.
func section(t *testing.T, text, heading string) string {
	t.Helper()
	s, err := jsondoc.Section(text, heading)
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	return s
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// names are the names a piece of prose lists, between backticks (or, with
// quotes, as "name"), leaving out what parentheses say about them.
func names(s string, quotes bool) []string {
	s = parens.ReplaceAllString(parens.ReplaceAllString(s, ""), "")
	re := backticked
	if quotes {
		re = quoted
	}
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

// after is the text that follows marker in s, up to the end of its
// sentence (a period followed by a space or a line end, or a table cell's
// end).
func after(t *testing.T, s, marker string) string {
	t.Helper()
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%s does not say %q", page, marker)
	}
	rest := s[i+len(marker):]
	if end := regexp.MustCompile(`\.(\s|$)|\|`).FindStringIndex(rest); end != nil {
		rest = rest[:end[0]]
	}
	return rest
}

// firstBraces is the {…} that follows marker in s: the fields a sentence
// lists.
func firstBraces(t *testing.T, s, marker string) string {
	t.Helper()
	rest := after(t, s, marker)
	if i, j := strings.Index(rest, "{"), strings.Index(rest, "}"); i >= 0 && j > i {
		return rest[i : j+1]
	}
	t.Fatalf("%s: %q is not followed by {fields}", page, marker)
	return ""
}

func check(t *testing.T, what string, documented []string, typ any) {
	t.Helper()
	want := fields(reflect.TypeOf(typ))
	documented = slices.Sorted(slices.Values(documented))
	if !slices.Equal(documented, want) {
		t.Errorf("%s: %s documents %q, the type %T has %q", what, page, documented, typ, want)
	}
}

// TestPageMatchesTypes: docs/plan-json.md documents exactly the fields of
// the document's types, each type where the page describes it; a field
// added to a type without a line on the page (or the other way round)
// fails here. The page names every kind of object a change can be about.
func TestPageMatchesTypes(t *testing.T) {
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	doc := rows(section(t, text, "## The document"))
	check(t, "the document", keys(doc), planjson.Plan{})
	check(t, "an object ref", names(after(t, text, "An object ref is "), true), planjson.Ref{})
	check(t, "an unread kind", names(after(t, doc["unread"], "each is "), true), planjson.Unread{})
	check(t, "a changed object", append(names(after(t, doc["changed_outside"], "each is an object ref with "), true), fields(reflect.TypeOf(planjson.Ref{}))...), planjson.Outside{})
	check(t, "an object of other owners", append(names(after(t, doc["other_owners"], "each is an object ref with "), true), fields(reflect.TypeOf(planjson.Ref{}))...), planjson.OtherOwned{})
	check(t, "a held change", append(names(after(t, doc["held"], "Each is an object ref with "), true), fields(reflect.TypeOf(planjson.Ref{}))...), planjson.Held{})
	check(t, "a plan's refusal", names(after(t, doc["refusals"], "each is "), true), planjson.Refused{})
	check(t, "a record change", names(after(t, doc["records"], "each is "), true), planjson.RecordChange{})
	check(t, "the summary", names(doc["summary"], false), planjson.Summary{})
	check(t, "the preflight", names(doc["preflight"], false), planjson.Preflight{})
	check(t, "a refusal", names(after(t, doc["preflight"], "one per cause: "), true), planjson.Refusal{})

	change := rows(section(t, text, "## A change"))
	check(t, "a change", keys(change), planjson.Change{})
	check(t, "a successor", names(after(t, change["successor"], "it is "), true), planjson.Successor{})
	check(t, "a field change", names(after(t, text, "A field change is "), true), planjson.Field{})
	check(t, "a position", names(after(t, text, "A position is "), true), planjson.Position{})

	objects := rows(section(t, text, "### Objects in `before` and `after`"))
	check(t, "an object", keys(objects), planjson.Object{})
	for key, typ := range map[string]any{
		"vhost": planjson.Vhost{}, "exchange": planjson.Exchange{}, "queue": planjson.Queue{},
		"binding": planjson.Binding{}, "policy": planjson.Policy{}, "item": planjson.Item{},
	} {
		row, ok := objects[key]
		if !ok {
			t.Errorf("%s: no row for objects of key %q", page, key)
			continue
		}
		fieldsCell := row[strings.LastIndex(row, "|")+1:]
		check(t, "the "+key+" object", names(fieldsCell, false), typ)
	}

	flows := section(t, text, "## Message flows")
	check(t, "the flows", keys(rows(flows)), planjson.Flows{})
	check(t, "an unknown vhost", names(rows(flows)["unknown"], true), planjson.FlowUnknown{})
	check(t, "an unlisted count", names(rows(flows)["unlisted"], true), planjson.FlowUnlisted{})
	for _, c := range []struct {
		marker string
		typ    any
	}{
		{"A route is ", planjson.FlowRoute{}}, {"A class is ", planjson.FlowClass{}},
		{"A dead-letter change is ", planjson.FlowDead{}}, {"A delay tier is ", planjson.FlowTier{}},
		{"An end is ", planjson.FlowEnd{}}, {"A silenced queue is ", planjson.FlowQueue{}}, {"A split is ", planjson.FlowSplit{}},
		{"A class side is ", planjson.FlowClassSide{}}, {"An expiring queue is ", planjson.FlowExpiring{}},
		{"A refusing queue is ", planjson.FlowRefusing{}}, {"A link is ", planjson.FlowLink{}},
		{"A trimmed stream is ", planjson.FlowTrimming{}},
	} {
		check(t, strings.ToLower(strings.TrimSuffix(c.marker, " is ")), names(firstBraces(t, flows, c.marker), true), c.typ)
	}

	for _, s := range kind.All() {
		if !slices.Contains(names(change["kind"], false), string(s.Kind)) {
			t.Errorf("%s: a change's kind does not list %q", page, s.Kind)
		}
	}
}

// TestApplyPageMatchesTypes: docs/apply-json.md documents exactly the
// fields of the apply stream's types.
func TestApplyPageMatchesTypes(t *testing.T) {
	data, err := os.ReadFile("../../docs/apply-json.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	check(t, "a line", keys(rows(section(t, text, "## A line"))), planjson.Message{})
	check(t, "a step", keys(rows(section(t, text, "## A step"))), planjson.Step{})
	check(t, "the summary", keys(rows(section(t, text, "## The summary"))), planjson.ApplySummary{})
	for _, typ := range []string{planjson.TypePlan, planjson.TypeNote, planjson.TypeStep, planjson.TypeSummary, planjson.TypeError} {
		if !strings.Contains(rows(section(t, text, "## A line"))["type"], "`"+typ+"`") {
			t.Errorf("docs/apply-json.md: a line's type does not list %q", typ)
		}
	}
}
