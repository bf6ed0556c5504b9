package topotest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// WriteText prints one line per test, `PASS name`, or `FAIL name: why
// (hops: …)` (`UNKNOWN` where the simulator cannot tell) with the test's
// place in the file, then `N passed, N failed[, N unknown offline][, N
// unknown (a random pick …)]`.
func WriteText(w io.Writer, r *Report) error {
	var sb strings.Builder
	for _, o := range r.Tests {
		if o.Passed {
			fmt.Fprintf(&sb, "PASS %s\n", o.Name)
			continue
		}
		verdict := "FAIL"
		if o.Unknown {
			verdict = "UNKNOWN"
		}
		fmt.Fprintf(&sb, "%s %s: %s", verdict, o.Name, o.Message)
		if len(o.Hops) > 0 {
			fmt.Fprintf(&sb, " (hops: %s)", strings.Join(o.Hops, "; "))
		}
		sb.WriteString("\n")
		if p := o.Pos.String(); p != "" {
			fmt.Fprintf(&sb, "    at %s\n", p)
		}
	}
	fmt.Fprintf(&sb, "%d passed, %d failed", r.Passed, r.Failed)
	random := 0
	for _, o := range r.Tests {
		if o.Unknown && o.Random {
			random++
		}
	}
	if n := r.Unknown - random; n > 0 {
		fmt.Fprintf(&sb, ", %d unknown offline (run with --live)", n)
	}
	if random > 0 {
		fmt.Fprintf(&sb, ", %d unknown (a random pick: no run can tell)", random)
	}
	if n := len(r.NotRun); n > 0 {
		fmt.Fprintf(&sb, ", %d not run", n)
	}
	sb.WriteString("\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

// WriteJSON prints the report as indented JSON: the versioned report of
// "mqctl test -o json" (format_version), in this file's own types, so
// that a field renamed in the model (Report, Outcome, topology.Pos) does
// not change what CI reads.
func WriteJSON(w io.Writer, r *Report) error {
	out := jsonReport{
		FormatVersion: r.FormatVersion, Live: r.Live, Passed: r.Passed, Failed: r.Failed,
		Unknown: r.Unknown, NotRun: r.NotRun,
	}
	if r.Tests != nil {
		out.Tests = make([]jsonOutcome, len(r.Tests))
		for i, o := range r.Tests {
			out.Tests[i] = jsonOutcome{
				Name: o.Name, Vhost: o.Vhost, Pos: jsonPos{File: o.Pos.File, Line: o.Pos.Line, Column: o.Pos.Col},
				Passed: o.Passed, Unknown: o.Unknown, Random: o.Random, Expected: o.Expected, Got: o.Got,
				Message: o.Message, Hops: o.Hops,
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// The report of "mqctl test -o json". Its fields keep the names and
// meanings Report's own JSON gave them (additive changes only, else a new
// FormatVersion); TestJSONEveryField pins them.
type jsonReport struct {
	FormatVersion string        `json:"format_version"`
	Live          bool          `json:"live"`
	Tests         []jsonOutcome `json:"tests"`
	Passed        int           `json:"passed"`
	Failed        int           `json:"failed"`
	Unknown       int           `json:"unknown"`
	NotRun        []string      `json:"not_run,omitempty"`
}

type jsonOutcome struct {
	Name     string   `json:"name"`
	Vhost    string   `json:"vhost"`
	Pos      jsonPos  `json:"pos"`
	Passed   bool     `json:"passed"`
	Unknown  bool     `json:"unknown,omitempty"`
	Random   bool     `json:"random,omitempty"`
	Expected []string `json:"expected"`
	Got      []string `json:"got"`
	Message  string   `json:"message,omitempty"`
	Hops     []string `json:"hops,omitempty"`
}

type jsonPos struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// Hidden are the values of t from the environment (${VAR}) that the
// output of mqctl test must not show, since any may be a secret (a header,
// a routing key, a binding's arguments): t.Env, which leaves out the names
// of the objects the file declares (the report names them anyway,
// expected and got, as the file's keys do), but the names of the
// broker's own exchanges (amq.*).
func Hidden(t *topology.Topology) topology.EnvValues {
	var out topology.EnvValues
	for _, e := range t.Env {
		if !strings.HasPrefix(e.Value, "amq.") {
			out = append(out, e)
		}
	}
	return out
}

// Hide replaces in r the values of vs (Hidden) that its names, messages
// and hops show with what the file wrote (topology.EnvValues.Written).
func (r *Report) Hide(vs topology.EnvValues) {
	if len(vs) == 0 {
		return
	}
	for i := range r.Tests {
		o := &r.Tests[i]
		o.Name, o.Message = vs.Written(o.Name), vs.Written(o.Message)
		for j, h := range o.Hops {
			o.Hops[j] = vs.Written(h)
		}
	}
	for i, n := range r.NotRun {
		r.NotRun[i] = vs.Written(n)
	}
}
