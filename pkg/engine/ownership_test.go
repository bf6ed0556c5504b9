package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// record reads the test vhost's ownership record from the broker.
func (f *fixture) record() *ownership.Record {
	f.t.Helper()
	state, _, err := f.c.ReadTopology(context.Background(), []string{f.vhost})
	if err != nil {
		f.t.Fatal(err)
	}
	recs, err := ownership.Extract(state)
	if err != nil {
		f.t.Fatal(err)
	}
	return recs[f.vhost]
}

// toOldRecord replaces the vhost's record with one in format f (1 or 2)
// listing the same objects, as an mqctl from before format 3 left it (no
// prints): the next generation is declared, then the current one deleted.
func (f *fixture) toOldRecord(format int64) *ownership.Record {
	f.t.Helper()
	ctx := context.Background()
	rec := f.record()
	old := ownership.PlainExchange(f.vhost, rec.Generation+1, rec.Managed)
	if format == ownership.FormatCompressed {
		old = ownership.CompressedExchange(f.vhost, rec.Generation+1, rec.Managed)
	}
	if err := f.c.DeclareExchange(ctx, f.vhost, old); err != nil {
		f.t.Fatal(err)
	}
	for _, e := range rec.Exchanges {
		if err := f.c.DeleteExchange(ctx, f.vhost, e, broker.DeleteExchangeOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
	got := f.record()
	if got.Format != format || len(got.Managed) != len(rec.Managed) {
		f.t.Fatalf("the format %d record reads back as format %d, %d objects (want %d)", format, got.Format, len(got.Managed), len(rec.Managed))
	}
	for ref, p := range got.Managed {
		if _, ok := rec.Managed[ref]; !ok || p != plan.NoPrint {
			f.t.Fatalf("the format %d record lists %v with print %d: want the same objects, none with a print", format, ref, p)
		}
	}
	return got
}

// definitions is GET /api/definitions/{vhost}: its size, and the size of
// the record exchange within it.
func (f *fixture) definitions() (total, record int) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.b.URL+"/api/definitions/"+url.PathEscape(f.vhost), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.SetBasicAuth(f.b.Username, f.b.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		f.t.Fatalf("GET definitions: %s %v", resp.Status, err)
	}
	var defs struct {
		Exchanges []json.RawMessage `json:"exchanges"`
	}
	if err := json.Unmarshal(data, &defs); err != nil {
		f.t.Fatal(err)
	}
	for _, e := range defs.Exchanges {
		var x struct{ Name string }
		if json.Unmarshal(e, &x) == nil && ownership.IsRecord(x.Name) {
			record += len(e)
		}
	}
	return len(data), record
}

// An old record (format 1 or 2, written by an mqctl that kept no prints)
// is read: a plan deletes none of its objects that the file dropped
// (mqctl cannot tell whether they are still the ones it wrote) and names
// them; the next apply, even one with nothing else to do, rewrites it in
// format 3 with the print of every object the file names, and forgets the
// rest. The record of format 3 is at most 10% of the vhost's definitions
// at 1,002 objects.
func TestOldRecordIsReadAndMigrated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const n = 250 // 1,002 objects
	desired := func(src string) *topology.Topology { return f.desired(strings.ReplaceAll(src, f.vhost, "${VHOST}")) }
	full := gentopo.YAML(f.vhost, n)
	// The file without its first working queue (and so its DLQ and bindings).
	cut := strings.Replace(full, "      svc000.q00000:\n        bindings: [{ exchange: events, routing_key: \"svc000.event0.#\" }]\n        dead_letter: { exchange: events.dlx, queue: svc000.q00000.dlq }\n        limits: { max_length: 10000, overflow: reject-publish }\n", "", 1)
	if cut == full {
		t.Fatal("the generated file changed: the test no longer drops a queue")
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired(full)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := f.record()
	if rec.Format != ownership.FormatPrinted || len(rec.Managed) != gentopo.Objects(n) {
		t.Fatalf("record: format %d, %d objects, want format 3 and %d", rec.Format, len(rec.Managed), gentopo.Objects(n))
	}
	for ref, p := range rec.Managed {
		if p == plan.NoPrint {
			t.Errorf("%v is recorded without a print", ref)
		}
	}
	total, size := f.definitions()
	t.Logf("%d objects: definitions %d bytes, record %d bytes (%.1f%%)", gentopo.Objects(n), total, size, 100*float64(size)/float64(total))
	if float64(size) > 0.10*float64(total) {
		t.Errorf("the record is %d of the definitions' %d bytes: want at most 10%%", size, total)
	}
	dropped := []string{"delete queue svc000.q00000", "delete queue svc000.q00000.dlq",
		"delete binding events -> queue svc000.q00000 [svc000.event0.#]", "delete binding events.dlx -> queue svc000.q00000.dlq [svc000.q00000]"}
	if got := changes(f.plan(desired(cut))); !cmp.Equal(got, dropped) {
		t.Fatalf("plan of the cut file with the record of format 3: %v, want %v", got, dropped)
	}

	for _, format := range []int64{ownership.FormatPlain, ownership.FormatCompressed} {
		old := f.toOldRecord(format)
		total, size = f.definitions()
		t.Logf("format %d: definitions %d bytes, record %d bytes (%.1f%%)", format, total, size, 100*float64(size)/float64(total))
		p := f.plan(desired(cut))
		if got := changes(p); len(got) != 0 {
			t.Errorf("format %d: the plan of the cut file deletes what an older mqctl recorded without a print: %v", format, got)
		}
		var outside []string
		for _, o := range p.ChangedOutside {
			outside = append(outside, string(o.Kind)+" "+o.Name)
			if o.Deleted || !strings.Contains(o.Reason, "older mqctl recorded this") {
				t.Errorf("format %d: %v", format, o)
			}
		}
		if want := []string{"binding events -> queue svc000.q00000 [svc000.event0.#]", "binding events.dlx -> queue svc000.q00000.dlq [svc000.q00000]",
			"queue svc000.q00000", "queue svc000.q00000.dlq"}; !cmp.Equal(outside, want) {
			t.Errorf("format %d: changed outside %v, want %v", format, outside, want)
		}
		if p := f.plan(desired(full)); !p.Empty() || len(p.Adopt) != 0 || len(p.Prints) != gentopo.Objects(n) || !cmp.Equal(causes(p), []string{plan.RecordPrints, plan.RecordFormat}) {
			t.Errorf("format %d: plan of the applied file: %v, adopt %v, %d prints to record (want %d), record changes %v", format, changes(p), p.Adopt, len(p.Prints), gentopo.Objects(n), causes(p))
		}

		// An apply with nothing to do rewrites it, listing the same objects
		// with their prints, without a step, a question or a note.
		out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired(full)}, engine.ApplyOptions{
			Confirm: func(*plan.Plan) error { t.Error("an apply with nothing to do asked"); return nil },
		})
		if notes := f.ownNotes(); err != nil || out.Result != nil || len(notes) != 0 {
			t.Fatalf("format %d: no-op apply: result %+v, err %v, notes %q", format, out, err, notes)
		}
		rec = f.record()
		if rec.Format != ownership.FormatPrinted || rec.Generation != old.Generation+1 || len(rec.Exchanges) != 1 || len(rec.Managed) != len(old.Managed) {
			t.Errorf("format %d: after a no-op apply: format %d, generation %d (old %d), exchanges %v, %d objects (old %d)",
				format, rec.Format, rec.Generation, old.Generation, rec.Exchanges, len(rec.Managed), len(old.Managed))
		}
		if got := changes(f.plan(desired(cut))); !cmp.Equal(got, dropped) {
			t.Errorf("format %d: plan of the cut file once the record has its prints: %v, want %v", format, got, dropped)
		}
	}
	// An apply with nothing to do on a current record writes nothing.
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired(full)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if again := f.record(); again.Generation != rec.Generation {
		t.Errorf("a no-op apply on a current record wrote generation %d", again.Generation)
	}

	// An apply of the cut file over an old record deletes nothing and
	// forgets the objects it cannot prove its own: they are unmanaged now.
	old := f.toOldRecord(ownership.FormatPlain)
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired(cut)}, engine.ApplyOptions{})
	if err != nil || out.Result != nil {
		t.Fatalf("apply of the cut file: %+v, %v", out, err)
	}
	rec = f.record()
	if rec.Format != ownership.FormatPrinted || len(rec.Exchanges) != 1 || len(rec.Managed) != len(old.Managed)-4 {
		t.Errorf("after the apply: format %d, exchanges %v, %d objects (old %d)", rec.Format, rec.Exchanges, len(rec.Managed), len(old.Managed))
	}
	if p := f.plan(desired(cut)); !p.Empty() || len(p.Adopt) != 0 || len(p.Unmanaged) != 4 || p.Records() {
		t.Errorf("plan after the migrating apply: %v, adopt %v, unmanaged %v, record %v %v %v", changes(p), p.Adopt, p.Unmanaged, p.Prints, p.Stale, p.ChangedOutside)
	}
}

// causes are the causes of p's record changes.
func causes(p *plan.Plan) []string {
	var out []string
	for _, r := range p.RecordChanges() {
		out = append(out, r.Cause)
	}
	return out
}

// A record in an older format changes no object, but apply rewrites it
// (with the print of every object the file names): the plan says so, in
// its text and JSON, and is not empty for --detailed-exitcode; once
// apply rewrote it, the next plan is empty.
func TestOldRecordPlanSaysApplyRewritesIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	desired := f.desired(twoQueues)
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := f.plan(desired); !p.Empty() || p.Records() {
		t.Fatalf("plan after apply: %v, record changes %v", changes(p), causes(p))
	}
	f.toOldRecord(ownership.FormatPlain)
	p := f.plan(desired)
	if got, want := causes(p), []string{plan.RecordPrints, plan.RecordFormat}; !p.Empty() || !cmp.Equal(got, want) || !cmp.Equal(p.OutdatedRecords, []string{f.vhost}) {
		t.Fatalf("plan over a format 1 record: %v, record changes %v (want %v), outdated %v", changes(p), got, want, p.OutdatedRecords)
	}
	var text, js strings.Builder
	if err := plan.WriteText(&text, p, plan.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := plan.WriteJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Only mqctl's ownership record changes", `mqctl's ownership record of vhost "` + f.vhost + `" is in an older format: apply rewrites it`} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text plan does not say %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "No changes") {
		t.Errorf("the text plan says there is nothing to do:\n%s", text.String())
	}
	if !strings.Contains(js.String(), `"cause": "format"`) {
		t.Errorf("the JSON plan does not say the record is rewritten:\n%s", js.String())
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := f.plan(desired); !p.Empty() || p.Records() {
		t.Errorf("plan after the rewriting apply: %v, record changes %v", changes(p), causes(p))
	}
}
