package engine

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// limitedLive is vhost v of a broker holding held queues (a, b, …) and
// max-queues limit (none for 0).
func limitedLive(limit int64, held int) *topology.Live {
	st := topology.New()
	v := st.Vhost("v")
	for i := range held {
		name := string(rune('a' + i))
		v.Queues[name] = &topology.Queue{Name: name, Durable: true}
	}
	if limit != 0 {
		v.Items.Put(&topology.Item{Kind: kind.VhostLimits, Name: "v", Settings: topology.Args{"max-queues": limit}})
	}
	return &topology.Live{State: st}
}

// queueChange is change a of queue name in vhost v.
func queueChange(a plan.Action, name string) plan.Change {
	return plan.Change{Action: a, Kind: kind.Queue, Vhost: "v", Name: name}
}

// TestCheckVhostLimits: the places a vhost's max-queues leaves are counted
// against the queues held, the deletes, the declarations and the apply's
// lock queue, under the limit the apply writes before the declarations.
func TestCheckVhostLimits(t *testing.T) {
	limits := func(have, want int64) plan.Change {
		obj := func(n int64) plan.ItemObject {
			return plan.ItemObject{Item: &topology.Item{Kind: kind.VhostLimits, Name: "v", Settings: topology.Args{"max-queues": n}}}
		}
		return plan.Change{Action: plan.Update, Kind: kind.VhostLimits, Vhost: "v", Name: "v", Before: obj(have), After: obj(want)}
	}
	for _, c := range []struct {
		name    string
		live    *topology.Live
		changes []plan.Change
		refused string // in the error; "" for none
	}{
		{"room for the declarations and the lock", limitedLive(4, 1), []plan.Change{queueChange(plan.Create, "x"), queueChange(plan.Create, "y")}, ""},
		{"one place short", limitedLive(3, 1), []plan.Change{queueChange(plan.Create, "x"), queueChange(plan.Create, "y")}, "declares 2 and holds its lock queue (mqctl.lock), 4 in all"},
		{"deletes make room first", limitedLive(3, 2), []plan.Change{queueChange(plan.Delete, "a"), queueChange(plan.Create, "x")}, ""},
		{"the file raises the limit first", limitedLive(3, 1), []plan.Change{limits(3, 10), queueChange(plan.Create, "x"), queueChange(plan.Create, "y")}, ""},
		{"the file lifts the limit first", limitedLive(3, 1), []plan.Change{limits(3, -1), queueChange(plan.Create, "x"), queueChange(plan.Create, "y")}, ""},
		{"the file lowers it after", limitedLive(3, 1), []plan.Change{limits(3, 2), queueChange(plan.Create, "x"), queueChange(plan.Create, "y")}, "limits itself to 3"},
		{"no room for the lock", limitedLive(2, 2), []plan.Change{{Action: plan.Create, Kind: kind.Exchange, Vhost: "v", Name: "x"}}, "the apply's lock is a queue of the vhost"},
		{"no limit", limitedLive(0, 9), []plan.Change{queueChange(plan.Create, "x")}, ""},
		{"no connection allowed", func() *topology.Live {
			l := limitedLive(0, 0)
			l.State.Vhosts["v"].Items.Put(&topology.Item{Kind: kind.VhostLimits, Name: "v", Settings: topology.Args{"max-connections": int64(0)}})
			return l
		}(), []plan.Change{{Action: plan.Create, Kind: kind.Exchange, Vhost: "v", Name: "x"}}, "the vhost accepts no connection (max-connections: 0)"},
		{"a vhost the apply creates", limitedLive(0, 0), []plan.Change{{Action: plan.Create, Kind: kind.Queue, Vhost: "new", Name: "x"}}, ""},
		// A file that writes max-connections: 0 (on a vhost it creates,
		// or one it has): the apply took its lock and wrote it last, and
		// every apply after was refused ("raise max-connections on the
		// broker first"). Refused before anything changes, as max-queues
		// without room for the lock.
		{"the file shuts its new vhost", limitedLive(0, 0), []plan.Change{
			{Action: plan.Create, Kind: kind.Vhost, Vhost: "new", Name: "new"},
			{Action: plan.Create, Kind: kind.VhostLimits, Vhost: "new", Name: "new", After: plan.ItemObject{Item: &topology.Item{Kind: kind.VhostLimits, Name: "new", Settings: topology.Args{"max-connections": int64(0)}}}}},
			"the file limits the vhost to 0 connections (max-connections: 0)"},
		{"the file shuts its vhost", limitedLive(0, 0), []plan.Change{
			{Action: plan.Update, Kind: kind.VhostLimits, Vhost: "v", Name: "v", After: plan.ItemObject{Item: &topology.Item{Kind: kind.VhostLimits, Name: "v", Settings: topology.Args{"max-connections": int64(0)}}}}},
			"the file limits the vhost to 0 connections (max-connections: 0)"},
		{"a connection limit of 1", limitedLive(0, 0), []plan.Change{
			{Action: plan.Update, Kind: kind.VhostLimits, Vhost: "v", Name: "v", After: plan.ItemObject{Item: &topology.Item{Kind: kind.VhostLimits, Name: "v", Settings: topology.Args{"max-connections": int64(1)}}}}},
			""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkVhostLimits(&plan.Plan{Changes: c.changes}, c.live, rmqversion.Default)
			switch {
			case c.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
				t.Errorf("got %v, want a refusal saying %q", err, c.refused)
			}
		})
	}
}

// TestDeleteQueuesFirst: a vhost's queue deletes run before the apply's
// declarations only where its max-queues has room for them, beside the
// queues it holds and the apply's lock, once the deleted ones are gone
// (otherwise after them: make before break), and the user is told why.
func TestDeleteQueuesFirst(t *testing.T) {
	raise := plan.Change{Action: plan.Update, Kind: kind.VhostLimits, Vhost: "v", Name: "v",
		Before: plan.ItemObject{Item: &topology.Item{Kind: kind.VhostLimits, Name: "v", Settings: topology.Args{"max-queues": int64(3)}}},
		After:  plan.ItemObject{Item: &topology.Item{Kind: kind.VhostLimits, Name: "v", Settings: topology.Args{"max-queues": int64(10)}}}}
	for _, c := range []struct {
		name    string
		live    *topology.Live
		changes []plan.Change
		first   bool
		note    string
	}{
		{"room for both", limitedLive(4, 2), []plan.Change{queueChange(plan.Delete, "a"), queueChange(plan.Create, "x")}, false, ""},
		{"room once the deleted one is gone", limitedLive(3, 2), []plan.Change{queueChange(plan.Delete, "a"), queueChange(plan.Create, "x")}, true,
			`vhost "v": apply deletes the queues the plan drops before it declares the new ones, not after: the vhost's max-queues (3) has no room for both, and a message routed to a deleted queue meanwhile goes nowhere (raise max-queues to at least 4 to keep both until the new ones are bound)`},
		{"nothing declared", limitedLive(2, 2), []plan.Change{queueChange(plan.Delete, "a")}, false, ""},
		{"the file raises the limit first", limitedLive(3, 2), []plan.Change{raise, queueChange(plan.Delete, "a"), queueChange(plan.Create, "x")}, false, ""},
		{"no limit", limitedLive(0, 9), []plan.Change{queueChange(plan.Delete, "a"), queueChange(plan.Create, "x")}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var notes []string
			e := &Engine{opts: Options{Note: func(n string) { notes = append(notes, n) }}}
			p := &plan.Plan{Changes: c.changes}
			e.deleteQueuesFirst(p, c.live)
			if got := len(p.QueuesDeletedFirst) == 1 && p.QueuesDeletedFirst[0] == "v"; got != c.first || len(p.QueuesDeletedFirst) > 1 {
				t.Errorf("QueuesDeletedFirst = %q, want v there: %t", p.QueuesDeletedFirst, c.first)
			}
			if got := strings.Join(notes, "\n"); got != c.note {
				t.Errorf("notes:\n%s\nwant:\n%s", got, c.note)
			}
		})
	}
}
