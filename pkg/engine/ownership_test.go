package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
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

// toPlainRecord replaces the vhost's record with one in format 1 listing
// the same objects, as an mqctl from before format 2 left it: the next
// generation is declared, then the current one deleted.
func (f *fixture) toPlainRecord() *ownership.Record {
	f.t.Helper()
	ctx := context.Background()
	rec := f.record()
	old := ownership.PlainExchange(f.vhost, rec.Generation+1, rec.Managed)
	if err := f.c.DeclareExchange(ctx, f.vhost, old); err != nil {
		f.t.Fatal(err)
	}
	for _, e := range rec.Exchanges {
		if err := f.c.DeleteExchange(ctx, f.vhost, e, broker.DeleteExchangeOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
	got := f.record()
	if got.Format != ownership.FormatPlain || !cmp.Equal(got.Managed, rec.Managed) {
		f.t.Fatalf("the format 1 record reads back as format %d, %d objects (want %d)", got.Format, len(got.Managed), len(rec.Managed))
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

// TestOldRecordIsReadAndMigrated: a record in format 1 on the broker is
// read as before (the plan is the same as with the compressed one, and
// deletes what the file dropped), rewritten in format 2 by the next apply
// even when it has nothing else to do, and by one that changes objects;
// the compressed record is at most 10% of the vhost's definitions at 1,002
// objects.
func TestOldRecordIsReadAndMigrated(t *testing.T) {
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
	if rec.Format != ownership.FormatCompressed || len(rec.Managed) != gentopo.Objects(n) {
		t.Fatalf("record: format %d, %d objects, want format 2 and %d", rec.Format, len(rec.Managed), gentopo.Objects(n))
	}
	total, size := f.definitions()
	t.Logf("%d objects: definitions %d bytes, compressed record %d bytes (%.1f%%)", gentopo.Objects(n), total, size, 100*float64(size)/float64(total))
	if float64(size) > 0.10*float64(total) {
		t.Errorf("the record is %d of the definitions' %d bytes: want at most 10%%", size, total)
	}
	before := f.plan(desired(cut))
	if got := changes(before); len(got) != 4 || !slices.Contains(got, "delete queue svc000.q00000") {
		t.Fatalf("plan of the cut file with the compressed record: %v", got)
	}

	old := f.toPlainRecord()
	total, size = f.definitions()
	t.Logf("format 1: definitions %d bytes, record %d bytes (%.1f%%)", total, size, 100*float64(size)/float64(total))
	if diff := cmp.Diff(changes(before), changes(f.plan(desired(cut)))); diff != "" {
		t.Errorf("the plan from the format 1 record differs (-compressed +format 1):\n%s", diff)
	}
	if p := f.plan(desired(full)); !p.Empty() || len(p.Adopt) != 0 {
		t.Errorf("plan of the applied file with the format 1 record: %v, adopt %v", changes(p), p.Adopt)
	}

	// An apply with nothing to do rewrites it, listing the same objects,
	// without a step, a question or a note.
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired(full)}, engine.ApplyOptions{
		Confirm: func(*plan.Plan) error { t.Error("an apply with nothing to do asked"); return nil },
	})
	if err != nil || out.Result != nil || len(f.notes) != 0 {
		t.Fatalf("no-op apply: result %+v, err %v, notes %q", out, err, f.notes)
	}
	rec = f.record()
	if rec.Format != ownership.FormatCompressed || rec.Generation != old.Generation+1 || len(rec.Exchanges) != 1 || !cmp.Equal(rec.Managed, old.Managed) {
		t.Errorf("after a no-op apply: format %d, generation %d (old %d), exchanges %v, same objects %v",
			rec.Format, rec.Generation, old.Generation, rec.Exchanges, cmp.Equal(rec.Managed, old.Managed))
	}
	// An apply with nothing to do on a current record writes nothing.
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: desired(full)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if again := f.record(); again.Generation != rec.Generation {
		t.Errorf("a no-op apply on a current record wrote generation %d", again.Generation)
	}

	// An apply that changes objects migrates it with the changes.
	old = f.toPlainRecord()
	out, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: desired(cut)}, engine.ApplyOptions{})
	if err != nil || len(out.Result.Done) != 4 {
		t.Fatalf("apply of the cut file: %+v, %v", out, err)
	}
	rec = f.record()
	if rec.Format != ownership.FormatCompressed || len(rec.Exchanges) != 1 || len(rec.Managed) != len(old.Managed)-4 {
		t.Errorf("after the apply: format %d, exchanges %v, %d objects (old %d)", rec.Format, rec.Exchanges, len(rec.Managed), len(old.Managed))
	}
	if p := f.plan(desired(cut)); !p.Empty() || len(p.Adopt) != 0 {
		t.Errorf("plan after the migrating apply: %v, adopt %v", changes(p), p.Adopt)
	}
}
