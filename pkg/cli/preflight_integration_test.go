package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
)

const preflightRefused = `version: 1
vhosts:
  ${VHOST}:
    queues:
      plain: {}
      events:
        type: stream
        arguments: { x-max-age: 0D }
`

// plan --preflight asks the broker what apply would: it shows the plan
// with the broker's answer, exits 1 naming each refused object where the
// file declares it (text and JSON alike), and changes nothing; a file the
// broker takes exits 0 and says so.
func TestPlanPreflight(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.write("topology.yaml", preflightRefused)
	r := h.run("plan", "-f", f, "--preflight")
	if r.code != 1 || !strings.Contains(r.stdout, "Preflight: the broker refuses 1 object of the plan") ||
		!strings.Contains(r.stdout, `topology.yaml:6:7: queue "events" in vhost "`+h.vhost+`": invalid arg 'x-max-age' for queue 'events'`) ||
		!strings.Contains(r.stderr, "(listed above)") {
		t.Fatalf("plan --preflight of a file the broker refuses:\n%s", r)
	}
	r = h.run("plan", "-f", f, "--preflight", "-o", "json")
	var doc struct {
		Preflight struct {
			Tried    int `json:"tried"`
			Refusals []struct {
				Kind    string `json:"kind"`
				Reason  string `json:"reason"`
				Objects []struct {
					Name string `json:"name"`
					Pos  struct {
						Line, Column int
					} `json:"pos"`
				} `json:"objects"`
			} `json:"refusals"`
		} `json:"preflight"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 {
		t.Fatalf("plan --preflight -o json: %v\n%s", err, r)
	}
	pf := doc.Preflight
	if pf.Tried != 2 || len(pf.Refusals) != 1 || pf.Refusals[0].Kind != "queue" || len(pf.Refusals[0].Objects) != 1 ||
		pf.Refusals[0].Objects[0].Name != "events" || pf.Refusals[0].Objects[0].Pos.Line != 6 || !strings.Contains(pf.Refusals[0].Reason, "invalid_max_age") {
		t.Errorf("the JSON plan's preflight: %+v\n%s", pf, r.stdout)
	}
	if r := h.run("plan", "-f", f); r.code != 0 || strings.Contains(r.stdout, "Preflight:") {
		t.Errorf("plan without --preflight asks the broker nothing:\n%s", r)
	}
	fixed := h.write("fixed.yaml", strings.Replace(preflightRefused, "0D", "7D", 1))
	if r := h.run("plan", "-f", fixed, "--preflight"); r.code != 0 || !strings.Contains(r.stdout, "Preflight: the broker takes every shape the plan writes (2 shapes for 2 objects") {
		t.Errorf("plan --preflight of a file the broker takes:\n%s", r)
	}
	if v, rec := h.state(); len(v.Queues) != 0 || (rec != nil && len(rec.Managed) != 0) {
		t.Errorf("plan --preflight changed the vhost: queues %v, record %v", v.Queues, rec)
	}
}
