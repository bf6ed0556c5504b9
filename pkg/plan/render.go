package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// RenderOptions configure the human view.
type RenderOptions struct {
	Color bool
	// ListUnmanaged lists every unmanaged object instead of counting them.
	ListUnmanaged bool
	// Files: the plan compares two sets of files (mqctl diff), not the
	// file with a broker.
	Files bool
	// marks: write a topology.ScopeMark before each change and each
	// flow of a queue, for Env.Hide to show there what the file wrote
	// itself for that object (p.Env holds literals).
	marks bool
}

const (
	ansiReset   = "\x1b[0m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiRed     = "\x1b[31m"
	ansiMagenta = "\x1b[35m"
	ansiBold    = "\x1b[1m"
)

func symbol(a Action) (string, string) {
	switch a {
	case Create:
		return "+", ansiGreen
	case Update:
		return "~", ansiYellow
	case Replace:
		return "-/+", ansiMagenta
	default:
		return "-", ansiRed
	}
}

// WriteText renders the human view of the plan.
//
// It is written as it is rendered, not held whole first: a plan that
// replaces 25,000 queues of a vhost renders tens of megabytes of text.
func WriteText(w io.Writer, p *Plan, opts RenderOptions) error {
	if len(p.Env) > 0 {
		// A value the file took from the environment may be a secret:
		// the plan shows what the file wrote in its place.
		var buf bytes.Buffer
		opts.marks = p.Env.HasLiterals()
		if err := writeText(&buf, p, opts); err != nil {
			return err
		}
		_, err := io.WriteString(w, p.Env.Hide(buf.String()))
		return err
	}
	return writeText(w, p, opts)
}

func writeText(w io.Writer, p *Plan, opts RenderOptions) error {
	sb := bufio.NewWriterSize(w, 64<<10)
	paint := func(color, s string) string {
		if !opts.Color {
			return s
		}
		return color + s + ansiReset
	}
	records := p.RecordChanges()
	if p.Empty() && p.PutsBack() {
		held := ""
		if len(p.Held) > 0 {
			held = "; mqctl holds back what differs from the file"
		}
		sb.WriteString(paint(ansiBold, "No change to the file's objects:") + " apply puts back what an apply stopped during a replace took down, and deletes its restore lists" + held + " (below).\n")
	} else if p.Empty() && len(records) > 0 {
		held := ""
		if len(p.Held) > 0 {
			held = "; mqctl holds back what differs from the file"
		}
		sb.WriteString(paint(ansiBold, "Only mqctl's ownership record changes:") + " apply updates it, and changes no object on the broker" + held + " (below).\n")
	} else if p.Empty() && len(p.Held) > 0 {
		n := len(p.Held)
		fmt.Fprintf(sb, "%s the broker differs from the file, but mqctl holds back %s (below).\n", paint(ansiBold, "Nothing for apply to change:"), plural2("the change", fmt.Sprintf("all %d changes", n), n))
	} else if p.Empty() && len(p.Unread) > 0 {
		sb.WriteString(paint(ansiBold, "No changes.") + " What mqctl could read matches the file (see below for what it could not).\n")
	} else if p.Empty() && opts.Files {
		sb.WriteString(paint(ansiBold, "No changes.") + " Both declare the same objects in the vhosts the new files name.\n")
	} else if p.Empty() {
		sb.WriteString(paint(ansiBold, "No changes.") + " The broker matches the file.\n")
	} else {
		if opts.Files {
			sb.WriteString("The new files change these objects:\n")
		} else {
			sb.WriteString("mqctl will perform these actions:\n")
		}
		vhost := "\x00"
		successor := p.Successors()
		for _, c := range p.Changes {
			if c.Vhost != vhost {
				vhost = c.Vhost
				if vhost == "" {
					sb.WriteString("\n  # the broker (users)\n")
				} else {
					fmt.Fprintf(sb, "\n  # vhost %q\n", vhost)
				}
			}
			if opts.marks {
				sb.WriteString(topology.ScopeMark(string(c.Kind), c.Vhost, c.Name))
			}
			writeChange(sb, c, paint)
			if c.Messages > 0 {
				if to, created := successor(&c); to != "" {
					fmt.Fprintf(sb, "      %s\n", MoveAdvice(c, to, created))
				}
			}
			if opts.marks {
				sb.WriteString(topology.ScopeMark("", "", ""))
			}
		}
		s := p.Summary()
		fmt.Fprintf(sb, "\n%s\n", paint(ansiBold, s.Line(opts.Files)))
		writeFlows(sb, p, opts)
	}
	writeRecords(sb, records, RecordAdopt)
	writePreexisting(sb, p, paint, opts.ListUnmanaged)
	if n := len(p.Unmanaged); n > 0 {
		fmt.Fprintf(sb, "%d unmanaged %s on the broker (not in the file, not created by mqctl) left alone.\n", n, plural("object", n))
		if opts.ListUnmanaged {
			for _, u := range p.Unmanaged {
				fmt.Fprintf(sb, "  %s %q in vhost %q\n", u.Kind, u.Name, u.Vhost)
			}
		}
	}
	writeHeld(sb, p, paint)
	writeOutside(sb, p, paint)
	writeRecords(sb, records, RecordChangedOutside)
	writeOthers(sb, p, paint, opts.ListUnmanaged)
	writeTakeOver(sb, p, paint)
	writeRecords(sb, records, RecordStale, RecordPrints, RecordDroppedShared, RecordKept, RecordFormat, RecordUnfinished, RecordRestore)
	writeUnread(sb, p, paint)
	if pf := p.Preflight; pf != nil {
		sb.WriteString(paint(ansiBold, "Preflight:") + " " + pf.Summary() + ".\n")
		for _, line := range pf.RefusalLines() {
			fmt.Fprintf(sb, "  %s\n", paint(ansiRed, line))
		}
	}
	return sb.Flush()
}

// writeChange renders change c: its line, its fields, a create's settings,
// why a replace, the bindings it takes down and what is at stake.
func writeChange(sb *bufio.Writer, c Change, paint func(color, s string) string) {
	sym, color := symbol(c.Action)
	fmt.Fprintf(sb, "  %s %s %s%s\n", paint(color, sym), c.Kind, shownName(c.Kind, c.Name), headline(c))
	for _, f := range c.Fields {
		force := ""
		if f.Forces {
			force = paint(ansiMagenta, "  (forces replace)")
		}
		secret := ""
		if f.Masked && show(f.Before) == show(f.After) {
			secret = " (masked: the secret in it changes)"
		}
		fmt.Fprintf(sb, "      ~ %s: %s → %s%s%s\n", f.Field, show(f.Before), show(f.After), secret, force)
	}
	if c.Action == Create {
		for _, line := range describe(c.After) {
			fmt.Fprintf(sb, "      %s\n", line)
		}
	}
	if c.Reason != "" {
		fmt.Fprintf(sb, "      why: %s\n", c.Reason)
	}
	if len(c.Bindings) > 0 {
		what := "takes down and restores"
		if c.Action == Delete {
			what = "also deletes"
		}
		fmt.Fprintf(sb, "      %s %d %s:\n", what, len(c.Bindings), plural("binding", len(c.Bindings)))
		for _, b := range c.Bindings {
			fmt.Fprintf(sb, "        %s\n", BindingName(b))
		}
	}
	if c.Messages > 0 || c.Consumers > 0 || c.MessagesAtLeast {
		fmt.Fprintf(sb, "      %s\n", paint(ansiRed, fmt.Sprintf("at stake: %s, %d %s%s",
			c.MessagesText(), c.Consumers, plural("consumer", int(c.Consumers)), stakeFate(c))))
	}
}

// stakeFate says what becomes of what is at stake in change c's queue
// and that apply refuses it without --allow-data-loss (apply.Check),
// "" when the plan knows nothing at stake for sure (a stream whose
// statistics count none, which apply reads first).
func stakeFate(c Change) string {
	var what []string
	if c.Messages > 0 {
		what = append(what, "the messages are lost")
	}
	if c.Consumers > 0 {
		what = append(what, "the consumers cancelled")
	}
	if len(what) == 0 {
		return ""
	}
	return fmt.Sprintf(": %s with the %s, and apply refuses this without --allow-data-loss", strings.Join(what, " and "), c.Kind)
}

// writeUnread renders what the broker would not let mqctl read, which the
// plan leaves out.
func writeUnread(sb *bufio.Writer, p *Plan, paint func(color, s string) string) {
	if len(p.Unread) == 0 {
		return
	}
	sb.WriteString(paint(ansiBold, "Not read, so not planned:") + " the broker would not let mqctl read these; unknown is not empty, so the plan creates, changes and deletes none of them.\n")
	for _, u := range p.Unread {
		left := ""
		if u.Declared > 0 {
			left = fmt.Sprintf(" (%d in the file left out)", u.Declared)
		}
		where := fmt.Sprintf(" in vhost %q", u.Vhost)
		if u.Vhost == "" {
			where = " on the broker"
		}
		if u.Kind.Container() {
			fmt.Fprintf(sb, "  vhost %q (what the file declares there left out): %s\n", u.Vhost, u.Reason)
			continue
		}
		fmt.Fprintf(sb, "  %s%s%s: %s\n", u.Kind.Plural(), where, left, u.Reason)
	}
}

// shownName is how the text plan writes the name of an object of kind k:
// quoted, unless the kind is named by its ends (a binding's name is made
// of names, quoted inside it).
func shownName(k Kind, name string) string {
	if k.NamedByEnds() {
		return name
	}
	return strconv.Quote(name)
}

func headline(c Change) string {
	o := c.After
	if o == nil {
		o = c.Before
	}
	if o == nil {
		return ""
	}
	return objHeadline(o)
}

// show renders a value compactly: (none) for absent, JSON otherwise,
// with <, > and & as written (a URI's query, a regexp), not \u0026.
func show(v any) string {
	if v == nil {
		return "(none)"
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(topology.Normalize(v)); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeRef writes one line of a list of objects: ref's kind, its name
// and its vhost (none for the broker's own objects), then tail.
func writeRef(sb *bufio.Writer, ref ObjectRef, tail string) {
	where := fmt.Sprintf(" in vhost %q", ref.Vhost)
	if ref.Vhost == "" {
		where = ""
	}
	fmt.Fprintf(sb, "  %s %s%s%s\n", ref.Kind, shownName(ref.Kind, ref.Name), where, tail)
}

// writePreexisting lists the broker-level objects (SPEC §9: users and
// their access, vhost limits, shovels, federation upstreams and sets) the
// file names that were on the broker before mqctl (Plan.Preexisting), and
// says why mqctl does not adopt them.
func writePreexisting(sb *bufio.Writer, p *Plan, paint func(color, s string) string, listAll bool) {
	n := len(p.Preexisting)
	if n == 0 {
		return
	}
	limits := ""
	if slices.ContainsFunc(p.Preexisting, func(r ObjectRef) bool { return r.Kind == kind.VhostLimits }) {
		// One object per vhost: who set which key is not kept, so the
		// limits stay the vhost's, those this file sets included.
		limits = " A vhost's limits are one object: limits set on the vhost before mqctl make them all the vhost's own, so mqctl sets and changes them as the file says but never lifts one when the file drops limits:, those it set itself included (clear them by hand: rabbitmqctl clear_vhost_limits --vhost VHOST)."
	}
	fmt.Fprintf(sb, "%s mqctl keeps %s as the file says, but does not adopt %s: a file that drops one leaves it on the broker, as mqctl never deletes a user, its access, a vhost's limits, a shovel or a federation upstream (or set) it did not create (the broker's default user, the user it logs in as, other teams' users, an operator's shovels and limits).%s Delete one by hand if you mean to:\n",
		paint(ansiBold, fmt.Sprintf("%d %s of the file %s on the broker before mqctl.", n, plural("object", n), plural2("was", "were", n))),
		plural2("it", "them", n), plural2("it", "them", n), limits)
	shown := p.Preexisting
	if !listAll && len(shown) > preexistingShown {
		shown = shown[:preexistingShown]
	}
	for _, ref := range shown {
		writeRef(sb, ref, "")
	}
	if more := n - len(shown); more > 0 {
		fmt.Fprintf(sb, "  and %d more (--list-unmanaged lists them all, and so does the JSON plan's preexisting)\n", more)
	}
}

// preexistingShown is how many of Plan.Preexisting the text view names
// without --list-unmanaged: every plan says them again.
const preexistingShown = 10

// writeOutside lists the objects mqctl managed once that were changed
// outside mqctl: left alone (or deleted, as asked), with what to do.
func writeOutside(sb *bufio.Writer, p *Plan, paint func(color, s string) string) {
	var kept, deleted []Outside
	for _, o := range p.ChangedOutside {
		if o.Deleted {
			deleted = append(deleted, o)
		} else {
			kept = append(kept, o)
		}
	}
	list := func(os []Outside) {
		for _, o := range os {
			writeRef(sb, o.ObjectRef, ": "+o.Reason)
		}
	}
	if len(kept) > 0 {
		sb.WriteString(paint(ansiBold, "Managed once, changed outside mqctl: not deleted.") +
			" The file no longer names these, but they are not the objects mqctl wrote, so they are someone else's now:\n")
		list(kept)
		sb.WriteString("  To keep managing one, name it in the file again: mqctl adopts it as it is, or plans it back to the file. " +
			"To delete them, delete them by hand, or run plan and apply with --delete-changed.\n")
	}
	if len(deleted) > 0 {
		sb.WriteString(paint(ansiBold, "Managed once, changed outside mqctl, and deleted as asked (--delete-changed):") + "\n")
		list(deleted)
	}
}

// writeTakeOver says whose ownership records the plan takes over.
func writeTakeOver(sb *bufio.Writer, p *Plan, paint func(color, s string) string) {
	t := p.TakeOver
	if t == nil || t.Objects == 0 {
		return
	}
	sb.WriteString(takeOverLine(p, paint) + "\n")
}

// takeOverLine says whose ownership records the plan takes over
// (p.TakeOver, of some objects).
func takeOverLine(p *Plan, paint func(color, s string) string) string {
	t := p.TakeOver
	users := ""
	if t.Users {
		users = ", and its record of the broker's users"
	}
	head := fmt.Sprintf("%s the %d %s that the ownership records of %s list in these vhosts%s", paint(ansiBold, "Taking over:"), t.Objects, plural("object", t.Objects), OwnerName(t.From), users)
	const merge = "apply merges those records into its own and deletes them."
	// A kept object (on the broker before mqctl, named by the file) is
	// never mqctl's: it does not come to belong to the file's owner, who
	// keeps it as the other did (ownership.Record.Kept).
	const keptWhy = "on the broker before mqctl: never mqctl's, and never deleted by it"
	managed := t.Objects - t.Kept
	switch {
	case t.Kept <= 0:
		return fmt.Sprintf("%s now belong to %s: %s", head, ownerPhrase(p.Owner), merge)
	case managed <= 0:
		return fmt.Sprintf("%s, kept (%s), %s now kept by %s: %s", head, keptWhy, isAre(t.Kept), ownerPhrase(p.Owner), merge)
	default:
		belong := "belong"
		if managed == 1 {
			belong = "belongs"
		}
		return fmt.Sprintf("%s: the %d managed %s now %s to %s, and the %d kept (%s) %s now kept by %s; %s", head,
			managed, plural("one", managed), belong, ownerPhrase(p.Owner), t.Kept, keptWhy, isAre(t.Kept), ownerPhrase(p.Owner), merge)
	}
}

// isAre is the verb for n things.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// writeRecords writes the record changes of the causes given, in that
// order (the others have their own place in the text view).
func writeRecords(sb *bufio.Writer, records []RecordChange, causes ...string) {
	for _, cause := range causes {
		for _, r := range records {
			if r.Cause == cause {
				sb.WriteString(r.Reason + "\n")
			}
		}
	}
}

// writeOthers lists the objects other owners manage: those the file does
// not name (left alone) and those it shares with them.
func writeOthers(sb *bufio.Writer, p *Plan, paint func(color, s string) string, listAll bool) {
	var left, shared []OtherOwned
	for _, o := range p.Others {
		if o.Shared {
			shared = append(shared, o)
		} else {
			left = append(left, o)
		}
	}
	list := func(os []OtherOwned) {
		for _, o := range os {
			writeRef(sb, o.ObjectRef, " ("+OwnerNames(o.Owners)+")")
		}
	}
	if len(left) > 0 {
		byOwner := map[string]int{}
		for _, o := range left {
			names := make([]string, len(o.Owners))
			for i, w := range o.Owners {
				names[i] = OwnerName(w)
			}
			byOwner[strings.Join(names, " and ")]++
		}
		var counts []string
		for _, who := range slices.Sorted(maps.Keys(byOwner)) {
			counts = append(counts, fmt.Sprintf("%d managed by %s", byOwner[who], who))
		}
		fmt.Fprintf(sb, "%d %s managed by other owners (%s) left alone: the file (%s) does not name them, another owner's file does.\n",
			len(left), plural("object", len(left)), strings.Join(counts, "; "), ownerPhrase(p.Owner))
		if listAll || len(left) <= 10 {
			list(left)
		}
	}
	if len(shared) > 0 {
		// Those this owner's record lists already are shared as they
		// stand: apply records nothing for them.
		var adopted []OtherOwned
		for _, o := range shared {
			if !o.Recorded {
				adopted = append(adopted, o)
			}
		}
		records := "each owner's record lists them already"
		switch {
		case len(adopted) == len(shared):
			records = fmt.Sprintf("apply records them for %s too", ownerPhrase(p.Owner))
		case len(adopted) > 0:
			records = fmt.Sprintf("apply records %d of them (marked *) for %s too, and each owner's record lists the others already",
				len(adopted), ownerPhrase(p.Owner))
		}
		fmt.Fprintf(sb, "%s The file declares these as other owners' files do, and as they are; %s, and neither owner deletes one the other still manages:\n",
			paint(ansiBold, fmt.Sprintf("%d %s shared with other owners.", len(shared), plural("object", len(shared)))), records)
		for _, o := range shared {
			mark := ""
			if !o.Recorded && len(adopted) < len(shared) {
				mark = " *"
			}
			writeRef(sb, o.ObjectRef, " ("+OwnerNames(o.Owners)+")"+mark)
		}
	}
}

// writeHeld lists the changes mqctl holds back, the reason said once for
// the changes that share it (a queue on a node that is down, and its
// bindings).
func writeHeld(sb *bufio.Writer, p *Plan, paint func(color, s string) string) {
	if len(p.Held) == 0 {
		return
	}
	n := len(p.Held)
	what := "apply makes none of them, and the next plan shows them again"
	if n == 1 {
		what = "apply does not make it, and the next plan shows it again"
	}
	fmt.Fprintf(sb, "%s %s:\n", paint(ansiBold, fmt.Sprintf("Held back (%d %s):", n, plural("change", n))), what)
	// The changes that share a reason together, in the order the reasons
	// first come, each reason said once after them.
	var reasons []string
	byReason := map[string][]Held{}
	for _, h := range p.Held {
		if _, ok := byReason[h.Reason]; !ok {
			reasons = append(reasons, h.Reason)
		}
		byReason[h.Reason] = append(byReason[h.Reason], h)
	}
	for _, r := range reasons {
		for _, h := range byReason[r] {
			where := ""
			if h.Vhost != "" && h.Kind.InVhostByName() {
				where = fmt.Sprintf(" in vhost %q", h.Vhost)
			}
			fmt.Fprintf(sb, "  %s %s%s: %s\n", h.Kind, shownName(h.Kind, h.Name), where, notDone(h.Action))
		}
		fmt.Fprintf(sb, "    why: %s\n", r)
	}
}

// notDone says what a held change does not do ("not deleted").
func notDone(a Action) string {
	switch a {
	case Create:
		return "not created"
	case Update:
		return "not updated"
	case Replace:
		return "not replaced"
	case Delete:
		return "not deleted"
	}
	return "not " + string(a)
}

// plural2 is one when n is 1, many otherwise.
func plural2(one, many string, n int) string {
	if n == 1 {
		return one
	}
	return many
}

// writeFlows writes what the plan does to messages, and the vhosts where
// mqctl cannot tell.
func writeFlows(sb *bufio.Writer, p *Plan, opts RenderOptions) {
	if p.Flows == nil && len(p.FlowsUnknown) == 0 {
		return
	}
	sb.WriteString("\n")
	if p.Flows != nil {
		_ = flow.WriteText(sb, p.Flows, flow.TextOptions{Color: opts.Color, Marks: opts.marks}) // sb keeps an error for its Flush
	}
	for _, u := range p.FlowsUnknown {
		fmt.Fprintf(sb, "Message flows in vhost %q are unknown: %s.\n", u.Vhost, u.Reason)
	}
}
