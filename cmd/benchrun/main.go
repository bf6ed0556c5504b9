// Command benchrun is `make bench`: it generates topologies of several
// sizes and measures, in one run and side by side,
//
//   - mqctl apply on a fresh vhost vs RabbitMQ's POST /api/definitions of
//     the same topology into another fresh vhost;
//   - a no-op mqctl plan vs one GET /api/definitions of that vhost, with
//     mqctl's ownership record and without it (the record exchange taken
//     out for that one read and put back, so that both reads meet the same
//     broker, taking turns with the plans), and the size the record adds
//     to the vhost's definitions;
//   - against that no-op plan, a teardown plan (a file that keeps the vhost
//     and drops every object in it) and a plan that replaces every queue
//     with arguments and both exchanges (taking down and restoring every
//     binding);
//   - up to 20,000 objects, apply's preflight (issue 20): the fresh apply
//     against the same apply with --no-preflight, and a change of one
//     queue, of a shape the vhost holds and of a new one, with and without;
//   - validate, lint, route and graph offline (pinned to one core);
//
// with the wall time and peak memory (max RSS) of every mqctl run. It
// writes bench/results.md (table, targets, machine), bench/results.json
// and bench/results.svg (time against size).
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/internal/parallel"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/ownership"
)

type measure struct {
	Seconds float64 `json:"seconds"`
	RSSMB   float64 `json:"max_rss_mb,omitempty"`
	// Runs are the seconds of each run where Seconds is their median
	// and they are reported (the definitions import and apply).
	Runs []float64 `json:"runs,omitempty"`
}

type row struct {
	Objects  int                `json:"objects"`
	Queues   int                `json:"queues"`
	Bindings int                `json:"bindings"`
	M        map[string]measure `json:"measures"`
	// DefinitionsBytes is the size of GET /api/definitions/{vhost} of the
	// applied topology without mqctl's ownership record; RecordBytes what
	// the record adds to it. RabbitMQ 4.3 leaves internal exchanges, the
	// record among them, out of the export (RecordOutOfExport): the
	// record's size is then that of its exchange objects as the exchange
	// listing gives them, the shape they have in an export that holds them.
	DefinitionsBytes  int  `json:"definitions_bytes,omitempty"`
	RecordBytes       int  `json:"record_bytes,omitempty"`
	RecordOutOfExport bool `json:"record_out_of_export,omitempty"`
	// Load is the machine's 1-minute load average when the broker
	// measures of this size started and ended.
	Load [2]float64 `json:"load_average,omitempty"`
}

type config struct {
	server, user, pass string
	bin, out           string
	offline            bool
}

func main() {
	var c config
	sizes := flag.String("sizes", "1000,10000,50000", "topology sizes in objects (queues + bindings + exchanges)")
	flag.StringVar(&c.server, "server", "http://127.0.0.1:15672", "management API of the broker to measure against")
	flag.StringVar(&c.user, "username", "guest", "administrator user")
	flag.StringVar(&c.pass, "password", "guest", "its password")
	flag.StringVar(&c.bin, "bin", "bin/mqctl", "mqctl binary to measure")
	flag.StringVar(&c.out, "out", "bench", "directory for results.md, results.json and results.svg")
	flag.BoolVar(&c.offline, "offline", false, "measure only the offline commands (no broker)")
	flag.Parse()
	if err := run(context.Background(), c, *sizes); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config, sizes string) error {
	var rows []row
	tmp, err := os.MkdirTemp("", "mqctl-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	version := ""
	if !c.offline {
		var ov struct {
			V string `json:"rabbitmq_version"`
		}
		data, err := c.http(ctx, http.MethodGet, "overview?columns=rabbitmq_version", nil)
		if err != nil {
			return fmt.Errorf("no broker at %s (run scripts/broker start, or pass -offline): %w", c.server, err)
		}
		_ = json.Unmarshal(data, &ov)
		version = ov.V
	}
	var ns []int
	for _, s := range strings.Split(sizes, ",") {
		objects, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || objects < 10 {
			return fmt.Errorf("-sizes: %q is not a size of at least 10 objects", s)
		}
		ns = append(ns, (objects+1)/4) // 4n+2 objects: the nearest size
	}
	// Every offline measure first, while the broker is idle: it keeps
	// working for a while after an import or a vhost deletion, and on two
	// cores that would be measured too.
	for _, n := range ns {
		r, err := c.measureOffline(ctx, tmp, n)
		if err != nil {
			return err
		}
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "%d objects offline: %v\n", r.Objects, r.M)
	}
	if !c.offline {
		for i, n := range ns {
			if err := c.measureLive(ctx, tmp, n, &rows[i]); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%d objects: %v\n", rows[i].Objects, rows[i].M)
		}
	}
	return write(c.out, rows, version, c.offline)
}

// file is the generated topology of n working queues in the apply vhost.
func file(tmp string, n int) (path, vhost string) {
	objects := gentopo.Objects(n)
	return filepath.Join(tmp, fmt.Sprintf("topology-%d.yaml", objects)), fmt.Sprintf("mqctl-bench-apply-%d", objects)
}

func (c config) measureOffline(ctx context.Context, tmp string, n int) (row, error) {
	objects := gentopo.Objects(n)
	file, applyVhost := file(tmp, n)
	text := gentopo.YAML(applyVhost, n)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return row{}, err
	}
	// The same file with one binding's key changed, for the flow diff.
	changed := strings.TrimSuffix(file, ".yaml") + "-changed.yaml"
	if err := os.WriteFile(changed, []byte(strings.Replace(text, `"svc000.event0.#"`, `"svc000.event0.created"`, 1)), 0o644); err != nil {
		return row{}, err
	}
	r := row{Objects: objects, Queues: 2 * n, Bindings: 2 * n, M: map[string]measure{}}
	offline := []struct {
		name string
		args []string
	}{
		{"validate", []string{"validate", "-f", file}},
		{"validate changed", []string{"validate", "-f", changed}},
		{"diff", []string{"diff", file, changed}},
		{"lint", []string{"lint", "-f", file, "--fail-on", "none"}},
		{"route", []string{"route", "-f", file, "--exchange", "events", "--routing-key", "svc001.event1.created"}},
		{"graph", []string{"graph", "-f", file, "--format", "dot"}},
	}
	runs := repeats(objects)
	for _, o := range offline {
		m, err := c.timeMqctl(ctx, true, runs, o.args...)
		if err != nil {
			return r, err
		}
		r.M[o.name] = m
	}
	return r, nil
}

// measureLive adds the broker measures to r.
func (c config) measureLive(ctx context.Context, tmp string, n int, r *row) error {
	r.Load[0] = loadAverage()
	defer func() { r.Load[1] = loadAverage() }()
	objects := gentopo.Objects(n)
	file, applyVhost := file(tmp, n)
	importVhost := fmt.Sprintf("mqctl-bench-import-%d", objects)
	runs := repeats(objects)
	conn := []string{"--server", c.server, "--username", c.user, "--password", c.pass}
	// Fresh vhosts: leftovers of an interrupted run are removed first.
	for _, vh := range []string{applyVhost, importVhost} {
		if err := c.deleteVhost(ctx, vh); err != nil {
			return err
		}
	}
	time.Sleep(settle) // after the previous size's deletions too
	defer func() {
		for _, vh := range []string{applyVhost, importVhost} {
			if err := c.deleteVhost(context.Background(), vh); err != nil {
				fmt.Fprintln(os.Stderr, "benchrun:", err)
			}
		}
	}()
	top, err := loader.LoadBytes("gen.yaml", []byte(gentopo.YAML(importVhost, n)), loader.Options{})
	if err != nil {
		return err
	}
	defs, err := gentopo.Definitions(top.Vhosts[importVhost])
	if err != nil {
		return err
	}
	if err := c.measureImportAndApply(ctx, file, applyVhost, importVhost, defs, objects, conn, r); err != nil {
		return err
	}
	if err := c.measurePlansAndReads(ctx, file, applyVhost, runs, conn, r); err != nil {
		return err
	}
	if objects <= preflightUpTo {
		if err := c.measureOneChange(ctx, tmp, n, conn, r); err != nil {
			return err
		}
	}
	return c.measureTakeDown(ctx, tmp, applyVhost, n, runs, conn, r)
}

// measureImportAndApply times the broker's definitions import of defs
// into importVhost and mqctl's apply of file into applyVhost, taking
// turns, and (up to preflightUpTo objects) the same apply without its
// preflight.
func (c config) measureImportAndApply(ctx context.Context, file, applyVhost, importVhost string, defs []byte, objects int, conn []string, r *row) error {
	// The import and the apply take turns, pairs(objects) times: one
	// run of each is a coin toss on a broker whose pace drifts by a
	// quarter from minute to minute (4.0.5 imported 10,002 objects in
	// 15-23 s within one quarter of an hour on the reference machine).
	var imports, applies, bare []float64
	var applyRSS float64
	for i := range pairs(objects) {
		if i > 0 {
			// The previous apply's vhost goes, as the import's does.
			if err := c.deleteVhost(ctx, applyVhost); err != nil {
				return err
			}
			time.Sleep(settle)
		}
		if _, err := c.http(ctx, http.MethodPut, "vhosts/"+url.PathEscape(importVhost), []byte(`{}`)); err != nil {
			return err
		}
		start := time.Now()
		if _, err := c.http(ctx, http.MethodPost, "definitions/"+url.PathEscape(importVhost), defs); err != nil {
			return err
		}
		imports = append(imports, time.Since(start).Seconds())
		// apply meets the broker as the import did: without the other
		// copy. With it, the broker tracks twice the queues (statistics,
		// memory) and each declaration is slower: 71 s instead of 53-58 s
		// at 50,002 objects.
		if err := c.deleteVhost(ctx, importVhost); err != nil {
			return err
		}
		time.Sleep(settle)
		m, err := c.timeMqctl(ctx, false, 1, append([]string{"apply", "-f", file, "--auto-approve", "--quiet"}, conn...)...)
		if err != nil {
			return err
		}
		applies, applyRSS = append(applies, m.Seconds), max(applyRSS, m.RSSMB)
		if objects > preflightUpTo {
			continue
		}
		// The same apply without its preflight (issue 20: the preflight
		// costs at most 10% of it), on a fresh vhost again.
		if err := c.deleteVhost(ctx, applyVhost); err != nil {
			return err
		}
		time.Sleep(settle)
		m, err = c.timeMqctl(ctx, false, 1, append([]string{"apply", "-f", file, "--auto-approve", "--quiet", "--no-preflight"}, conn...)...)
		if err != nil {
			return err
		}
		bare = append(bare, m.Seconds)
	}
	r.M["definitions import"] = measure{Seconds: median(imports), Runs: imports}
	r.M["apply"] = measure{Seconds: median(applies), RSSMB: applyRSS, Runs: applies}
	if len(bare) > 0 {
		r.M["apply without preflight"] = measure{Seconds: median(bare), Runs: bare}
	}
	return nil
}

// measurePlansAndReads times no-op plans of file against applyVhost,
// taking turns with reads of its definitions with and without mqctl's
// ownership record, and sizes the record.
func (c config) measurePlansAndReads(ctx context.Context, file, applyVhost string, runs int, conn []string, r *row) error {
	// The ownership record apply wrote: taken out for the reads without it.
	records, err := c.records(ctx, applyVhost)
	if err != nil {
		return err
	}
	// Plans and reads take turns, so that they all meet the broker in the
	// same state (it is still busy for a while after the apply): a plan,
	// a read of the vhost's definitions as mqctl left them, a read without
	// the record (the same topology as a definitions import leaves it).
	// The next plan, which must be empty again, checks that the record
	// was put back whole.
	var plans, reads, unrecorded []float64
	var rss float64
	for range runs {
		m, err := c.timeMqctl(ctx, false, 1, append([]string{"plan", "-f", file, "--detailed-exitcode"}, conn...)...)
		if err != nil {
			return fmt.Errorf("the plan right after apply is not empty (or failed): %w", err)
		}
		plans, rss = append(plans, m.Seconds), max(rss, m.RSSMB)
		start := time.Now()
		with, err := c.http(ctx, http.MethodGet, "definitions/"+url.PathEscape(applyVhost), nil)
		if err != nil {
			return err
		}
		reads = append(reads, time.Since(start).Seconds())
		if err := records.remove(ctx); err != nil {
			return err
		}
		start = time.Now()
		without, err := c.http(ctx, http.MethodGet, "definitions/"+url.PathEscape(applyVhost), nil)
		if err != nil {
			return err
		}
		unrecorded = append(unrecorded, time.Since(start).Seconds())
		if err := records.restore(ctx); err != nil {
			return err
		}
		r.DefinitionsBytes, r.RecordBytes = len(without), len(with)-len(without)
		if !bytes.Contains(with, []byte(`"`+records.names()[0]+`"`)) {
			r.RecordOutOfExport, r.RecordBytes = true, records.size()
		}
	}
	if _, err := c.timeMqctl(ctx, false, 1, append([]string{"plan", "-f", file, "--detailed-exitcode"}, conn...)...); err != nil {
		return fmt.Errorf("the plan after the record was put back is not empty (or failed): %w", err)
	}
	r.M["no-op plan"] = measure{Seconds: median(plans), RSSMB: rss}
	r.M["definitions read"] = measure{Seconds: median(reads)}
	r.M["definitions read without record"] = measure{Seconds: median(unrecorded)}
	return nil
}

// measureTakeDown times, against applyVhost, the plans that take
// everything down: they read the messages at stake in every queue
// besides the state.
func (c config) measureTakeDown(ctx context.Context, tmp, applyVhost string, n, runs int, conn []string, r *row) error {
	objects := gentopo.Objects(n)
	m, err := c.measureExactReads(ctx, applyVhost, runs)
	if err != nil {
		return err
	}
	r.M["exact reads"] = m
	for _, k := range []struct{ name, yaml string }{
		{"teardown plan", teardownYAML(applyVhost)},
		{"replace plan", gentopo.ReplaceYAML(applyVhost, n)},
	} {
		f := filepath.Join(tmp, fmt.Sprintf("%s-%d.yaml", strings.ReplaceAll(k.name, " ", "-"), objects))
		if err := os.WriteFile(f, []byte(k.yaml), 0o644); err != nil {
			return err
		}
		m, err := c.timeMqctl(ctx, false, runs, append([]string{"plan", "-f", f}, conn...)...)
		if err != nil {
			return err
		}
		r.M[k.name] = m
	}
	return nil
}

// measureExactReads times what a plan that deletes every queue of vhost
// asks of the broker for the messages at stake: an exact read of each
// queue (a passive declare over AMQP, through the plan's own lock.Inspect),
// engine.StakeReaders at a time on one connection, as the plan reads them.
// The median of runs passes.
func (c config) measureExactReads(ctx context.Context, vhost string, runs int) (measure, error) {
	body, err := c.http(ctx, http.MethodGet, "queues/"+url.PathEscape(vhost)+"?columns=name&disable_stats=true", nil)
	if err != nil {
		return measure{}, err
	}
	var queues []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(body, &queues); err != nil {
		return measure{}, err
	}
	bc, err := broker.Connect(ctx, broker.Config{Server: c.server, Username: c.user, Password: c.pass})
	if err != nil {
		return measure{}, err
	}
	amqpURL, err := bc.AMQPURL(ctx, "")
	if err != nil {
		return measure{}, err
	}
	var times []float64
	for range runs {
		conn, err := lock.Peek(ctx, vhost, lock.Options{URL: amqpURL, Name: "mqctl benchrun"})
		if err != nil {
			return measure{}, err
		}
		errs := make([]error, len(queues))
		g := parallel.New(engine.StakeReaders)
		start := time.Now()
		for i, q := range queues {
			g.Go(func() {
				if st, err := conn.Inspect(q.Name); err != nil || !st.Exists {
					errs[i] = fmt.Errorf("exact read of queue %q in vhost %q: %v (exists: %v)", q.Name, vhost, err, st.Exists)
				}
			})
		}
		g.Wait()
		failed := cmp.Or(errs...)
		times = append(times, time.Since(start).Seconds())
		_ = conn.Release()
		if failed != nil {
			return measure{}, failed
		}
	}
	return measure{Seconds: median(times)}, nil
}

// preflightUpTo is the largest size at which the preflight's cost is
// measured (an apply without it, a change of one object): issue 20 sets
// its targets at 10,000 objects.
const preflightUpTo = 20000

// measureOneChange measures an apply that adds one working queue to the
// applied vhost, with and without the preflight, where the new queue's
// shape is one the vhost holds (nothing to try) and where it is new (the
// apply's first write, alone, is its own trial); and one that adds two
// queues of new shapes (one throwaway vhost, two declarations). The file
// is applied again after each, which takes the queues away.
func (c config) measureOneChange(ctx context.Context, tmp string, n int, conn []string, r *row) error {
	file, applyVhost := file(tmp, n)
	objects := gentopo.Objects(n)
	base := gentopo.YAML(applyVhost, n)
	variants := []struct{ name, extra string }{
		// A queue like the DLQs: classic, no arguments.
		{"1-object change (held shape)", "      bench.extra: {}\n"},
		{"1-object change (new shape)", "      bench.extra: { limits: { max_length: 12345 } }\n"},
		// Two new shapes: a throwaway vhost, two declarations.
		{"2-object change (new shapes)", "      bench.extra: { limits: { max_length: 12345 } }\n      bench.extra2: { limits: { max_length: 54321 } }\n"},
	}
	times := map[string][]float64{}
	// Eleven runs each: a change of one object takes 0.1-0.6 s, and the
	// runs of one apply spread by a third on a loaded machine (4.3.6, 10k,
	// nothing to try: 0.32-0.46 s with the preflight, 0.32-0.40 s
	// without, in seven runs each), more than the 10% measured.
	//
	// The two applies of a variant take turns at going first after the
	// file's apply (which deleted the queues): with the preflight always
	// first, the held shape read 10-25% slower at 10k objects in three
	// runs, where the preflight's own work there (no shape to try) takes
	// 3 ms in process and 5-15 ms by hand, 8 runs each taking turns.
	for run := range repeats(objects) + 4 {
		for _, v := range variants {
			f := filepath.Join(tmp, fmt.Sprintf("one-more-%d.yaml", objects))
			if err := os.WriteFile(f, []byte(base+v.extra), 0o644); err != nil {
				return err
			}
			order := [][]string{nil, {"--no-preflight"}}
			if run%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, flags := range order {
				m, err := c.timeMqctl(ctx, false, 1, append(append([]string{"apply", "-f", f, "--auto-approve", "--quiet"}, flags...), conn...)...)
				if err != nil {
					return err
				}
				name := v.name
				if flags != nil {
					name += " without preflight"
				}
				times[name] = append(times[name], m.Seconds)
				if _, err := c.timeMqctl(ctx, false, 1, append([]string{"apply", "-f", file, "--auto-approve", "--quiet"}, conn...)...); err != nil {
					return err
				}
			}
		}
	}
	for name, ts := range times {
		r.M[name] = measure{Seconds: median(ts), Runs: ts}
	}
	return nil
}

// recordSet is the ownership record exchanges of one vhost, as the
// management API lists them, to take out and put back.
type recordSet struct {
	c     config
	vhost string
	list  []map[string]any
}

// records finds the ownership record exchanges of vhost (named
// mqctl.ownership.<generation>, see pkg/ownership).
func (c config) records(ctx context.Context, vhost string) (*recordSet, error) {
	data, err := c.http(ctx, http.MethodGet, "exchanges/"+url.PathEscape(vhost)+"?columns=name,type,durable,auto_delete,internal,arguments", nil)
	if err != nil {
		return nil, err
	}
	var all []map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // x-mqctl-count goes back as it came
	if err := dec.Decode(&all); err != nil {
		return nil, fmt.Errorf("the exchanges of vhost %s: %w", vhost, err)
	}
	rs := &recordSet{c: c, vhost: vhost}
	for _, e := range all {
		if name, _ := e["name"].(string); ownership.IsRecord(name) {
			rs.list = append(rs.list, e)
		}
	}
	if len(rs.list) == 0 {
		return nil, fmt.Errorf("vhost %s holds no ownership record after apply", vhost)
	}
	return rs, nil
}

func (rs *recordSet) path(e map[string]any) string {
	name, _ := e["name"].(string)
	return "exchanges/" + url.PathEscape(rs.vhost) + "/" + url.PathEscape(name)
}

// names are the record exchanges' names.
func (rs *recordSet) names() []string {
	var out []string
	for _, e := range rs.list {
		name, _ := e["name"].(string)
		out = append(out, name)
	}
	return out
}

// size is what the record exchanges take as the exchange objects of a
// definitions export (name, type, durable, auto_delete, internal,
// arguments, each followed by a comma), for an export that leaves them
// out (RabbitMQ 4.3 leaves out every internal exchange).
func (rs *recordSet) size() int {
	n := 0
	for _, e := range rs.list {
		data, err := json.Marshal(e)
		if err != nil {
			continue // decoded from JSON: always encodable
		}
		n += len(data) + 1
	}
	return n
}

// remove deletes the record exchanges (they have no bindings).
func (rs *recordSet) remove(ctx context.Context) error {
	for _, e := range rs.list {
		if _, err := rs.c.http(ctx, http.MethodDelete, rs.path(e), nil); err != nil {
			return fmt.Errorf("take out the ownership record: %w", err)
		}
	}
	return nil
}

// restore declares the record exchanges again, as they were.
func (rs *recordSet) restore(ctx context.Context) error {
	for _, e := range rs.list {
		body, err := json.Marshal(map[string]any{"type": e["type"], "durable": e["durable"], "auto_delete": e["auto_delete"],
			"internal": e["internal"], "arguments": e["arguments"]})
		if err != nil {
			return err
		}
		if _, err := rs.c.http(ctx, http.MethodPut, rs.path(e), body); err != nil {
			return fmt.Errorf("put the ownership record back: %w", err)
		}
	}
	return nil
}

// teardownYAML keeps vhost and drops every object in it: the plan deletes
// all 4n+2 of them.
func teardownYAML(vhost string) string {
	return fmt.Sprintf("version: 1\nvhosts:\n  %q: {}\n", vhost)
}

// settle is how long the broker is left alone after a vhost deletion,
// which it finishes in the background.
const settle = 5 * time.Second

// pairs is how many times the definitions import and apply take turns
// (their medians are reported): 7 up to 2,000 objects, 3 up to 20,000,
// where a run takes seconds; above, one each, as a run takes minutes and
// the deletion of such a vhost as long again.
func pairs(objects int) int {
	switch {
	case objects > 20000:
		return 1
	case objects > 2000:
		return 3
	}
	// A 1k apply takes about a second, and its time drifts by a third
	// from run to run (4.3.6: 1.05-1.61 s with the preflight, 1.17-1.65 s
	// without, eight runs each taking turns).
	return 7
}

// repeats is how many times a quick measure is taken (its median is
// reported): small sizes run in milliseconds, where one run is noise.
func repeats(objects int) int {
	if objects > 20000 {
		return 3
	}
	return 7
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// timeMqctl runs mqctl runs times and reports the median wall time (taken
// here) and the largest peak memory (max RSS, as /usr/bin/time reports
// it); offline commands are pinned to one core. The child's own rusage
// would not do: Linux keeps in it the RSS this process had when it forked.
func (c config) timeMqctl(ctx context.Context, oneCore bool, runs int, args ...string) (measure, error) {
	tf, err := os.CreateTemp("", "time")
	if err != nil {
		return measure{}, err
	}
	tf.Close()
	defer os.Remove(tf.Name())
	var secs []float64
	var rss float64
	for range runs {
		cmdline := []string{"-f", "%M", "-o", tf.Name()}
		if oneCore {
			if _, err := exec.LookPath("taskset"); err == nil {
				cmdline = append(cmdline, "taskset", "-c", "0")
			}
		}
		cmdline = append(cmdline, c.bin)
		cmdline = append(cmdline, args...)
		cmd := exec.CommandContext(ctx, "/usr/bin/time", cmdline...)
		if oneCore {
			cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		elapsed := time.Since(start).Seconds()
		if err != nil {
			tail := out.String()
			if len(tail) > 2000 {
				tail = tail[len(tail)-2000:]
			}
			return measure{}, fmt.Errorf("mqctl %s: %v\n%s", args[0], err, tail)
		}
		data, err := os.ReadFile(tf.Name())
		if err != nil {
			return measure{}, err
		}
		fields := strings.Fields(string(data))
		if len(fields) == 0 {
			return measure{}, fmt.Errorf("/usr/bin/time wrote nothing to %s", tf.Name())
		}
		kb, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return measure{}, fmt.Errorf("reading /usr/bin/time output %q: %w", data, err)
		}
		secs = append(secs, elapsed)
		rss = max(rss, kb/1024)
	}
	return measure{Seconds: median(secs), RSSMB: rss}, nil
}

func (c config) http(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.server, "/")+"/api/"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.user, c.pass)
	req.Header.Set("Content-Type", "application/json")
	// A connection of its own for each request: the management API closes
	// idle ones, and a PUT sent on one it has just closed fails with EOF
	// (Go does not send it again), as a run did after a 5 s settle.
	resp, err := (&http.Client{Timeout: 30 * time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && !(method == http.MethodDelete && resp.StatusCode == http.StatusNotFound) {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	return data, nil
}

// loadAverage is the 1-minute load average (0 where /proc has none).
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	x, _ := strconv.ParseFloat(f[0], 64)
	return x
}

func machine() string {
	cpu := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(strings.SplitN(string(data), "\n", 2)[0])
		if len(f) >= 2 {
			kb, _ := strconv.Atoi(f[1])
			mem = fmt.Sprintf("%.0f GiB", float64(kb)/1024/1024)
		}
	}
	return fmt.Sprintf("%d cores (%s), %s memory, %s/%s, %s", runtime.NumCPU(), cpu, mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// localBroker reports whether the broker measured is the one
// scripts/broker runs with this environment (its management API is
// c.server): only then does "scripts/broker ctl" reach it. A second local
// broker (another MQCTL_PORT_OFFSET, node name and folder) is reached
// only when the environment names it; otherwise the deletion went to the
// default node and the run waited 15 minutes for the vhost to go.
func (c config) localBroker(ctx context.Context) bool {
	if _, err := os.Stat("scripts/broker"); err != nil {
		return false
	}
	out, err := exec.CommandContext(ctx, "scripts/broker", "env").Output()
	if err != nil {
		return false
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "MQCTL_SERVER="); ok {
			return strings.TrimRight(strings.Trim(v, `'"`), "/") == strings.TrimRight(c.server, "/")
		}
	}
	return false
}

// deleteVhost deletes a vhost and waits until it is gone: with thousands of
// queues the management API gives up on the request after 60 s while the
// broker goes on deleting.
func (c config) deleteVhost(ctx context.Context, vh string) error {
	// The management API aborts a request after 60 s, and with it the
	// deletion of a vhost of tens of thousands of queues: the local broker's
	// rabbitmqctl has no such limit.
	if c.localBroker(ctx) {
		_ = exec.CommandContext(ctx, "scripts/broker", "ctl", "delete_vhost", vh).Run()
	} else {
		_, _ = c.http(ctx, http.MethodDelete, "vhosts/"+url.PathEscape(vh), nil)
	}
	for deadline := time.Now().Add(15 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		if _, err := c.http(ctx, http.MethodGet, "vhosts/"+url.PathEscape(vh), nil); err != nil && strings.Contains(err.Error(), "404") {
			return nil
		}
	}
	return fmt.Errorf("vhost %s still exists 15 minutes after its deletion", vh)
}
