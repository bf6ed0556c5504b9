package engine_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/preflight"
)

// preflightCase is a file, and per RabbitMQ line what the broker answers:
// the words of its refusal ("" when it takes the file).
type preflightCase struct {
	name    string
	file    string
	refused []string // the objects refused, as `kind name`
	answers map[string]string
	// refusedOn, where a RabbitMQ line refuses other objects of the file,
	// lists them for that line instead of refused.
	refusedOn map[string][]string
}

// preflightCases are what the broker refuses that mqctl's version table
// may not know (the streams' values, a plugin's exchange type, 3.10's
// delivery-limit -1), and every 4.3 refusal of the table. Each runs with
// the table switched off: the preflight alone must stop it.
var preflightCases = []preflightCase{
	{name: "stream filter size out of range", refused: []string{"queue s"},
		file: `
    queues:
      plain: {}
      s: { type: stream, arguments: { x-stream-filter-size-bytes: 300 } }`,
		answers: map[string]string{"4.3": "Invalid value for x-stream-filter-size-bytes", "4.0": "x-stream-filter-size-bytes", "3.10": ""}},
	{name: "stream max-age of zero", refused: []string{"queue s1", "queue s2"},
		file: `
    queues:
      plain: {}
      s1: { type: stream, arguments: { x-max-age: 0D } }
      s2: { type: stream, arguments: { x-max-age: 0D } }`,
		answers: map[string]string{"4.3": "invalid_max_age", "4.0": "invalid_max_age", "3.10": "invalid_max_age"}},
	{name: "exchange type of a plugin not enabled", refused: []string{"exchange hash"},
		file: `
    exchanges:
      plain: { type: direct }
      hash: { type: x-consistent-hash }
    queues:
      q: { bindings: [{ exchange: hash, routing_key: "1" }] }`,
		answers: map[string]string{"4.3": "unknown exchange type", "4.0": "unknown exchange type", "3.10": "unknown exchange type"}},
	{name: "delivery-limit -1 in a policy", refused: []string{"operator_policy odl", "policy dl"},
		file: `
    queues:
      q: { type: quorum }
    policies:
      dl: { pattern: "^q$", apply_to: queues, definition: { delivery-limit: -1 } }
    operator_policies:
      odl: { pattern: "^q$", apply_to: queues, definition: { delivery-limit: -1 } }`,
		answers: map[string]string{"4.3": "", "4.0": "", "3.10": "-1 is not a valid delivery limit"}},
	{name: "x-queue-master-locator", refused: []string{"queue q"},
		file: `
    queues:
      q: { arguments: { x-queue-master-locator: client-local } }`,
		answers: map[string]string{"4.3": "Feature `queue_master_locator` is deprecated", "4.0": "", "3.10": ""}},
	{name: "queue-master-locator policy key", refused: []string{"policy loc"},
		file: `
    policies:
      loc: { pattern: "^q$", apply_to: queues, definition: { queue-master-locator: client-local } }`,
		answers: map[string]string{"4.3": "queue-master-locator", "4.0": "", "3.10": ""}},
	{name: "classic queue version 1", refused: []string{"queue q"},
		file: `
    queues:
      q: { arguments: { x-queue-version: 1 } }`,
		answers: map[string]string{"4.3": "unsupported queue version", "4.0": "", "3.10": ""}},
	{name: "consumer timeout on a classic queue", refused: []string{"queue q"},
		file: `
    queues:
      q: { arguments: { x-consumer-timeout: 60000 } }`,
		answers: map[string]string{"4.3": "x-consumer-timeout", "4.0": "", "3.10": ""}},
	{name: "delayed retry on a stream", refused: []string{"queue s"},
		file: `
    queues:
      s: { type: stream, arguments: { x-delayed-retry-type: all } }`,
		answers: map[string]string{"4.3": "x-delayed-retry-type", "4.0": "", "3.10": ""}},
	{name: "quorum queues' 4.3 arguments on other types", refused: []string{"queue c1", "queue c2", "queue c3", "queue s1"},
		file: `
    queues:
      c1: { arguments: { x-consumer-disconnected-timeout: 60000 } }
      c2: { arguments: { x-delayed-retry-min: 100 } }
      c3: { arguments: { x-delayed-retry-max: 1000 } }
      s1: { type: stream, arguments: { x-consumer-timeout: 60000 } }
      q: { type: quorum, arguments: { x-consumer-timeout: 60000, x-delayed-retry-type: all, x-delayed-retry-min: 100 } }`,
		answers: map[string]string{"4.3": "invalid arg 'x-", "4.0": "", "3.10": ""}},
	{name: "4.3's policy keys on older brokers", refused: []string{"policy retry"},
		file: `
    queues:
      q: { type: quorum }
    policies:
      retry: { pattern: "^q$", apply_to: queues, definition: { delayed-retry-type: all, delayed-retry-min: 100 } }`,
		answers: map[string]string{"4.3": "", "4.0": "not recognised", "3.10": "not recognised"}},
	{name: "topic key with three '#' words", refused: []string{"binding t -> queue q [#.a.#.b.#]"},
		file: `
    exchanges:
      t: { type: topic }
    queues:
      q: { bindings: [{ exchange: t, routing_key: "#.a.#.b.#" }] }`,
		answers: map[string]string{"4.3": "'#' wildcards", "4.0": "", "3.10": ""}},
	// x-local-random (4.0+) takes a binding without a key to a classic
	// queue only; 3.10 has no such type. The trial binds a queue of the
	// binding's queue's type.
	{name: "x-local-random binding to a quorum queue", refused: []string{"binding rpc -> queue q []"},
		refusedOn: map[string][]string{"3.10": {"exchange rpc"}},
		file: `
    exchanges:
      rpc: { type: x-local-random }
    queues:
      c: { bindings: [{ exchange: rpc }] }
      q: { type: quorum, bindings: [{ exchange: rpc }] }`,
		answers: map[string]string{"4.3": "Queue type rabbit_quorum_queue not valid for this exchange type", "4.0": "Queue type rabbit_quorum_queue not valid", "3.10": "unknown exchange type"}},
	{name: "x-local-random binding with a key", refused: []string{"binding rpc -> queue c [k]"},
		refusedOn: map[string][]string{"3.10": {"exchange rpc"}},
		file: `
    exchanges:
      rpc: { type: x-local-random }
    queues:
      c: { bindings: [{ exchange: rpc, routing_key: k }] }`,
		answers: map[string]string{"4.3": "Non empty binding 'k' key not permitted", "4.0": "Non empty binding", "3.10": "unknown exchange type"}},
}

// invalidArg matches the argument RabbitMQ names in its refusal of a
// queue's arguments.
var invalidArg = regexp.MustCompile(`invalid arg '([^']+)'`)

// withNeighbour adds to a case's file an exchange of a shape the vhost
// does not hold: the plan has two changes at least, and is tried in a
// throwaway vhost.
func withNeighbour(file string) string {
	const x = "      neighbour: { type: fanout }\n"
	if strings.Contains(file, "    exchanges:\n") {
		return strings.Replace(file, "    exchanges:\n", "    exchanges:\n"+x, 1)
	}
	return "\n    exchanges:\n" + x + strings.TrimPrefix(file, "\n")
}

// TestPreflightStopsWhatTheBrokerRefuses: with the version table switched
// off, what the broker refuses is found before any change: the apply
// changes nothing, names each refused object with its place in the file
// and the broker's words, and deletes its throwaway vhost. Each case runs
// alone and with a neighbour: a plan whose only change is one write is
// its own trial (no throwaway vhost; the refused write is all that was
// sent), any other is tried in a throwaway vhost first. What the broker
// takes is applied, and planned empty after.
func TestPreflightStopsWhatTheBrokerRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range preflightCases {
		for _, neighbour := range []bool{false, true} {
			name := tc.name + "/alone"
			file := tc.file
			if neighbour {
				name, file = tc.name+"/with a neighbour", withNeighbour(tc.file)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				engine.WithoutTable(f.eng)
				line := f.b.Version().Line()
				want, ok := tc.answers[line]
				if !ok {
					t.Fatalf("the case states no answer for RabbitMQ %s", line)
				}
				src := "version: 1\nvhosts:\n  ${VHOST}:" + file + "\n"
				ctx := context.Background()
				beforePlan := f.plan(f.desired(src))
				before := changes(beforePlan)
				byWrite := len(beforePlan.Changes) == 1
				out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{})
				if out == nil || out.Preflight == nil {
					t.Fatalf("RabbitMQ %s: no preflight ran (err %v)", line, err)
				}
				if pf := out.Preflight; pf.ByWrite != byWrite || (pf.Vhost == "") != byWrite {
					t.Errorf("a plan of %d changes: the preflight's write was its own trial %v (throwaway vhost %q), want %v", len(beforePlan.Changes), pf.ByWrite, pf.Vhost, byWrite)
				}
				if out.Preflight.Vhost != "" {
					if _, gerr := f.c.GetVhost(ctx, out.Preflight.Vhost); !errors.Is(gerr, broker.ErrNotFound) {
						t.Errorf("the throwaway vhost %s is still there after the apply (%v)", out.Preflight.Vhost, gerr)
					}
				}
				if want == "" {
					if err != nil {
						t.Fatalf("RabbitMQ %s takes this file, but the apply failed: %v", line, err)
					}
					if p := f.plan(f.desired(src)); !p.Empty() {
						t.Errorf("the plan right after apply: %v", changes(p))
					}
					return
				}
				var re *preflight.RefusedError
				if !errors.As(err, &re) || !errors.Is(err, preflight.ErrRefused) {
					t.Fatalf("RabbitMQ %s: want the preflight to refuse (%q), got %v", line, want, err)
				}
				var refused []string
				for _, r := range re.Report.Refusals {
					if !strings.Contains(r.Reason, want) {
						t.Errorf("RabbitMQ %s: refusal %q does not say %q", line, r.Reason, want)
					}
					for _, o := range r.Objects {
						refused = append(refused, fmt.Sprintf("%s %s", o.Kind, o.Name))
						if o.Pos.Line == 0 || !strings.Contains(err.Error(), o.Pos.String()) {
							t.Errorf("the error does not name where %s %s is declared (%v): %v", o.Kind, o.Name, o.Pos, err)
						}
						// The broker names the argument it refuses: the
						// place is that argument's, not the object's.
						if m := invalidArg.FindStringSubmatch(r.Reason); m != nil {
							lines := strings.Split(src, "\n")
							if o.Pos.Line > len(lines) || o.Pos.Col < 1 || !strings.Contains(lines[o.Pos.Line-1][:min(o.Pos.Col-1, len(lines[o.Pos.Line-1]))], m[1]+":") {
								t.Errorf("RabbitMQ %s refuses argument %s of %s %s: the place given, %v, is not that argument's", line, m[1], o.Kind, o.Name, o.Pos)
							}
						}
					}
				}
				slices.Sort(refused)
				wantRefused := tc.refused
				if on, ok := tc.refusedOn[line]; ok {
					wantRefused = on
				}
				if !slices.Equal(refused, wantRefused) {
					t.Errorf("RabbitMQ %s: refused %v, want %v", line, refused, wantRefused)
				}
				switch {
				case byWrite && (out.Result == nil || len(out.Result.Done) != 0 || len(out.Result.Failed) != 1):
					t.Errorf("the plan's only write, refused: want it alone sent and failed, got %+v", out.Result)
				case !byWrite && out.Result != nil:
					t.Errorf("the apply went on after the refusal: %+v", out.Result)
				}
				if after := changes(f.plan(f.desired(src))); !slices.Equal(after, before) {
					t.Errorf("a refused apply changed the broker: the plan went from %v to %v", before, after)
				}
			})
		}
	}
}

// TestOneWriteIsItsOwnTrial: an apply whose only trial is its first write,
// made alone in one request (a create, or a policy's update; bindings of
// shapes the broker holds may follow it), makes no throwaway vhost: that
// write asks the broker, and a refusal of it changes nothing, the
// ownership record and the bindings after it included. A replace (a
// delete, then a declare), or a create that comes with a record to
// rewrite, is tried in a throwaway vhost first.
func TestOneWriteIsItsOwnTrial(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	engine.WithoutTable(f.eng)
	ctx := context.Background()
	const base = "version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n      x: { type: direct }\n    policies:\n      p: { pattern: \"^plain$\", apply_to: queues, definition: { max-length: 5 } }\n    queues:\n      plain: { bindings: [{ exchange: x, routing_key: plain }] }\n      gone: {}\n      r: { arguments: { x-max-length: 5 } }\n"
	apply := func(src string, o engine.ApplyOptions) (*engine.ApplyResult, error) {
		t.Helper()
		out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, o)
		if out == nil || out.Preflight == nil {
			t.Fatalf("no preflight ran (err %v)", err)
		}
		return out, err
	}
	if _, err := apply(base, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		o         engine.ApplyOptions
		refused   string // the broker's words; "" when it takes the change
	}{
		{name: "a queue of a new shape", src: base + "      more: { arguments: { x-max-length: 7 } }\n"},
		{name: "a policy's new definition", src: strings.Replace(base, "{ max-length: 5 }", "{ max-length: 6 }", 1)},
		{name: "a queue of a new shape, bound as others are", src: base + "      more: { arguments: { x-max-length: 7 }, bindings: [{ exchange: x, routing_key: more }] }\n"},
		{name: "a refused stream", src: base + "      s: { type: stream, arguments: { x-max-age: 0D } }\n", refused: "invalid_max_age"},
		{name: "a refused stream, bound as others are", src: base + "      s: { type: stream, arguments: { x-max-age: 0D }, bindings: [{ exchange: x, routing_key: s }] }\n", refused: "invalid_max_age"},
	} {
		before, record := changes(f.plan(f.desired(base))), f.record()
		out, err := apply(tc.src, tc.o)
		if pf := out.Preflight; !pf.ByWrite || pf.Vhost != "" || pf.Tried != 0 {
			t.Errorf("%s: preflight %+v, want the one write as its own trial and no throwaway vhost", tc.name, pf)
		}
		if tc.refused == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			if _, err := apply(base, engine.ApplyOptions{}); err != nil { // back to base
				t.Fatal(err)
			}
			continue
		}
		var re *preflight.RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("%s: want the write's refusal (%q) as the preflight's, got %v", tc.name, tc.refused, err)
		}
		if after := changes(f.plan(f.desired(base))); !slices.Equal(after, before) {
			t.Errorf("%s: the refused write changed the broker: the plan went from %v to %v", tc.name, before, after)
		}
		if after := f.record(); !cmp.Equal(after, record) {
			t.Errorf("%s: the refused write changed the ownership record: %s", tc.name, cmp.Diff(record, after))
		}
	}
	// A replace deletes, then declares: tried first.
	out, err := apply(strings.Replace(base, "x-max-length: 5", "x-max-length: 6", 1), engine.ApplyOptions{AllowReplace: true})
	if err != nil || out.Preflight.ByWrite || out.Preflight.Vhost == "" {
		t.Errorf("a queue replaced: preflight %+v (err %v), want a throwaway vhost", out.Preflight, err)
	}
	// One create, and a record that lists a queue deleted by hand.
	if err := f.c.DeleteQueue(ctx, f.vhost, "gone", broker.DeleteQueueOptions{}); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(strings.Replace(base, "x-max-length: 5", "x-max-length: 6", 1), "      gone: {}\n", "", 1) + "      other: { arguments: { x-max-length: 8 } }\n"
	if p := f.plan(f.desired(src)); len(p.Changes) != 1 || len(p.Stale) != 1 {
		t.Fatalf("want one create and one stale record entry, got %v and %v", changes(p), p.Stale)
	}
	out, err = apply(src, engine.ApplyOptions{})
	if err != nil || out.Preflight.ByWrite || out.Preflight.Vhost == "" {
		t.Errorf("a create and a stale record entry: preflight %+v (err %v), want a throwaway vhost", out.Preflight, err)
	}
}

// TestPreflightCostsNothingWhenNothingIsNew: a change whose every shape
// the broker already holds (one more queue like the others) makes no
// throwaway vhost; a plan with nothing to change runs no preflight.
func TestPreflightCostsNothingWhenNothingIsNew(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	worker := func(n int) string {
		var sb strings.Builder
		sb.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n      work: { type: topic }\n    queues:\n")
		for i := range n {
			fmt.Fprintf(&sb, "      w%d: { type: quorum, arguments: { x-max-length: 1000 }, bindings: [{ exchange: work, routing_key: \"job.w%d\" }], dead_letter: { exchange: \"\", routing_key: w%d.dlq } }\n", i, i, i)
			fmt.Fprintf(&sb, "      w%d.dlq: { type: quorum }\n", i)
		}
		return sb.String()
	}
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(worker(38))}, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 38 workers, their DLQs, their bindings and the exchange: four shapes.
	if pf := out.Preflight; pf == nil || pf.Tried != 4 || pf.Objects != 1+38*3 || pf.Vhost == "" {
		t.Fatalf("the first apply's preflight: %+v, want 4 shapes tried for 115 objects", pf)
	}
	out, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(worker(39))}, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pf := out.Preflight; pf == nil || pf.Tried != 0 || pf.Vhost != "" {
		t.Errorf("a 39th worker like the others: preflight %+v, want nothing tried and no vhost made", pf)
	}
	out, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(worker(39))}, engine.ApplyOptions{})
	if err != nil || out.Preflight != nil {
		t.Errorf("an apply with nothing to do: preflight %+v, err %v", out.Preflight, err)
	}
}

// TestPreflightSweepsLeftovers: a throwaway vhost that a killed apply left
// behind (older than the grace, no connection) is deleted by the next
// apply, and the user is told; one that is younger is left alone (its
// apply may still be making its connection).
//
// The applies of other tests, in this package and in others, sweep the
// same broker. So this test's engine runs on a clock moved past the
// grace: the leftover it makes is old to that engine alone and young to
// every other apply for preflight.Grace. Should this test stall that long
// and another apply take the leftover, it starts again with a new one.
func TestPreflightSweepsLeftovers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	shift := preflight.Grace + time.Minute
	// Its sweep takes only this test's throwaway vhosts: to its clock,
	// those of the applies of other tests look left behind too.
	mine := fmt.Sprintf("-test%x-", time.Now().UnixNano())
	engine.WithClock(f.eng, func() time.Time { return time.Now().Add(shift) }, func(name string) bool { return strings.Contains(name, mine) })
	young := fmt.Sprintf("%s%d%s%s", broker.ThrowawayPrefix, time.Now().Add(2*shift).Unix(), mine, "young")
	f.throwaway(ctx, young)
	for try := 1; ; try++ {
		old := fmt.Sprintf("%s%d%s%d", broker.ThrowawayPrefix, time.Now().Unix(), mine, try)
		f.throwaway(ctx, old)
		names, err := f.c.VhostNames(ctx)
		if err != nil || slices.Contains(names, old) {
			t.Fatalf("VhostNames lists a throwaway vhost (%v): %v", err, names)
		}
		// A queue new on each try, so that each apply has a preflight.
		f.notes = nil
		src := twoQueues + fmt.Sprintf("      try-%d: {}\n", try)
		out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Preflight == nil {
			t.Fatal("the apply of a new queue ran no preflight")
		}
		_, gerr := f.c.GetVhost(ctx, old)
		if !slices.Contains(out.Preflight.Swept, old) && errors.Is(gerr, broker.ErrNotFound) {
			if try == 3 {
				t.Fatalf("%d tries: each leftover was swept by another test's apply first", try)
			}
			t.Logf("try %d: %s was swept by another test's apply first; again", try, old)
			continue
		}
		if slices.ContainsFunc(out.Preflight.Swept, func(n string) bool { return !strings.Contains(n, mine) }) {
			t.Errorf("swept %v: another apply's throwaway vhost among them", out.Preflight.Swept)
		}
		if !slices.Contains(out.Preflight.Swept, old) || slices.Contains(out.Preflight.Swept, young) {
			t.Errorf("swept %v; want %s and not %s", out.Preflight.Swept, old, young)
		}
		if !errors.Is(gerr, broker.ErrNotFound) {
			t.Errorf("the leftover %s is still there (%v)", old, gerr)
		}
		if _, err := f.c.GetVhost(ctx, young); err != nil {
			t.Errorf("the young throwaway vhost %s was deleted (%v)", young, err)
		}
		if !slices.ContainsFunc(f.notes, func(n string) bool { return strings.Contains(n, old) }) {
			t.Errorf("no note names the leftover deleted: %v", f.notes)
		}
		return
	}
}

// throwaway declares a vhost named and tagged as a preflight's, as an
// apply killed before its connection leaves it, and deletes it when the
// test ends.
func (f *fixture) throwaway(ctx context.Context, name string) {
	f.t.Helper()
	f.t.Cleanup(func() { _ = f.c.DeleteVhost(context.Background(), name) })
	if err := f.c.DeclareVhost(ctx, name, broker.VhostSettings{Tags: []string{broker.ThrowawayTag}}); err != nil {
		f.t.Fatal(err)
	}
}

// TestPreflightWithoutVhostRights: a user who may not create vhosts (no
// administrator tag) gets the apply judged from the version table alone,
// and one note that says so and why.
func TestPreflightWithoutVhostRights(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	user, pw := f.b.User(t, "management")
	f.b.Permit(t, user, f.vhost)
	c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: user, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	// Not shown the listeners, the user's AMQP port is the default one;
	// this broker's may be another.
	eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%d", f.b.AMQPHost, f.b.AMQPPort), Note: func(n string) { notes = append(notes, n) }})
	src := strings.Replace(twoQueues, "      done: {}", "      done: { arguments: { x-max-length: 5 } }", 1)
	out, err := eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{})
	if err != nil {
		t.Fatalf("apply as %s: %v", user, err)
	}
	if out.Preflight == nil || out.Preflight.Skipped == "" || out.Preflight.Vhost != "" {
		t.Fatalf("preflight %+v: want it skipped", out.Preflight)
	}
	judged := 0
	for _, n := range notes {
		if strings.Contains(n, "judged from RabbitMQ") && strings.Contains(n, "version table alone") && strings.Contains(n, user) {
			judged++
		}
	}
	if judged != 1 {
		t.Errorf("want one note that the table alone judged and why (naming %s), got %v", user, notes)
	}
	if p := f.plan(f.desired(src)); !p.Empty() {
		t.Errorf("the plan after the apply: %v", changes(p))
	}
	// The note names the tag, and how to leave the preflight out of the
	// command at hand: apply's --no-preflight, plan's --preflight (plan
	// has no --no-preflight, which its note gave; and the vhost was tried,
	// the refusal quoted).
	for _, tc := range []struct {
		name     string
		run      func() error
		how, not string
	}{
		{"apply", func() error {
			_, err := eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(strings.Replace(src, "x-max-length: 5", "x-max-length: 6", 1))}, engine.ApplyOptions{AllowReplace: true})
			return err
		}, "Pass --no-preflight to leave the preflight out", "--preflight,"},
		{"plan --preflight", func() error {
			_, err := eng.Plan(ctx, f.desired(strings.Replace(src, "x-max-length: 5", "x-max-length: 7", 1)), engine.PlanOptions{Preflight: true})
			return err
		}, "Leave out --preflight, which asks for it", "--no-preflight"},
	} {
		notes = nil
		if err := tc.run(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := fmt.Sprintf("user %q may not make the throwaway vhost to try the plan in: that takes the administrator tag. %s", user, tc.how)
		all := strings.Join(notes, "\n")
		if !strings.Contains(all, want) || strings.Contains(all, tc.not) || strings.Contains(all, "declare vhost") {
			t.Errorf("%s: notes %q\nwant one holding %s", tc.name, notes, want)
		}
	}
}

// TestPreflightInterrupted: an apply cancelled while its preflight runs
// (Ctrl-C) changes nothing and deletes its throwaway vhost. Its queues'
// x-max-length values are this run's own, so that the throwaway vhost
// found is this apply's, whatever other tests run meanwhile.
func TestPreflightInterrupted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	base := 1_000_000 + time.Now().UnixNano()%1_000_000*100
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n")
	for i := range 300 {
		fmt.Fprintf(&sb, "      q%d: { arguments: { x-max-length: %d } }\n", i, base+int64(i)) // 300 shapes
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan string, 1)
	go func() {
		for ctx.Err() == nil {
			if name := testbroker.ThrowawayHolding(f.c, base); name != "" {
				seen <- name
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(sb.String())}, engine.ApplyOptions{})
	cancel()
	var name string
	select {
	case name = <-seen:
	default:
		t.Fatalf("no throwaway vhost holding this test's queues was seen (apply: %v)", err)
	}
	if err == nil {
		t.Fatalf("the apply was not interrupted")
	}
	if _, gerr := f.c.GetVhost(context.Background(), name); !errors.Is(gerr, broker.ErrNotFound) {
		t.Errorf("the throwaway vhost %s is still there after the interrupted apply (%v)", name, gerr)
	}
	if out != nil && out.Result == nil {
		if p := f.plan(f.desired(sb.String())); len(p.Changes) != 300 {
			t.Errorf("an apply interrupted in its preflight changed the broker: %d changes left", len(p.Changes))
		}
	}
}
