package status

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// FormatVersion is the version of the JSON output; it changes only when a
// field changes meaning or disappears.
const FormatVersion = "1"

const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
)

// TextOptions tune WriteText.
type TextOptions struct {
	// Color colours the rows that need attention (red: alert, yellow:
	// warning).
	Color bool
}

// extraColumn is a count a queue's table shows only in a vhost where a
// queue holds some: without it those messages would be in MESSAGES and in
// no other column.
type extraColumn struct {
	name  string
	count func(Queue) *int64 // nil: the queue does not report it
}

// extraColumns are the counts after UNACKED, in order: a quorum queue's
// messages held back for a delayed retry (RabbitMQ 4.3+), and its dead
// letters waiting for its dead-letter exchange to take them (at-least-once
// dead-lettering).
var extraColumns = []extraColumn{
	{"DELAYED", func(q Queue) *int64 { return q.Delayed }},
	{"DEAD-LETTERING", func(q Queue) *int64 { return q.DeadLettering }},
}

// columnsFor are the extra columns of a vhost's table: those some queue of
// qs holds messages in.
func columnsFor(qs []Queue) []extraColumn {
	var out []extraColumn
	for _, c := range extraColumns {
		if slices.ContainsFunc(qs, func(q Queue) bool { n := c.count(q); return n != nil && *n > 0 }) {
			out = append(out, c)
		}
	}
	return out
}

// header is the table's first row, with the extra columns.
func header(extra []extraColumn) []string {
	h := []string{"QUEUE", "ROLE", "MESSAGES", "READY", "UNACKED", "CONSUMERS", "PUBLISH/s", "DELIVER/s", "NOTE"}
	for i, c := range extra {
		h = slices.Insert(h, 5+i, c.name)
	}
	return h
}

// numeric tells the right-aligned columns of a table with extra columns.
func numeric(extra []extraColumn) func(col int) bool {
	last := 7 + len(extra)
	return func(col int) bool { return col >= 2 && col <= last }
}

// WriteText writes one table per vhost and a summary line. A row that
// needs attention starts with "!" and says why in its NOTE column.
func WriteText(w io.Writer, r *Report, opts TextOptions) error {
	var b strings.Builder
	if r.Server != "" {
		fmt.Fprintf(&b, "Broker %s", r.Server)
		if r.Version != "" {
			fmt.Fprintf(&b, " (RabbitMQ %s)", r.Version)
		}
		b.WriteString("\n\n")
	}
	for _, v := range r.Vhosts {
		fmt.Fprintf(&b, "vhost %s", v.Name)
		if v.Missing {
			b.WriteString(" (missing on the broker)")
		}
		b.WriteString("\n")
		switch {
		case len(v.Queues) > 0:
			extra := columnsFor(v.Queues)
			rows := [][]string{header(extra)}
			marks := []Severity{""}
			for _, q := range v.Queues {
				rows, marks = append(rows, row(q, extra)), append(marks, severity(q))
			}
			writeTable(&b, rows, marks, numeric(extra), opts)
			b.WriteString("\n")
		case len(v.Links) == 0:
			b.WriteString("  (the file declares no queue here)\n\n")
		}
		if len(v.Links) > 0 {
			writeLinks(&b, v.Links, opts)
		}
	}
	b.WriteString(summary(r) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeLinks writes a vhost's shovels and federation links as a table.
func writeLinks(b *strings.Builder, links []Link, opts TextOptions) {
	rows := [][]string{{"LINK", "STATE", "NOTE"}}
	marks := []Severity{""}
	for _, l := range links {
		state := l.State
		if state == "" {
			state = "-"
		}
		var notes []string
		for _, p := range l.Problems {
			notes = append(notes, p.Message)
		}
		rows, marks = append(rows, []string{l.Label(), state, strings.Join(notes, "; ")}), append(marks, worst(l.Problems))
	}
	writeTable(b, rows, marks, func(int) bool { return false }, opts)
	b.WriteString("\n")
}

// writeTable writes rows (the header first) in columns, right-aligning
// the numeric ones; a row whose mark is a severity starts with "!" (and
// is coloured with opts.Color).
func writeTable(b *strings.Builder, rows [][]string, marks []Severity, numeric func(col int) bool, opts TextOptions) {
	widths := make([]int, len(rows[0]))
	for _, cells := range rows {
		for i, c := range cells {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for i, cells := range rows {
		mark, color := "  ", ""
		switch marks[i] {
		case Alert:
			mark, color = "! ", ansiRed
		case Warning:
			mark, color = "! ", ansiYellow
		}
		line := mark + pad(cells, widths, numeric)
		if opts.Color && color != "" {
			line = color + line + ansiReset
		}
		b.WriteString(line + "\n")
	}
}

// pad lays cells out in columns two spaces apart, without trailing blanks.
func pad(cells []string, widths []int, numeric func(col int) bool) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString("  ")
		}
		gap := strings.Repeat(" ", widths[i]-len([]rune(c)))
		if numeric(i) {
			b.WriteString(gap + c)
		} else {
			b.WriteString(c + gap)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// severity is the worst severity of q's problems ("" when none).
func severity(q Queue) Severity { return worst(q.Problems) }

// worst is the worst severity of ps ("" when none).
func worst(ps []Problem) Severity {
	var s Severity
	for _, p := range ps {
		if p.Severity == Alert {
			return Alert
		}
		s = Warning
	}
	return s
}

// row is q's row, with the extra columns.
func row(q Queue, extra []extraColumn) []string {
	cells := []string{q.Name, roleText(q), "-", "-", "-", "-", "-", "-"}
	if q.Present && q.Known {
		cells[2] = strconv.FormatInt(q.Messages, 10)
		cells[3] = strconv.FormatInt(q.Ready, 10)
		cells[4] = strconv.FormatInt(q.Unacked, 10)
		cells[5] = strconv.FormatInt(q.Consumers, 10)
		cells[6] = rate(q.PublishRate)
		cells[7] = rate(q.DeliverRate)
	}
	for i, c := range extra {
		d := "-"
		if n := c.count(q); q.Present && q.Known && n != nil {
			d = strconv.FormatInt(*n, 10)
		}
		cells = slices.Insert(cells, 5+i, d)
	}
	var notes []string
	for _, p := range q.Problems {
		notes = append(notes, p.Message)
	}
	if q.Present && !q.Known && !q.Unreachable && q.Stopped == nil {
		notes = append(notes, "no statistics from the broker yet")
	}
	return append(cells, strings.Join(notes, "; "))
}

func roleText(q Queue) string {
	switch q.Role {
	case topology.RoleDeadLetter:
		return "dlq"
	case topology.RoleDelay:
		if q.Delay > 0 {
			return "delay " + loader.FormatDuration(q.Delay)
		}
		return "delay"
	}
	return "working"
}

func rate(r float64) string { return strconv.FormatFloat(r, 'f', 1, 64) }

// summary is the last line: how many queues, and what needs attention.
func summary(r *Report) string {
	queues, alerts, warnings := r.Counts()
	links := 0
	for _, v := range r.Vhosts {
		links += len(v.Links)
	}
	what := countOf(queues, "queue")
	if links > 0 {
		what += " and " + countOf(links, "link")
	}
	s := fmt.Sprintf("Status: %s in %s", what, countOf(len(r.Vhosts), "vhost"))
	if alerts == 0 && warnings == 0 {
		return s + ": nothing needs attention."
	}
	return fmt.Sprintf("%s: %s, %s.", s, countOf(alerts, "alert"), countOf(warnings, "warning"))
}

func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// JSON shapes (format_version 1).
type jsonReport struct {
	FormatVersion string      `json:"format_version"`
	Server        string      `json:"server,omitempty"`
	Version       string      `json:"rabbitmq_version,omitempty"`
	OK            bool        `json:"ok"`
	Strict        bool        `json:"strict"`
	Summary       jsonSummary `json:"summary"`
	Vhosts        []jsonVhost `json:"vhosts"`
}

type jsonSummary struct {
	Queues   int `json:"queues"`
	Alerts   int `json:"alerts"`
	Warnings int `json:"warnings"`
}

type jsonVhost struct {
	Name    string      `json:"name"`
	Missing bool        `json:"missing"`
	Queues  []jsonQueue `json:"queues"`
	Links   []jsonLink  `json:"links,omitempty"`
}

// jsonLink is a shovel or a federation link (added in format_version 1:
// absent for a vhost that declares none).
type jsonLink struct {
	Kind     string        `json:"kind"`
	Name     string        `json:"name"`
	Target   string        `json:"target,omitempty"`
	Exists   bool          `json:"exists"`
	State    string        `json:"state,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Problems []jsonProblem `json:"problems"`
}

// jsonProblem is a Problem in the report (not the model's struct tags:
// a field renamed there does not change the report).
type jsonProblem struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// problemsJSON are ps in the report: [] for none.
func problemsJSON(ps []Problem) []jsonProblem {
	out := make([]jsonProblem, len(ps))
	for i, p := range ps {
		out[i] = jsonProblem{Kind: string(p.Kind), Severity: string(p.Severity), Message: p.Message}
	}
	return out
}

type jsonQueue struct {
	Name            string        `json:"name"`
	Role            string        `json:"role"`
	DeadLettersFrom []string      `json:"dead_letters_from,omitempty"`
	ReturnsTo       []string      `json:"returns_to,omitempty"`
	DelayMS         int64         `json:"delay_ms,omitempty"`
	MaxDepth        *int64        `json:"alert_max_depth,omitempty"`
	Present         bool          `json:"present"`
	StatsKnown      bool          `json:"stats_known"`
	Type            string        `json:"type,omitempty"`
	State           string        `json:"state,omitempty"`
	Node            string        `json:"node,omitempty"`
	Members         []string      `json:"members,omitempty"`
	Online          *[]string     `json:"online,omitempty"`
	Messages        int64         `json:"messages"`
	Ready           int64         `json:"messages_ready"`
	Unacked         int64         `json:"messages_unacknowledged"`
	Delayed         *int64        `json:"messages_delayed,omitempty"`
	DeadLettering   *int64        `json:"messages_dlx,omitempty"`
	Consumers       int64         `json:"consumers"`
	PublishRate     float64       `json:"publish_rate"`
	DeliverRate     float64       `json:"deliver_rate"`
	Problems        []jsonProblem `json:"problems"`
}

// WriteJSON writes the report as versioned JSON. "ok" is false when the
// check fails (alerts; warnings too when strict).
func WriteJSON(w io.Writer, r *Report) error {
	queues, alerts, warnings := r.Counts()
	out := jsonReport{
		FormatVersion: FormatVersion, Server: r.Server, Version: r.Version,
		OK: r.OK(), Strict: r.Strict,
		Summary: jsonSummary{Queues: queues, Alerts: alerts, Warnings: warnings},
		Vhosts:  []jsonVhost{},
	}
	for _, v := range r.Vhosts {
		jv := jsonVhost{Name: v.Name, Missing: v.Missing, Queues: []jsonQueue{}}
		for _, q := range v.Queues {
			var online *[]string
			if len(q.Members) > 0 {
				o := q.Online
				if o == nil {
					o = []string{} // every member is down: say so, not "unknown"
				}
				online = &o
			}
			jv.Queues = append(jv.Queues, jsonQueue{
				Name: q.Name, Role: string(q.Role), DeadLettersFrom: q.DeadLettersFrom, ReturnsTo: q.ReturnsTo,
				DelayMS: q.Delay, MaxDepth: q.MaxDepth, Present: q.Present, StatsKnown: q.Known,
				Type: q.Type, State: q.State, Node: q.Node, Members: q.Members, Online: online, Messages: q.Messages, Ready: q.Ready, Unacked: q.Unacked, Delayed: q.Delayed, DeadLettering: q.DeadLettering,
				Consumers: q.Consumers, PublishRate: q.PublishRate, DeliverRate: q.DeliverRate, Problems: problemsJSON(q.Problems),
			})
		}
		for _, l := range v.Links {
			jv.Links = append(jv.Links, jsonLink{Kind: l.Kind, Name: l.Name, Target: l.Target, Exists: l.Exists, State: l.State, Reason: l.Reason, Problems: problemsJSON(l.Problems)})
		}
		out.Vhosts = append(out.Vhosts, jv)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
