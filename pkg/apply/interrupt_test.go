package apply_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/brokerstate"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
)

const interruptBefore = `
version: 1
vhosts:
  ${VHOST}:
    exchanges:
      x1: { type: direct }
      x2: { type: direct }
      x3: { type: direct }
      x4: { type: direct }
`

// theirs is a queue mqctl does not manage, bound to every exchange of the
// file: its bindings are in no file, only the replaces' plan lists them.
const interruptTheirs = `
version: 1
vhosts:
  ${VHOST}:
    queues:
      theirs: {}
    bindings:
      - { source: x1, destination: theirs, destination_type: queue, routing_key: t }
      - { source: x2, destination: theirs, destination_type: queue, routing_key: t }
      - { source: x3, destination: theirs, destination_type: queue, routing_key: t }
      - { source: x4, destination: theirs, destination_type: queue, routing_key: t }
`

// An apply interrupted (Ctrl-C) between a replace's two halves finishes
// the replaces under way: the exchanges it deleted are declared again and
// the bindings they took down come back, those of a queue the file does
// not name included, and no other step starts; once those were all that
// was left, the apply is complete. Before, it stopped after the deletes:
// the next plan declared the exchanges again but could not know the other
// team's bindings, which were gone for good while apply said "nothing was
// lost" (found by the third live hunt: 300 exchanges replaced, Ctrl-C,
// 175 bindings of an unmanaged queue lost).
func TestInterruptFinishesReplacesUnderWay(t *testing.T) {
	for _, tc := range []struct {
		name string
		// after is how many deletes are done when Ctrl-C comes.
		after       int
		done, left  int
		interrupted bool
	}{
		{name: "after the first delete", after: 1, done: 3, left: 9, interrupted: true},
		{name: "after the last delete", after: 4, done: 12, left: 0, interrupted: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			interruptReplaces(t, tc.after, tc.done, tc.left, tc.interrupted)
		})
	}
}

func interruptReplaces(t *testing.T, after, wantDone, wantLeft int, wantInterrupted bool) {
	e := newFaultEnv(t)
	if res := e.apply(interruptBefore); !res.OK() {
		t.Fatalf("first apply: %+v", res)
	}
	theirs, err := loader.LoadBytes("theirs.yaml", []byte(interruptTheirs), loader.Options{LookupEnv: func(k string) (string, bool) {
		return e.vhost, k == "VHOST"
	}})
	if err != nil {
		t.Fatal(err)
	}
	testbroker.Declare(t, e.direct, e.vhost, theirs.Vhosts[e.vhost])

	file := strings.ReplaceAll(interruptBefore, "direct", "topic")
	p, recs, live := e.plan(file)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deletes := 0
	res := apply.Execute(ctx, e.direct, p, apply.Options{
		Parallelism: 1, AllowReplace: true, Records: recs, PropertiesKey: live.PropertiesKey,
		Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
		Progress: func(ev apply.Event) {
			if ev.Step.Delete {
				if deletes++; deletes == after {
					cancel() // Ctrl-C
				}
			}
		},
	})
	if res.Interrupted != wantInterrupted {
		t.Errorf("interrupted: %v, want %v", res.Interrupted, wantInterrupted)
	}
	if len(res.Done) != wantDone {
		var ops []string
		for _, s := range res.Done {
			ops = append(ops, s.String())
		}
		sort.Strings(ops)
		t.Errorf("done: %q; want %d steps (each exchange deleted, declared again and its binding restored)", ops, wantDone)
	}
	for _, f := range res.Failed {
		t.Errorf("failed: %s: %v", f.Step, f.Err)
	}
	if len(res.Remaining) != wantLeft {
		t.Errorf("%d steps not done, want %d (the replaces not begun)", len(res.Remaining), wantLeft)
	}

	var bindings []struct {
		Source string `json:"source"`
	}
	raw := e.b.GetAPI(t, "queues/"+url.PathEscape(e.vhost)+"/theirs/bindings")
	if err := json.Unmarshal(raw, &bindings); err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, b := range bindings {
		sources = append(sources, b.Source)
	}
	sort.Strings(sources)
	if got, want := strings.Join(sources, ","), ",x1,x2,x3,x4"; got != want {
		t.Errorf("queue theirs is bound from %q, want %q (the default exchange and every exchange, the replaced ones again)", got, want)
	}

	// A re-run converges.
	p, recs, live = e.plan(file)
	if res := apply.Execute(context.Background(), e.direct, p, apply.Options{
		Parallelism: 4, AllowReplace: true, Records: recs, PropertiesKey: live.PropertiesKey,
		Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
	}); !res.OK() {
		t.Fatalf("second apply: %+v", res)
	}
	e.converged(file)
}

const cutDeleteFile = `
version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: topic }
    queues:
      q: { bindings: [{ exchange: ex, routing_key: a.# }] }
`

// An apply killed (or timed out, or cut from the network) while the
// broker deleted an exchange, the first half of its replace, leaves the
// broker's mark that the delete is in progress (the runtime parameter
// exchange-delete-in-progress/NAME, which the delete clears only when it
// ends, and the management API ends a request whose client went away),
// and RabbitMQ then answers every declaration of that exchange as done
// and declares nothing (3.10.8, 4.0.5 and 4.3.6 alike). The next apply
// declares the exchange again: it must clear the mark first. Before, its
// "declare exchange" was done and every binding on it failed with
// "exchange or queue does not exist: declare both ends of the binding
// (MQ401)", at that apply and every one after (found by killing apply -9
// at random points of an exchange's replace on 4.3.6: the resume never
// converged). The mark is set here as the broker sets it, so that the
// test does not depend on where a kill lands; declared through the
// management API and over AMQP (bulk declares). A user without the
// policymaker tag may not list or clear the mark (the management API
// answers 401): its apply finds the exchange absent after declaring it,
// and clears the mark with an exchange.delete of the absent exchange,
// which takes configure on it alone (before, its apply failed at the
// exchange's bindings, telling it to declare both ends, at every apply).
func TestDeclareAfterACutOffDelete(t *testing.T) {
	for _, tc := range []struct {
		name string
		bulk int
		user bool // applied by a user with the management tag alone
	}{
		{name: "management API", bulk: -1},
		{name: "AMQP", bulk: 1},
		{name: "management API, no policymaker tag", bulk: -1, user: true},
		{name: "AMQP, no policymaker tag", bulk: 1, user: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFaultEnv(t)
			c := e.direct
			if tc.user {
				user, pw := e.b.User(t, "management")
				e.b.Permit(t, user, e.vhost)
				var err error
				c, err = broker.Connect(context.Background(), broker.Config{Server: e.b.URL, Username: user, Password: pw,
					AMQPURL: fmt.Sprintf("amqp://%s:%d", e.b.AMQPHost, e.b.AMQPPort)})
				if err != nil {
					t.Fatal(err)
				}
			}
			before := strings.ReplaceAll(cutDeleteFile, "topic", "direct")
			if res := e.apply(before); !res.OK() {
				t.Fatalf("first apply: %+v", res)
			}
			// The replace to a topic exchange was killed during the
			// delete of ex: gone, and marked as being deleted.
			vh := url.PathEscape(e.vhost)
			for _, r := range []struct{ method, path, body string }{
				{http.MethodDelete, "exchanges/" + vh + "/ex", ""},
				{http.MethodPut, "parameters/exchange-delete-in-progress/" + vh + "/ex", `{"value": true}`},
			} {
				var body []byte
				if r.body != "" {
					body = []byte(r.body)
				}
				if status, answer, err := e.b.API(r.method, r.path, body); err != nil || status/100 != 2 {
					t.Fatalf("%s %s: %d %v %s", r.method, r.path, status, err, answer)
				}
			}
			p, recs, live := e.plan(cutDeleteFile)
			res := apply.Execute(context.Background(), c, p, apply.Options{
				Parallelism: 4, Records: recs, PropertiesKey: live.PropertiesKey, BulkDeclares: tc.bulk,
				Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
			})
			for _, f := range res.Failed {
				t.Errorf("failed: %s: %v", f.Step, f.Err)
			}
			if !res.OK() {
				t.Fatalf("the apply after the cut-off delete did not finish: %+v", res)
			}
			var x struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(e.b.GetAPI(t, "exchanges/"+vh+"/ex"), &x); err != nil || x.Type != "topic" {
				t.Errorf("exchange ex: type %q (%v), want topic", x.Type, err)
			}
			e.converged(cutDeleteFile)
		})
	}
}

// What the next apply cannot tell from the broker is recorded as soon as
// it is done, not when the apply ends: a vhost apply creates (an existing
// vhost is never adopted: an apply killed before it wrote its record left
// mqctl believing the vhost was there before it, for good), and a shovel
// that deletes itself once done (unrecorded, it is gone by the time the
// next apply looks, which created it again: it moved its source's
// messages a second time). Found by killing apply -9 after it created a
// vhost, on 4.3.6. Here the management API is cut right after that step,
// as a kill would leave it: the record written when the apply ends never
// is.
func TestRecordedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		create bool // the apply creates the vhost
		file   string
		step   string // the step after which the broker is cut off
		want   string // the record's entry
	}{
		{name: "a vhost apply creates", create: true, step: "create vhost", want: "vhost ",
			file: "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      q1: {}\n      q2: {}\n"},
		{name: "a shovel that deletes itself", step: "write shovel", want: "shovel replay",
			file: `version: 1
vhosts:
  ${VHOST}:
    queues:
      replay.src: {}
      replay.dst: {}
    shovels:
      replay: { src-uri: "amqp:///${VHOST}", src-queue: replay.src, dest-uri: "amqp:///${VHOST}", dest-queue: replay.dst, src-delete-after: queue-length }
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFaultEnv(t)
			if tc.create {
				if status, body, err := e.b.API(http.MethodDelete, "vhosts/"+url.PathEscape(e.vhost), nil); err != nil || status/100 != 2 {
					t.Fatalf("delete the vhost for apply to create: %d %v %s", status, err, body)
				}
			}
			p, recs, live := e.plan(tc.file)
			res := apply.Execute(context.Background(), e.faulty, p, apply.Options{
				Parallelism: 1, Records: recs, PropertiesKey: live.PropertiesKey,
				Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
				Progress: func(ev apply.Event) {
					if ev.Err == nil && strings.HasPrefix(ev.Step.String(), tc.step) {
						e.proxy.Cut() // kill -9
					}
				},
			})
			if len(res.Done) == 0 {
				t.Fatalf("nothing was done: %+v", res)
			}
			_, rec, err := brokerstate.Read(context.Background(), e.direct, e.vhost)
			if err != nil {
				t.Fatal(err)
			}
			var entries []string
			if rec != nil {
				for ref := range rec.Managed {
					entries = append(entries, string(ref.Kind)+" "+ref.Name)
				}
			}
			sort.Strings(entries)
			found := false
			for _, en := range entries {
				found = found || strings.HasPrefix(en, tc.want)
			}
			if !found {
				t.Errorf("the record lists %q, want an entry %q", entries, tc.want)
			}
		})
	}
}
