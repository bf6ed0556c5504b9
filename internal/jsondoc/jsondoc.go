// Package jsondoc serves the tests of mqctl's JSON documents: it reads
// the pages that document them (docs/*-json.md) for the tests that check
// a page against the types it documents (a section's table rows, a type's
// JSON field names), and fills a value's every field (Fill) for the
// tests that pin a document's every field.
package jsondoc

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Fields are the JSON names of struct type t's fields, those of embedded
// structs included, sorted.
func Fields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, Fields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

var heading = regexp.MustCompile(`(?m)^#+ `)

// Section is text's part from the line heading (a whole line, "## …") to
// the next heading.
func Section(text, head string) (string, error) {
	i := strings.Index(text, "\n"+head+"\n")
	if i < 0 {
		return "", fmt.Errorf("no heading %q", head)
	}
	rest := text[i+len(head)+2:]
	if h := heading.FindStringIndex(rest); h != nil {
		return rest[:h[0]], nil
	}
	return rest, nil
}

var backticked = regexp.MustCompile("`([a-z_-]+)`")

// Rows are a Markdown table's rows in text: the first cell's name
// (between backticks) and the rest of the row.
func Rows(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.SplitN(strings.Trim(line, "|"), "|", 2)
		m := backticked.FindStringSubmatch(cells[0])
		if m == nil {
			continue
		}
		out[m[1]] = ""
		if len(cells) > 1 {
			out[m[1]] = cells[1]
		}
	}
	return out
}

// Fill sets every exported field of the value ptr points to: a string
// to the field's name, a number to 1, a time to 2026-01-02T03:04:05Z, a
// bool to true, a pointer to a filled value, a slice to one filled
// element, a map with string keys to {"k": "v"} (or "k" to a filled
// value); slices and maps within them to depth levels (a trace nests hops
// in hops).
func Fill(ptr any, depth int) {
	fill(reflect.ValueOf(ptr).Elem(), "", depth)
}

// filledTime is what Fill sets a time.Time to.
var filledTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fill(v reflect.Value, name string, depth int) {
	if v.Type() == reflect.TypeOf(filledTime) {
		v.Set(reflect.ValueOf(filledTime))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint8:
		v.SetUint(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), name, depth)
	case reflect.Slice:
		if depth == 0 {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), name, depth-1)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		e := reflect.New(v.Type().Elem()).Elem()
		switch {
		case e.Kind() == reflect.Interface:
			e.Set(reflect.ValueOf("v"))
		case depth == 0:
			return
		default:
			fill(e, "v", depth-1)
		}
		v.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), e)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fill(v.Field(i), f.Name, depth)
			}
		}
	}
}
