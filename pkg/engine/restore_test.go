package engine_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/brokerstate"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/engine"
)

const restoreBefore = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      x1: { type: direct }
      x2: { type: direct }
`

// An apply interrupted (Ctrl-C) during a replace finishes the replace under
// way and puts back its bindings, those of another team's queue included
// (TestInterruptFinishesReplacesUnderWay); the restore list it wrote
// before its first change, every binding of which is then back, is
// deleted although the apply did not finish (the next replace is not
// begun). Otherwise each interrupted apply left one behind, until the
// next complete apply.
func TestInterruptedApplyLeavesNoRestoreList(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(restoreBefore)}, engine.ApplyOptions{NoPreflight: true}); err != nil {
		t.Fatal(err)
	}
	vh := url.PathEscape(f.vhost)
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPut, "queues/" + vh + "/theirs", `{"durable": true}`},
		{http.MethodPost, "bindings/" + vh + "/e/x1/q/theirs", `{"routing_key": "t"}`},
		{http.MethodPost, "bindings/" + vh + "/e/x2/q/theirs", `{"routing_key": "t"}`},
	} {
		if status, answer, err := f.b.API(r.method, r.path, []byte(r.body)); err != nil || status/100 != 2 {
			t.Fatalf("%s %s: %d %v %s", r.method, r.path, status, err, answer)
		}
	}
	after := strings.ReplaceAll(restoreBefore, "direct", "topic")
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(after)}, engine.ApplyOptions{
		NoPreflight: true, AllowReplace: true, Parallelism: 1,
		Progress: func(ev apply.Event) {
			if ev.Step.Delete {
				cancel() // Ctrl-C after the first delete
			}
		},
	})
	if err == nil || out == nil || out.Result == nil || !out.Result.Interrupted {
		t.Fatalf("apply: %v; want it interrupted", err)
	}
	v, rec, err := brokerstate.Read(context.Background(), f.c, f.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || len(rec.RestoreLists) > 0 {
		t.Errorf("restore lists left: %+v", rec)
	}
	var bound []string
	v.SortBindings()
	for _, b := range v.Bindings {
		if b.Destination == "theirs" && b.Source != "" {
			bound = append(bound, b.Source)
		}
	}
	if strings.Join(bound, ",") != "x1,x2" {
		t.Errorf("queue theirs is bound from %q, want x1 and x2", bound)
	}
}
