package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/faultproxy"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestGuardStopsApply: when the guard reports the apply lock lost, apply
// starts no further step, says why, and leaves the ownership record as it
// was: another apply may be writing it. The next plan adopts what was
// done (it matches the file) and creates the rest, and a re-run
// converges.
func TestGuardStopsApply(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	p, recs, live := e.plan(faultFile)
	lost := errors.New("the apply lock of vhost was lost")
	var done atomic.Int32
	res := apply.Execute(context.Background(), e.direct, p, apply.Options{
		Parallelism: 1, Records: recs, PropertiesKey: live.PropertiesKey,
		Current:  func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
		Progress: func(apply.Event) { done.Add(1) },
		Guard: func() error {
			if done.Load() >= 3 {
				return lost
			}
			return nil
		},
	})
	if !errors.Is(res.Stopped, lost) || res.OK() {
		t.Fatalf("Stopped = %v, OK = %v; want the guard's error", res.Stopped, res.OK())
	}
	if len(res.Done) == 0 || len(res.Remaining) == 0 || len(res.Failed) != 0 || res.RecordErr != nil {
		t.Errorf("done %d, remaining %d, failed %d, record %v: want some done, the rest not started, none failed, no record written", len(res.Done), len(res.Remaining), len(res.Failed), res.RecordErr)
	}
	again, _, _ := e.plan(faultFile)
	if n := len(again.Changes); n != len(res.Remaining) {
		t.Errorf("after the stop, the plan has %d changes, want the %d steps not done", n, len(res.Remaining))
	}
	for _, c := range again.Changes {
		if c.Action != plan.Create {
			t.Errorf("unexpected %s %s %s after a stopped apply", c.Action, c.Kind, c.Name)
		}
	}
	if len(again.Adopt) != len(res.Done) {
		t.Errorf("the record was written after the stop: the next plan adopts %v, want the %d objects done", again.Adopt, len(res.Done))
	}
	if res := e.apply(faultFile); !res.OK() {
		t.Fatalf("re-run: %+v", res)
	}
	e.converged(faultFile)
}

// guardFile has three queues and four policies: the first plan creates
// them, a plan of guardEmpty deletes them.
const guardFile = `
version: 1
vhosts:
  ${VHOST}:
    queues:
      q1: {}
      q2: {}
      q3: {}
    policies:
      p1: { pattern: "^q1$", apply_to: queues, definition: { max-length: 10 } }
      p2: { pattern: "^q2$", apply_to: queues, definition: { max-length: 20 } }
      p3: { pattern: "^q3$", apply_to: queues, definition: { max-length: 30 } }
      p4: { pattern: "^q4$", apply_to: queues, definition: { max-length: 40 } }
`

const guardEmpty = `
version: 1
vhosts:
  ${VHOST}: {}
`

// Once the guard says no, no request that changes anything goes out, not
// only between phases or before a step starts: a step already under way
// makes no further request (a queue delete whose lock is lost while it
// checks the queue: the delete is not sent), and steps already handed to
// a worker but waiting there (policies, which a vhost writes one at a
// time) are dropped. Those steps are not done, not failed, and the
// record is left alone. Before, every step that had started went through
// (an apply stopped with Ctrl-Z finished them once resumed, 35 s late,
// while another apply held the lock).
func TestGuardStopsStepsUnderWay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// before is applied first; then the plan of after runs, the
		// guard saying no from the moment lose is called.
		before, after string
		// hooks puts lose where the guard must turn.
		hooks func(o *apply.Options, lose func())
		// done is how many steps are done; left, the queues and policies
		// the broker still has.
		done int
		left []string
	}{
		{
			name: "a queue delete checking its queue", before: guardFile, after: guardEmpty,
			hooks: func(o *apply.Options, lose func()) {
				o.Inspect = func(context.Context, string, string, string) (lock.QueueState, error) {
					lose()
					return lock.QueueState{Exists: true}, nil
				}
				o.Parallelism = 3
			},
			// Nothing is written: the policies go first, the queues
			// after them (kind.Spec.LateDeletePhase), and no queue
			// delete goes through once the guard says no.
			done: 4,
			left: []string{"queue q1", "queue q2", "queue q3"},
		},
		{
			name: "policies waiting for the one before", before: guardEmpty, after: guardFile,
			hooks: func(o *apply.Options, lose func()) {
				o.Progress = func(ev apply.Event) {
					if ev.Step.Kind() == kind.Policy {
						lose()
					}
				}
				o.Parallelism = 8
			},
			done: 4, // the queues, and the first policy
			left: []string{"policy p?", "queue q1", "queue q2", "queue q3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newFaultEnv(t)
			if res := e.apply(tc.before); !res.OK() {
				t.Fatalf("first apply: %+v", res)
			}
			p, recs, live := e.plan(tc.after)
			var lost atomic.Bool
			stop := errors.New("the apply lock was lost")
			opts := apply.Options{
				Records: recs, PropertiesKey: live.PropertiesKey,
				Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
				Guard: func() error {
					if lost.Load() {
						return stop
					}
					return nil
				},
			}
			tc.hooks(&opts, func() { lost.Store(true) })
			records := recordNames(t, e)
			res := apply.Execute(context.Background(), e.faulty, p, opts)
			if !errors.Is(res.Stopped, stop) || len(res.Failed) != 0 || res.RecordErr != nil {
				t.Fatalf("Stopped %v, failed %v, record %v: want the guard's error, no failure, no record written", res.Stopped, res.Failed, res.RecordErr)
			}
			if len(res.Done) != tc.done || len(res.Done)+len(res.Remaining) != len(p.Changes) {
				t.Errorf("done %d, not done %d of %d steps; want %d done, the rest not done", len(res.Done), len(res.Remaining), len(p.Changes), tc.done)
			}
			if got := strings.Join(left(t, e), ", "); !matchNames(got, tc.left) {
				t.Errorf("the broker has %s, want %s", got, strings.Join(tc.left, ", "))
			}
			if got := recordNames(t, e); got != records {
				t.Errorf("the ownership record changed after the guard said no: %s, then %s", records, got)
			}
		})
	}
}

// left lists the queues and policies of the test vhost: "queue q1",
// "policy p1", sorted.
func left(t *testing.T, e *faultEnv) []string {
	t.Helper()
	var out []string
	for _, k := range []string{"queues", "policies"} {
		var rows []struct{ Name string }
		if err := json.Unmarshal(e.b.GetAPI(t, k+"/"+url.PathEscape(e.vhost)), &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if k == "queues" {
				out = append(out, "queue "+r.Name)
			} else {
				out = append(out, "policy "+r.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// matchNames: got, comma-separated, is want, where "p?" stands for any
// one policy.
func matchNames(got string, want []string) bool {
	g := strings.Split(got, ", ")
	if len(g) != len(want) {
		return false
	}
	for i := range g {
		if w := want[i]; w != g[i] && (w != "policy p?" || !strings.HasPrefix(g[i], "policy p")) {
			return false
		}
	}
	return true
}

// recordNames lists the test vhost's ownership record exchanges, with
// their arguments.
func recordNames(t *testing.T, e *faultEnv) string {
	t.Helper()
	var rows []struct {
		Name      string
		Arguments map[string]any
	}
	if err := json.Unmarshal(e.b.GetAPI(t, "exchanges/"+url.PathEscape(e.vhost)), &rows); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "mqctl.") {
			out = append(out, fmt.Sprintf("%s %v", r.Name, r.Arguments))
		}
	}
	return strings.Join(out, "; ")
}

// An operator closes the apply lock's connection (DELETE
// /api/connections/…, as the lock's error advises to break a lock) while
// a queue delete checks its queue: the delete is not sent, nor is any
// later write, and the apply stops saying the lock was lost. The lock's
// Check asks the broker at every call here (ConfirmEvery -1): its
// reader may not have seen the close yet when the next write comes, as
// in a process woken up after a pause (by default it asks once its last
// answer is a second old).
func TestLockClosedStopsApply(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	if res := e.apply(guardFile); !res.OK() {
		t.Fatalf("first apply: %+v", res)
	}
	p, recs, live := e.plan(guardEmpty)
	ctx := context.Background()
	name := testbroker.Name(t, "apply")
	lk, err := lock.Acquire(ctx, e.vhost, lock.Options{URL: e.b.AMQPURL(""), Name: name, ConfirmEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	var closed sync.Once
	records := recordNames(t, e)
	res := apply.Execute(ctx, e.faulty, p, apply.Options{
		Parallelism: 1, Records: recs, PropertiesKey: live.PropertiesKey,
		Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
		Guard:   lk.Check,
		Inspect: func(context.Context, string, string, string) (lock.QueueState, error) {
			closed.Do(func() { e.b.CloseConnection(t, name) })
			return lock.QueueState{Exists: true}, nil
		},
	})
	if !errors.Is(res.Stopped, lock.ErrLost) || !strings.Contains(res.Stopped.Error(), "its AMQP connection to") || len(res.Failed) != 0 || res.RecordErr != nil {
		t.Fatalf("Stopped %v, failed %v, record %v: want the lost lock, no failure, no record written", res.Stopped, res.Failed, res.RecordErr)
	}
	// The lock's own queue (exclusive) goes with its connection, which
	// the broker deletes a moment after the close: it is not counted.
	have := slices.DeleteFunc(left(t, e), func(o string) bool { return o == "queue "+lock.QueueName })
	// Nothing is written: the policies' deletes go first, the queues'
	// after them (kind.Spec.LateDeletePhase), and none goes through once
	// the lock is lost.
	if got, want := strings.Join(have, ", "), "queue q1, queue q2, queue q3"; got != want {
		t.Errorf("the broker has %s, want %s: no queue deleted once the lock was lost", got, want)
	}
	if len(res.Done) != 4 || len(res.Remaining) != 3 {
		t.Errorf("done %v, not done %v: want the 4 policies done, the 3 queues not", res.Done, res.Remaining)
	}
	if got := recordNames(t, e); got != records {
		t.Errorf("the ownership record changed after the lock was lost: %s, then %s", records, got)
	}
	// Another apply can take the lock: which is why nothing may change.
	second, err := lock.Acquire(ctx, e.vhost, lock.Options{URL: e.b.AMQPURL(""), Name: "second apply"})
	if err != nil {
		t.Fatalf("a second apply could not take the lock: %v", err)
	}
	second.Release()
}

// A step under way for apply.LateAfter or more (as after a pause of the
// process) is followed by one more ask of the guard; when that says no,
// the stop names the step as done, and says when it was made: before the
// lock was lost when its request went out at once after the guard's yes
// (only its answer came late: the pause came while it was awaited), maybe
// after when the request went out LateAfter or more after that yes (the
// pause came in between).
func TestLateStepIsNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// answerLate delays the broker's answer to the declaration;
		// else the guard's yes right before the declaration goes out.
		answerLate bool
		want       string
	}{
		{"answer late", true,
			`1 step done had been under way for %s or more when that was found: it was made before it (its requests went out at once, before the pause; only the answers came late): declare queue "slow"`},
		{"request late", false,
			`1 step done had been under way for %s or more when that was found: it may have been made after it (a request of it went out %[1]s or more after the lock was last checked, across the pause): declare queue "slow"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newFaultEnv(t)
			c, err := broker.Connect(context.Background(), broker.Config{Server: e.proxy.URL, Username: e.b.Username, Password: e.b.Password, Timeout: apply.LateAfter + 30*time.Second})
			if err != nil {
				t.Fatal(err)
			}
			const file = "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      slow: {}\n"
			p, recs, live := e.plan(file)
			put := faultproxy.Method("queues/", http.MethodPut)
			if tc.answerLate {
				e.proxy.Add(faultproxy.Rule{Match: put, Times: 1, Fault: faultproxy.Delay, Delay: apply.LateAfter + 500*time.Millisecond})
			}
			stop := errors.New("the apply lock was lost")
			sent := func() bool {
				return e.proxy.Count(func(en faultproxy.Entry) bool {
					return en.Method == http.MethodPut && strings.HasPrefix(en.Path, "queues/")
				}) > 0
			}
			res := apply.Execute(context.Background(), c, p, apply.Options{
				Parallelism: 1, Records: recs, PropertiesKey: live.PropertiesKey,
				Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
				// The lock is lost once the declaration has reached the
				// broker; the guard's yes to the declaration itself (asked
				// by the broker client) takes as long as a pause.
				Guard: func() error {
					if sent() {
						return stop
					}
					if !tc.answerLate && strings.Contains(string(debug.Stack()), "broker.guardWrite") {
						time.Sleep(apply.LateAfter + 500*time.Millisecond)
					}
					return nil
				},
			})
			if !errors.Is(res.Stopped, stop) || len(res.Done) != 1 || len(res.Failed) != 0 {
				t.Fatalf("Stopped %v, done %v, failed %v: want the guard's error and the step done", res.Stopped, res.Done, res.Failed)
			}
			if want := fmt.Sprintf(tc.want, apply.LateAfter); !strings.Contains(res.Stopped.Error(), want) {
				t.Errorf("Stopped = %v\nwant it to say %s", res.Stopped, want)
			}
		})
	}
}
