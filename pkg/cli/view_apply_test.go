package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/planjson"
)

// A partial apply in the stream: the failed step with the broker's
// reason, the steps not started, and the same error as the text view
// (which the command returns, exit 1), then the error line.
func TestApplyJSONPartial(t *testing.T) {
	p := &plan.Plan{Changes: []plan.Change{
		{Action: plan.Create, Kind: plan.KindQueue, Vhost: "v", Name: "a"},
		{Action: plan.Create, Kind: plan.KindQueue, Vhost: "v", Name: "b"},
		{Action: plan.Create, Kind: plan.KindQueue, Vhost: "v", Name: "c"},
	}}
	step := func(i int) apply.Step {
		c := &p.Changes[i]
		return apply.Step{Vhost: c.Vhost, Name: c.Name, Change: c}
	}
	refused := errors.New(`PRECONDITION_FAILED - invalid arg 'x-max-length' for queue 'b'`)
	res := &apply.Result{Done: []apply.Step{step(0)}, Failed: []apply.Failure{{Step: step(1), Err: refused}}, Remaining: []apply.Step{step(2)}}

	var out bytes.Buffer
	v := newApplyJSON(&out)
	v.Step(apply.Event{Step: step(0), Duration: 12 * time.Millisecond})
	v.Step(apply.Event{Step: step(1), Err: refused, Duration: 3 * time.Millisecond})
	err := v.Report(p, res)
	var text bytes.Buffer
	want := report(&text, p, res)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("Report: %v, want the text view's error %v", err, want)
	}
	v.Error(err)

	var ms []planjson.Message
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m planjson.Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		ms = append(ms, m)
	}
	if len(ms) != 4 || ms[0].Type != "step" || ms[1].Type != "step" || ms[2].Type != "summary" || ms[3].Type != "error" {
		t.Fatalf("stream:\n%s", out.String())
	}
	if s := ms[1].Step; s.Outcome != "failed" || s.Name != "b" || s.Kind != "queue" || s.Action != "create" || !strings.Contains(s.Error, "invalid arg 'x-max-length'") || s.DurationMS != 3 {
		t.Errorf("the failed step: %+v", s)
	}
	if s := ms[0].Step; s.Outcome != "done" || s.Error != "" || s.DurationMS != 12 {
		t.Errorf("the done step: %+v", s)
	}
	sum := ms[2].Summary
	if sum.Complete || sum.Create != 3 || sum.Done != 1 || len(sum.Failed) != 1 || sum.Failed[0].Name != "b" || len(sum.Remaining) != 1 || !strings.Contains(sum.Remaining[0], `"c"`) {
		t.Errorf("summary: %+v", sum)
	}
	if ms[3].Message != want.Error() {
		t.Errorf("error line %q, want %q", ms[3].Message, want.Error())
	}
}
