package flow

import (
	"fmt"
	"io"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/route"
)

// deadLetterQueues are n queues' dead letters (rejected and expired) that
// each went to the queue's own DLQ and now reach every DLQ (make bench's
// replace plan's), those of every third queue lost, and those of every
// fifth expiring elsewhere than its rejected ones go.
func deadLetterQueues(n int) []DeadLetter {
	all := make([]string, n)
	for i := range all {
		all[i] = fmt.Sprintf("q%05d.dlq", i)
	}
	var out []DeadLetter
	for i := range n {
		q := fmt.Sprintf("q%05d", i)
		for _, r := range []Reason{route.Rejected, route.Expired} {
			after := &DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: q, Queues: all}
			if r == route.Expired && i%5 == 0 {
				after = &DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: q + ".late", Queues: all[:1]}
			}
			out = append(out, DeadLetter{Vhost: "v", Queue: q, Reason: r, PerMessageTTL: r == route.Expired, Loses: i%3 == 0,
				Before: &DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: q, Queues: all[i : i+1]}, After: after})
		}
	}
	return out
}

// TestDeadLetterEntriesByQueue: the dead letters' entries, made a queue at
// a time where they go by queue, are those made of them all at once,
// ordered as the views order them (those that lose messages first); where
// they do not go by queue (not in d's order, or of new queues), they are
// made at once, as before.
func TestDeadLetterEntriesByQueue(t *testing.T) {
	ranked := func(dls []DeadLetter) []entry {
		es := deadLetterEntries(dls)
		slices.SortStableFunc(es, func(a, b entry) int { return entryRank(a) - entryRank(b) })
		return es
	}
	sorted := deadLetterQueues(30)
	shuffled := slices.Clone(sorted)
	shuffled[1], shuffled[40] = shuffled[40], shuffled[1]
	newQueues := slices.Clone(sorted)
	for i := range newQueues[:10] {
		newQueues[i].NewQueue, newQueues[i].Reason, newQueues[i].Before = true, route.MaxLen, nil
	}
	for name, c := range map[string]struct {
		dls     []DeadLetter
		byQueue bool
	}{"by queue": {sorted, true}, "not in order": {shuffled, false}, "new queues": {newQueues, false}} {
		if got := deadLettersByQueue(c.dls); got != c.byQueue {
			t.Errorf("%s: deadLettersByQueue = %v", name, got)
		}
		d := &Diff{DeadLetters: c.dls}
		if got, want := d.entries(), ranked(c.dls); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: entries\n%v\nwant\n%v", name, got, want)
		}
	}
}

// TestWriteTextHoldsOneQueuesDeadLetters: the text of a diff holds the
// entries of one queue's dead letters at a time, not all of them (at
// 50,000 queues, 11 MB held while the plan is shown beside the rest of
// apply PLANFILE's plan and the broker's state), and counts them alike.
func TestWriteTextHoldsOneQueuesDeadLetters(t *testing.T) {
	d := &Diff{DeadLetters: deadLetterQueues(4000)}
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	w := &heapWriter{}
	if err := WriteText(w, d, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	held := w.max - base.HeapAlloc
	// All the entries at once: some 400 bytes each, a third of them lost.
	all := uint64(len(deadLetterEntries(d.DeadLetters))) * 400
	t.Logf("writing %d bytes of text held %d bytes at most; the entries at once, some %d", w.n, held, all)
	if held > all/4 {
		t.Errorf("writing the text held %d bytes beside the diff; all its entries at once are some %d", held, all)
	}
	runtime.KeepAlive(d)
}

// heapWriter takes text, measuring the heap held (after a collection)
// every 64 writes: max is the most.
type heapWriter struct {
	n, writes int
	max       uint64
}

func (w *heapWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.writes++; w.writes%64 == 1 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		w.max = max(w.max, ms.HeapAlloc)
	}
	return io.Discard.Write(p)
}
