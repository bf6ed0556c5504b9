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

// WriteJSON prints the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
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
