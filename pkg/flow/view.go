package flow

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// An entry of the views: one line of what happens to some messages, with
// why when they are lost.
type entry struct {
	vhost string
	// queue is the queue the entry is about, "" where it is about
	// others too (a route, a link): the object a mark names
	// (TextOptions.Marks).
	queue string
	loses bool
	// unknown: they may be lost, mqctl cannot tell (cause says why).
	unknown bool
	what    string // what the messages are: `key "order.shipped" on exchange "orders"`
	was     string // where they went before
	now     string // where they go after
	cause   string
}

// entries are d's changes as the views show them: those that lose
// messages first, each group in d's order (eachEntry).
func (d *Diff) entries() []entry {
	var out []entry
	d.eachEntry(func(e entry) { out = append(out, e) })
	return out
}

// eachEntry gives f d's entries in the order the views show them: those
// that lose messages first, then those that may, then the others, each
// group in d's order (routes, dead letters, delay tiers, silenced,
// expiring, refusing, trimming queues, links). The dead letters, an entry
// or more for every queue that dead-letters (at 50,000 queues, 11 MB of
// entries held at once), are made a queue at a time, for each group,
// where they go by queue (deadLetterRuns): none of them is held beside
// the others.
func (d *Diff) eachEntry(f func(entry)) {
	lists := [][]entry{d.routeEntries(), nil, delayTierEntries(d.DelayTiers), silencedEntries(d.Silenced), expiringEntries(d.Expiring),
		refusingEntries(d.Refusing), trimmingEntries(d.Trimming), linkEntries(d.Links)}
	const deadLetters = 1
	byQueue := deadLettersByQueue(d.DeadLetters)
	if !byQueue {
		lists[deadLetters] = deadLetterEntries(d.DeadLetters)
	}
	for rank := range 3 {
		for i, l := range lists {
			if i == deadLetters && byQueue {
				for run := range deadLetterRuns(d.DeadLetters) {
					eachOfRank(deadLetterEntries(run), rank, f)
				}
				continue
			}
			eachOfRank(l, rank, f)
		}
	}
}

// eachOfRank gives f the entries of es of rank (entryRank).
func eachOfRank(es []entry, rank int, f func(entry)) {
	for _, e := range es {
		if entryRank(e) == rank {
			f(e)
		}
	}
}

// entryRank orders the entries: those that lose messages first, then
// those that may, then the others.
func entryRank(e entry) int {
	switch {
	case e.loses:
		return 0
	case e.unknown:
		return 1
	}
	return 2
}

// deadLettersByQueue reports whether deadLetterEntries of dls is that of
// each run of its dead letters of one queue (deadLetterRuns), one after
// the other: none is of a new queue (whose entry names every new queue
// whose dead letters go alike), the dead letters of each queue are
// together (d's order, by vhost and queue), and no queue's name holds the
// separator that sets it apart from the rest of an entry's key.
func deadLettersByQueue(dls []DeadLetter) bool {
	for i, dl := range dls {
		if dl.NewQueue || strings.Contains(dl.Queue, "\x00") {
			return false
		}
		if i > 0 && cmp.Or(cmp.Compare(dls[i-1].Vhost, dl.Vhost), cmp.Compare(dls[i-1].Queue, dl.Queue)) > 0 {
			return false
		}
	}
	return true
}

// deadLetterRuns are the runs of dls of one queue, in order.
func deadLetterRuns(dls []DeadLetter) iter.Seq[[]DeadLetter] {
	return func(yield func([]DeadLetter) bool) {
		for len(dls) > 0 {
			n := 1
			for n < len(dls) && dls[n].Vhost == dls[0].Vhost && dls[n].Queue == dls[0].Queue {
				n++
			}
			if !yield(dls[:n]) {
				return
			}
			dls = dls[n:]
		}
	}
}

// routeEntries are the entries of d's routes, the new queues the default
// exchange reaches by their names in one entry per vhost, and the deleted
// queues d does not list.
func (d *Diff) routeEntries() []entry {
	var out []entry
	// The default exchange reaches every new queue by its name: one entry
	// per vhost says so for them all.
	newQueues := map[string][]string{}
	var vhosts []string
	for _, r := range d.Routes {
		if r.Exchange == "" && r.Class.Kind == ClassDefault && len(r.Before) == 0 && !r.Loses && r.Cause == "" {
			if newQueues[r.Vhost] == nil {
				vhosts = append(vhosts, r.Vhost)
			}
			newQueues[r.Vhost] = append(newQueues[r.Vhost], r.After...)
			continue
		}
		e := entry{vhost: r.Vhost, loses: r.Loses, what: routeWhat(r), was: reach(r.Before, r.BeforeSplits), now: reach(r.After, r.AfterSplits), cause: r.Cause}
		if r.Selective {
			const each = " (each for the messages its bindings match)"
			if len(r.Before) > 0 {
				e.was += each
			}
			if len(r.After) > 0 {
				e.now += each
			}
		}
		out = append(out, e)
	}
	unlisted := map[string]Unlisted{}
	for _, u := range d.Unlisted {
		unlisted[u.Vhost] = u
		if u.New > 0 && newQueues[u.Vhost] == nil {
			vhosts = append(vhosts, u.Vhost)
		}
	}
	for _, v := range vhosts {
		qs, more := newQueues[v], unlisted[v].New
		now := "each its own queue"
		if len(qs) > 0 {
			now += ": " + namesOf(qs, len(qs)+more)
		}
		out = append(out, entry{vhost: v, what: fmt.Sprintf("the names of %s on the default exchange", count(len(qs)+more, "new queue")),
			was: "no queue", now: now})
	}
	for _, u := range d.Unlisted {
		if u.Deleted > 0 {
			out = append(out, entry{vhost: u.Vhost, loses: true, what: fmt.Sprintf("the names of %s on the default exchange", count(u.Deleted, "more deleted queue")),
				was: "each its own queue", now: "no queue", cause: "the queues are deleted, with the messages they hold"})
		}
	}
	return out
}

func delayTierEntries(tiers []DelayTier) []entry {
	var out []entry
	for _, t := range tiers {
		delay := msText(t.DelayMS, t.DelayWritten)
		what := fmt.Sprintf("messages of delay tier %q (%s)", t.Queue, delay)
		if t.Origin != "" {
			what = fmt.Sprintf("retries of queue %q through delay tier %q (%s)", t.Origin, t.Queue, delay)
		}
		if t.Class != nil {
			what += " with " + deadClassText(t.Class, t.Before, t.After)
		}
		out = append(out, entry{vhost: t.Vhost, queue: t.Queue, loses: t.Loses, what: what, was: endText(t.Before), now: endText(t.After), cause: t.Cause})
	}
	return out
}

func expiringEntries(xs []Expiring) []entry {
	var out []entry
	for _, x := range xs {
		was := "kept while it is unused"
		if x.BeforeMS != nil {
			was = fmt.Sprintf("deleted with the queue once it has been unused for %s", msText(*x.BeforeMS, x.BeforeWritten))
		}
		out = append(out, entry{vhost: x.Vhost, queue: x.Queue, loses: true, what: fmt.Sprintf("messages held by queue %q", x.Queue), was: was,
			now: fmt.Sprintf("deleted with the queue once it has been unused for %s", msText(x.AfterMS, x.AfterWritten)), cause: x.Cause})
	}
	return out
}

func refusingEntries(rs []Refusing) []entry {
	var out []entry
	// New queues (Refusing.NewQueue) that refuse alike, for the same
	// cause, are one entry.
	news := map[entry]int{}
	var newQueues [][]string
	for _, r := range rs {
		was := "kept (no length limit)"
		switch {
		case r.BeforeLimit != "" && r.BeforeOverflow == "reject-publish":
			was = fmt.Sprintf("refused once it held its length limit of %s", r.BeforeLimit)
		case r.BeforeOverflow == "reject-publish-dlx":
			was = fmt.Sprintf("refused and dead-lettered once it held its length limit of %s (overflow reject-publish-dlx)", r.BeforeLimit)
		case r.BeforeLimit != "":
			was = fmt.Sprintf("kept: once it held its length limit of %s, it dropped (or dead-lettered) its oldest messages instead (overflow drop-head)", r.BeforeLimit)
		}
		if r.NewQueue {
			was = "the queue does not exist"
		}
		e := entry{vhost: r.Vhost, queue: r.Queue, loses: r.loses(), unknown: r.Unknown != "", what: fmt.Sprintf("messages published to queue %q once it is full", r.Queue), was: was,
			now: fmt.Sprintf("refused (length limit %s, overflow reject-publish): lost where the publisher does not use confirms", r.Limit), cause: r.Cause}
		if r.Unknown != "" {
			e.cause += "; " + r.Unknown
		}
		if r.NewQueue {
			e.what = ""
			if i, ok := news[e]; ok {
				newQueues[i] = append(newQueues[i], r.Queue)
				continue
			}
			news[e] = len(out)
			newQueues = append(newQueues, []string{r.Queue})
		} else {
			newQueues = append(newQueues, nil)
		}
		out = append(out, e)
	}
	for i, qs := range newQueues {
		switch {
		case len(qs) == 1:
			out[i].what = fmt.Sprintf("messages published to new queue %q once it is full", qs[0])
		case len(qs) > 1:
			out[i].what = fmt.Sprintf("messages published to new %s once each is full", namesOfQueues(qs))
			out[i].was = "the queues do not exist"
		}
	}
	return out
}

func trimmingEntries(ts []Trimming) []entry {
	var out []entry
	for _, t := range ts {
		was := "kept, read or not (no retention)"
		if t.Before != "" {
			was = "kept within its retention of " + t.Before
		}
		out = append(out, entry{vhost: t.Vhost, queue: t.Queue, loses: true, what: fmt.Sprintf("messages held by stream %q", t.Queue), was: was,
			now: "kept within its retention of " + t.After + ", read or not", cause: t.Cause})
	}
	return out
}

func linkEntries(ls []Link) []entry {
	var out []entry
	for _, l := range ls {
		what := fmt.Sprintf("messages moved by shovel %q", l.Name)
		if l.Kind == "federation_upstream" {
			what = fmt.Sprintf("messages federated from upstream %q", l.Name)
		}
		cause := l.Effect
		if l.Unknown != "" {
			cause += " (" + l.Unknown + ")"
		}
		out = append(out, entry{vhost: l.Vhost, loses: l.Loses, what: what, was: orNone(l.Before, l.Kind), now: orNone(l.After, l.Kind), cause: cause})
	}
	return out
}

// orNone is where a link moved messages, or that it does not exist.
func orNone(s, kind string) string {
	if s != "" {
		return s
	}
	if kind == "shovel" {
		return "no shovel"
	}
	return "no upstream"
}

// deadLetterEntries are the entries of dead-letter changes dls: one per
// queue, class and change, naming the reasons it is of ("rejected,
// expired"), where the dead letters of several reasons go alike.
func deadLetterEntries(dls []DeadLetter) []entry {
	type group struct {
		e       entry
		queue   string
		with    string
		reasons []string
		// queues are the new queues (DeadLetter.NewQueue) whose dead
		// letters go alike, for the same cause: one entry names them, as
		// a plan that creates a vhost of thousands of queues with a
		// length limit would otherwise list each.
		queues []string
	}
	var groups []*group
	index := map[entry]*group{}
	for _, dl := range dls {
		with := ""
		if dl.Class != nil {
			with = " with " + deadClassText(dl.Class, dl.Before, dl.After)
		}
		e := entry{vhost: dl.Vhost, loses: dl.Loses, what: dl.Queue + "\x00" + with, was: overflowEndText(dl.Before, dl.After), now: overflowEndText(dl.After, dl.Before), cause: dl.Cause}
		if dl.NewQueue {
			e.was, e.what = "none (the queues do not exist)", "\x01new\x00"+string(dl.Reason)+"\x00"+with
		}
		if dl.Sooner {
			e.now += ": more of them, or sooner"
		}
		reason := string(dl.Reason)
		if dl.PerMessageTTL {
			reason = "expired by a per-message TTL"
		}
		g := index[e]
		if g == nil {
			g = &group{e: e, queue: dl.Queue, with: with}
			index[e] = g
			groups = append(groups, g)
		}
		if dl.NewQueue {
			g.reasons = []string{reason}
			g.queues = append(g.queues, dl.Queue)
			continue
		}
		g.reasons = append(g.reasons, reason)
	}
	out := make([]entry, len(groups))
	for i, g := range groups {
		out[i] = g.e
		out[i].what = fmt.Sprintf("dead letters of queue %q (%s)%s", g.queue, strings.Join(g.reasons, ", "), g.with)
		out[i].queue = g.queue
		if g.queues != nil {
			out[i].queue = ""
			if len(g.queues) == 1 {
				out[i].queue = g.queues[0]
			}
			out[i].what = fmt.Sprintf("dead letters of new %s (%s)%s", namesOfQueues(g.queues), strings.Join(g.reasons, ", "), g.with)
			if len(g.queues) == 1 {
				out[i].was = "none (the queue does not exist)"
			}
		}
	}
	return out
}

// silencedEntries are the entries of the silenced queues ss (sorted by
// vhost): one per vhost and cause, naming its queues as other lists do
// (the first shownQueues, and how many more), and per vhost at most
// shownQueues such entries, the queues of the rest named by one more: a
// change that cuts off thousands of queues would otherwise list each (the
// JSON lists them all, with their causes).
func silencedEntries(ss []Silenced) []entry {
	const was = "reached through bindings or dead letters"
	now := func(n int) string { return "nothing reaches " + plural2("it", "them", n) + " but the default exchange" }
	var out []entry
	for len(ss) > 0 {
		n := 1
		for n < len(ss) && ss[n].Vhost == ss[0].Vhost {
			n++
		}
		vhost, byCause, causes := ss[0].Vhost, map[string][]string{}, []string(nil)
		var unknown []entry // the queues a shovel may feed, each its own
		for _, s := range ss[:n] {
			if s.Unknown != "" {
				unknown = append(unknown, entry{vhost: vhost, unknown: true, what: fmt.Sprintf("queue %q", s.Queue), was: was,
					now: now(1) + ", unless a shovel feeds it", cause: s.Cause + "; " + s.Unknown})
				continue
			}
			if byCause[s.Cause] == nil {
				causes = append(causes, s.Cause)
			}
			byCause[s.Cause] = append(byCause[s.Cause], s.Queue)
		}
		ss = ss[n:]
		var rest []string
		for i, c := range causes {
			qs := byCause[c]
			if i >= shownQueues && len(causes) > shownQueues+1 {
				rest = append(rest, qs...)
				continue
			}
			what := fmt.Sprintf("queue %q", qs[0])
			if len(qs) > 1 {
				what = fmt.Sprintf("%s (%s)", count(len(qs), "queue"), queues(qs))
			}
			out = append(out, entry{vhost: vhost, loses: true, what: what, was: was, now: now(len(qs)), cause: c})
		}
		out = append(out, unknown...)
		if len(rest) > 0 {
			slices.Sort(rest)
			out = append(out, entry{vhost: vhost, loses: true, what: fmt.Sprintf("%s (%s)", count(len(rest), "more queue"), queues(rest)), was: was, now: now(len(rest)),
				cause: fmt.Sprintf("%d other causes (-o json names each queue's)", len(causes)-shownQueues)})
		}
	}
	return out
}

// Counts returns how many entries lose messages and how many only move
// them; those that may lose messages (mqctl cannot tell) are neither
// (Unknowns counts them).
func (d *Diff) Counts() (loses, moves int) {
	if d == nil {
		return 0, 0
	}
	d.eachEntry(func(e entry) { loses, moves = count1(e, loses, moves) })
	return loses, moves
}

// count1 is Counts' loses and moves counted on with entry e.
func count1(e entry, loses, moves int) (int, int) {
	switch {
	case e.loses:
		loses++
	case !e.unknown:
		moves++
	}
	return loses, moves
}

// Unknowns returns how many entries may lose messages, mqctl cannot
// tell (a queue a shovel may feed, Silenced.Unknown; a quorum dead-letter
// queue that refuses only what is published to it by name,
// Refusing.Unknown).
func (d *Diff) Unknowns() int {
	n := 0
	if d != nil {
		for _, r := range d.Refusing {
			if r.Unknown != "" {
				n++
			}
		}
	}
	for _, s := range d.silenced() {
		if s.Unknown != "" {
			n++
		}
	}
	return n
}

// silenced returns d's silenced queues (none for a nil d).
func (d *Diff) silenced() []Silenced {
	if d == nil {
		return nil
	}
	return d.Silenced
}

// Summary is one line on what the change does to messages, and on what
// mqctl cannot tell of it.
func (d *Diff) Summary() string {
	loses, moves := d.Counts()
	return d.summaryOf(loses, moves)
}

// summaryOf is Summary of a diff whose entries Counts counts loses and
// moves of: the views count the entries they write (at 50,000 queues,
// making them again took as long as writing them).
func (d *Diff) summaryOf(loses, moves int) string {
	n := d.Unknowns()
	if n > 0 && loses+moves == 0 && len(d.truncatedExchanges()) == 0 {
		return fmt.Sprintf("%s may lose messages: mqctl cannot tell (marked ?).", count(n, "queue"))
	}
	s := d.summary(loses, moves)
	if n > 0 {
		s += fmt.Sprintf(" %s may lose messages: mqctl cannot tell (marked ?).", count(n, "more queue"))
	}
	return s
}

// summary is Summary without what mqctl cannot tell.
func (d *Diff) summary(loses, moves int) string {
	if t := d.truncatedExchanges(); len(t) > 0 {
		rest := fmt.Sprintf("more classes of keys of %s were not compared, and they may lose messages.", strings.Join(t, ", "))
		if loses == 0 {
			return fmt.Sprintf("%s %s messages elsewhere; %s", count(moves, "flow change"), plural2("sends", "send", moves), rest)
		}
		return fmt.Sprintf("%s %s messages, %s %s them elsewhere; %s", count(loses, "flow change"), plural2("loses", "lose", loses), count(moves, "more"), plural2("sends", "send", moves), rest)
	}
	switch {
	case loses+moves == 0:
		return "No message goes anywhere else."
	case loses == 0:
		return fmt.Sprintf("%s %s messages elsewhere; none loses messages.", count(moves, "flow change"), plural2("sends", "send", moves))
	default:
		return fmt.Sprintf("%s %s messages, %s %s them elsewhere.", count(loses, "flow change"), plural2("loses", "lose", loses), count(moves, "more"), plural2("sends", "send", moves))
	}
}

func routeWhat(r Route) string {
	if r.Exchange == "" {
		return fmt.Sprintf("%s on the default exchange", classText(&r.Class))
	}
	return fmt.Sprintf("%s on exchange %q", classText(&r.Class), r.Exchange)
}

// classText names a class by its representative and what it matches;
// where the exchange's kind changed (Class.Before), by what tells it
// apart on each side: "key "order.x" (matching order.* before the
// change)" for a topic exchange made fanout.
func classText(c *Class) string {
	if c.Before == nil || c.After == nil {
		return sideText(c, c.Kind, c.Matches, "")
	}
	if c.Keyed {
		return keyedChangeText(c)
	}
	var parts []string
	for _, s := range []struct {
		side *ClassSide
		when string
	}{{c.Before, " before the change"}, {c.After, " after the change"}} {
		if t := sideText(c, s.side.Kind, s.side.Matches, s.when); t != "every message" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return "every message"
	}
	return strings.Join(parts, " and ")
}

// keyedChangeText names class c of an exchange whose type changed, with
// an exchange that routes by key on its way (Class.Keyed): by its key
// first, whatever the exchange's kind on each side (a fanout or headers
// exchange passes the key on to one that routes by it), its headers where
// a headers exchange is on the way, then what it matches on each side:
// `key "b.x" (matching b.# before and after the change)` for a fanout
// exchange made topic in front of a topic exchange.
func keyedChangeText(c *Class) string {
	s := fmt.Sprintf("key %q", c.RoutingKey)
	h := behindHeaders(c, append(slices.Clip(c.Before.Matches), c.After.Matches...), false)
	if h == "" && (c.Before.Kind == ClassHeaders || c.After.Kind == ClassHeaders) {
		h = "headers " + route.FormatTable(c.Headers)
	}
	if h != "" {
		s += " and " + h
	}
	matching := func(ms []string) string {
		if len(ms) == 0 {
			return "matching no binding"
		}
		return "matching " + strings.Join(ms, ", ")
	}
	if slices.Equal(c.Before.Matches, c.After.Matches) {
		return s + " (" + matching(c.Before.Matches) + " before and after the change)"
	}
	return s + " (" + matching(c.Before.Matches) + " before the change; " + matching(c.After.Matches) + " after the change)"
}

// deadClassText names class c of dead letters that went to before and go
// to after: as classText where they keep the message's key on either
// side; by their headers alone where they carry a dead-letter routing key
// on both (a headers exchange on the way tells them apart), since the
// class's example key is not theirs.
func deadClassText(c *Class, before, after *DeadLetterEnd) string {
	for _, e := range []*DeadLetterEnd{before, after} {
		if e != nil && e.Configured && e.KeyFromMessage {
			return classText(c)
		}
	}
	return sideText(c, ClassHeaders, c.Matches, "")
}

// sideText names class c as an exchange of kind tells it apart by
// matches: its representative and what it matches, when (" before the
// change") said after them.
func sideText(c *Class, kind string, matches []string, when string) string {
	// keyed: the exchange does not route by key, one behind it does, so
	// the class is of keys (Class.Keyed; not said of one side alone).
	keyed := c.Keyed && when == ""
	var s string
	switch {
	case kind == ClassDefault:
		return fmt.Sprintf("key %q (the queue's name)", c.RoutingKey)
	case kind == ClassHeaders && keyed:
		h := behindHeaders(c, matches, when == "")
		if h == "" {
			h = "headers " + route.FormatTable(c.Headers)
		}
		s = fmt.Sprintf("key %q and %s", c.RoutingKey, h)
	case kind == ClassHeaders:
		s = "headers " + route.FormatTable(c.Headers)
	case (kind == ClassFanout || kind == ClassOther || kind == ClassEvery) && !keyed:
		h := behindHeaders(c, matches, when == "")
		if h == "" {
			return "every message"
		}
		s = "messages with " + h
	default:
		s = fmt.Sprintf("key %q", c.RoutingKey)
		if h := behindHeaders(c, matches, when == ""); h != "" {
			s += " and " + h
		}
	}
	switch {
	case len(matches) > 0:
		return s + " (matching " + strings.Join(matches, ", ") + when + ")"
	case kind == ClassHeaders && !keyed:
		return s + " (matching no binding" + when + ")"
	}
	return s + " (any key no binding names" + when + ")"
}

// behindHeaders is what tells class c apart by its headers where a
// headers exchange behind the one it is published to routes it (matches
// holds that exchange's criteria): its representative's headers, or none,
// or that no criterion on its way matches them (said of the whole class
// only, not of one side of an exchange's type change); "" where no
// headers exchange does.
func behindHeaders(c *Class, matches []string, whole bool) string {
	if len(c.Headers) > 0 {
		return "headers " + route.FormatTable(c.Headers)
	}
	for _, m := range matches {
		if strings.HasPrefix(m, "{") {
			return "no headers"
		}
	}
	if c.ByHeaders && whole {
		return "headers that no binding matches"
	}
	return ""
}

// shownQueues is how many queue names an entry lists before "and N
// more": every message of a deleted exchange can name thousands (the JSON
// lists them all).
const shownQueues = 10

// queues names the queues of qs, the first shownQueues of them.
func queues(qs []string) string { return namesOf(qs, len(qs)) }

// namesOf names the first of qs, the first names of total queues, and
// counts the rest.
func namesOf(qs []string, total int) string {
	if len(qs) == 0 {
		return "no queue"
	}
	shown := qs[:min(len(qs), shownQueues)]
	if total > len(shown) {
		return strings.Join(shown, ", ") + fmt.Sprintf(" and %d more", total-len(shown))
	}
	return strings.Join(shown, ", ")
}

// reach names the queues qs that messages reach, and for each split of
// them that each message reaches one of its queues.
func reach(qs []string, splits []Split) string {
	if len(splits) == 0 {
		return queues(qs)
	}
	split := map[string]bool{}
	for _, s := range splits {
		for _, q := range s.Queues {
			split[q] = true
		}
	}
	var parts []string
	if rest := slices.DeleteFunc(slices.Clone(qs), func(q string) bool { return split[q] }); len(rest) > 0 {
		parts = append(parts, queues(rest))
	}
	for _, s := range splits {
		parts = append(parts, splitText(s))
	}
	return strings.Join(parts, ", and ")
}

// splitText says how split s shares messages among its queues.
func splitText(s Split) string {
	if len(s.Through) > 0 && s.PicksOne() {
		return throughText(s)
	}
	switch {
	case s.Unsimulated != "" && s.PicksOne() && len(s.Queues) == 1:
		return fmt.Sprintf("%s (through exchange %q, of type %s, which mqctl does not simulate)", s.Queues[0], s.Exchange, s.Unsimulated)
	case s.Unsimulated != "" && s.PicksOne():
		return fmt.Sprintf("one of %s (exchange %q, of type %s, picks one for each message by a hash mqctl does not simulate)", queues(s.Queues), s.Exchange, s.Unsimulated)
	case s.Unsimulated != "":
		return fmt.Sprintf("some of %s, or none (exchange %q is of type %s, which mqctl does not simulate: where it routes each message is unknown)", queues(s.Queues), s.Exchange, s.Unsimulated)
	case s.Random:
		return fmt.Sprintf("one of %s (exchange %q picks one for each message at random, among those on the node the publisher is connected to)", queues(s.Queues), s.Exchange)
	}
	return fmt.Sprintf("one of %s (exchange %q picks one for each message by a hash of its routing key)", queues(s.Queues), s.Exchange)
}

// throughText says how split s, an exchange that picks one destination
// for each message among some that are exchanges, shares messages: a
// message that picks an exchange reaches each queue it leads to.
func throughText(s Split) string {
	through := map[string]bool{}
	var picks []string
	for _, t := range s.Through {
		for _, q := range t.Queues {
			through[q] = true
		}
	}
	for _, q := range s.Queues {
		if !through[q] {
			picks = append(picks, q)
		}
	}
	for _, t := range s.Through {
		picks = append(picks, fmt.Sprintf("exchange %q (to %s)", t.Exchange, queues(t.Queues)))
	}
	how := "by a hash of its routing key"
	switch {
	case s.Random:
		how = "at random, among those on the node the publisher is connected to"
	case s.Unsimulated != "":
		how = fmt.Sprintf("by a hash mqctl does not simulate (type %s)", s.Unsimulated)
	}
	return fmt.Sprintf("one of %s (exchange %q picks one destination for each message %s, and a message that goes to an exchange reaches each queue it leads to)", strings.Join(picks, ", "), s.Exchange, how)
}

// overflowEndText says where dead letters go at end e (endText), and,
// where the other end's are other messages (the new messages a full
// queue refuses, or its oldest: DeadLetterEnd.Refused), which they are.
func overflowEndText(e, other *DeadLetterEnd) string {
	switch {
	case e == nil || other == nil || e.Refused == other.Refused:
		return endText(e)
	case e.Refused:
		return endText(e) + ": the new messages it refuses once full (overflow reject-publish-dlx)"
	}
	return endText(e) + ": its oldest messages, which it drops once full to take new ones (overflow drop-head)"
}

// endText says where dead letters go.
func endText(e *DeadLetterEnd) string {
	switch {
	case e == nil:
		return "none (the queue does not dead-letter them)"
	case !e.Configured:
		return "dropped (no dead-letter exchange)"
	}
	via := "the default exchange"
	if e.Exchange != "" {
		via = fmt.Sprintf("%q", e.Exchange)
	}
	key := fmt.Sprintf("key %q", e.RoutingKey)
	if e.KeyFromMessage {
		key = "the message's key"
	}
	if e.Dropped {
		return fmt.Sprintf("dropped (via %s, %s)", via, key)
	}
	if e.Held {
		return fmt.Sprintf("held in the queue, which dead-letters at least once and tries again until they reach a queue (via %s, %s)", via, key)
	}
	return fmt.Sprintf("%s (via %s, %s)", reach(e.Queues, e.Splits), via, key)
}

// tiesSuffix qualifies the one line of a diff that moves no message
// where policies tie: that holds for the policies the flows assume.
func (d *Diff) tiesSuffix() string {
	if d == nil || len(d.Ties) == 0 {
		return ""
	}
	return " (where RabbitMQ applies the policies these flows assume)"
}

// tieLines says, a line each after indent, which policy the flows assume
// for each tie (Diff.Ties) and that messages may go elsewhere.
func (d *Diff) tieLines(indent string) string {
	if d == nil {
		return ""
	}
	var sb strings.Builder
	for _, t := range d.Ties {
		when := map[string]string{"before": "before the change", "after": "after the change", "both": "before and after the change"}[t.Side]
		policies := "policies"
		if t.Operator {
			policies = "operator policies"
		}
		fmt.Fprintf(&sb, "%s(%s %q in vhost %q matches %s %q and %q at the same priority %s, and RabbitMQ applies one of them, which is not defined: these flows assume %q; where it applies %q, its messages may go elsewhere; give the policies different priorities)\n",
			indent, t.Kind, t.Name, t.Vhost, policies, t.Assumed, t.Other, when, t.Assumed, t.Other)
	}
	return sb.String()
}

// truncatedExchanges is d.Truncated without the default exchanges whose
// unlisted queue names d.Unlisted counts (the views say how many).
func (d *Diff) truncatedExchanges() []string {
	counted := map[string]bool{}
	for _, u := range d.Unlisted {
		counted[u.Vhost+"/"] = true
	}
	return slices.DeleteFunc(slices.Clone(d.Truncated), func(x string) bool { return counted[x] })
}

func count(n int, noun string) string {
	if n == 1 || noun == "more" {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func plural2(one, many string, n int) string {
	if n == 1 {
		return one
	}
	return many
}

// TextOptions configure WriteText.
type TextOptions struct {
	// Color paints what loses messages red.
	Color bool
	// Marks: write topology.ScopeMark before each entry (the queue it is
	// about, or none), for EnvValues.Hide to show in an entry about a
	// queue what the file wrote itself for it.
	Marks bool
}

// WriteText writes the human view: a heading, one entry per change that
// moves messages (those that lose messages first, marked "!"; then those
// that may, mqctl cannot tell, marked "?"; the others "~"), each with before and after, and the summary line. A diff that
// moves no message is one line.
func WriteText(w io.Writer, d *Diff, o TextOptions) error {
	sb := bufio.NewWriter(w)
	var n, loses, moves int
	d.eachEntry(func(e entry) {
		if n == 0 {
			sb.WriteString("Message flows:\n")
		}
		n++
		loses, moves = count1(e, loses, moves)
		mark := "~"
		switch {
		case e.loses:
			mark = "!"
			if o.Color {
				mark = "\x1b[31m!\x1b[0m"
			}
		case e.unknown:
			mark = "?"
		}
		if o.Marks {
			sb.WriteString(e.mark())
		}
		fmt.Fprintf(sb, "  %s %s in vhost %q\n", mark, e.what, e.vhost)
		fmt.Fprintf(sb, "      before: %s\n      after:  %s\n", e.was, e.now)
		if e.cause != "" {
			fmt.Fprintf(sb, "      cause:  %s\n", e.cause)
		}
	})
	if n == 0 {
		// Nothing written to sb.
		_, err := io.WriteString(w, "Message flows: no message goes anywhere else"+d.tiesSuffix()+".\n"+d.tieLines("  "))
		return err
	}
	if o.Marks {
		sb.WriteString(topology.ScopeMark("", "", ""))
	}
	if t := d.truncatedExchanges(); len(t) > 0 {
		fmt.Fprintf(sb, "  (not every class of keys is listed for %s: their bindings make too many to compare)\n", strings.Join(t, ", "))
	}
	sb.WriteString(d.tieLines("  "))
	fmt.Fprintf(sb, "%s\n", d.summaryOf(loses, moves))
	return sb.Flush()
}

// msText is ms in words ("1s"), or where it is a value the files took from
// the environment, what they wrote for it in milliseconds ("${TTL} ms").
func msText(ms int64, written string) string {
	if written != "" {
		return written + " ms"
	}
	return loader.FormatDuration(ms)
}

// mark is the topology.ScopeMark of the queue e is about, or of none.
func (e entry) mark() string {
	if e.queue == "" {
		return topology.ScopeMark("", "", "")
	}
	return topology.ScopeMark(string(kind.Queue), e.vhost, e.queue)
}
