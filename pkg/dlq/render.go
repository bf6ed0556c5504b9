package dlq

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
)

// FormatVersion is the version of the JSON documents of peek and replay.
const FormatVersion = 1

// DefaultMaxBody is how many bytes of a body peek shows unless told.
const DefaultMaxBody = 1024

// PeekRender configures the rendering of a peek.
type PeekRender struct {
	Vhost string
	// MaxBody caps the body bytes shown; 0 shows whole bodies.
	MaxBody int
	// Raw shows binary bodies as base64 instead of a hex dump.
	Raw bool
	// Override is applied to the "replay to" line.
	Override Override
}

// WritePeekText writes the human view of a peek.
func WritePeekText(w io.Writer, res *PeekResult, o PeekRender) error {
	var b strings.Builder
	n := len(res.Messages)
	switch {
	case res.Uncounted:
		fmt.Fprintf(&b, "Queue %q (vhost %q): its count came back 0, yet it holds messages (RabbitMQ answers 0 for a quorum queue whose leader does not answer within 250 ms, whatever it holds; or they arrived since); showing the first %s it holds. They stay in the queue, in order, marked redelivered.\n",
			res.Queue, o.Vhost, plural(n, "message"))
	case res.InQueue == 0 && res.Delayed > 0:
		fmt.Fprintf(&b, "Queue %q (vhost %q) has no message ready to read: %s for a delayed retry (%s); peek again once it is over.\n", res.Queue, o.Vhost, waiting(res.Delayed), res.DelayedRetry)
	case res.InQueue == 0:
		fmt.Fprintf(&b, "Queue %q (vhost %q) is empty.\n", res.Queue, o.Vhost)
	case n == 0:
		fmt.Fprintf(&b, "Queue %q (vhost %q): %s, none could be read (another consumer took them?).\n", res.Queue, o.Vhost, plural(res.InQueue, "message"))
	default:
		fmt.Fprintf(&b, "Queue %q (vhost %q): %s; showing %s. They stay in the queue, in order, marked redelivered.\n",
			res.Queue, o.Vhost, plural(res.InQueue, "message"), showing(n, res.InQueue))
	}
	for i := range res.Messages {
		b.WriteString("\n")
		writeMessageText(&b, &res.Messages[i], o)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func showing(n, total int) string {
	switch {
	case n >= total && n == 1:
		return "it"
	case n >= total:
		return fmt.Sprintf("all %d", n)
	case n == 1:
		return "the first"
	default:
		return fmt.Sprintf("the first %d", n)
	}
}

const labelWidth = 14

func field(b *strings.Builder, label, value string) {
	fmt.Fprintf(b, "  %-*s%s\n", labelWidth, label, value)
}

// continuation indents further lines of a field.
var continuation = strings.Repeat(" ", 2+labelWidth)

func writeMessageText(b *strings.Builder, m *Message, o PeekRender) {
	head := fmt.Sprintf("#%d", m.Index)
	if m.Properties.MessageID != "" {
		head += fmt.Sprintf("  message id %q", m.Properties.MessageID)
	} else {
		head += "  (no message id)"
	}
	if m.Redelivered {
		head += "  (redelivered)"
	}
	b.WriteString(head + "\n")
	field(b, "arrived via", fmt.Sprintf("exchange %q, routing key %q", m.Exchange, m.RoutingKey))
	if !m.Properties.Timestamp.IsZero() {
		field(b, "timestamp", m.Properties.Timestamp.Format(time.RFC3339))
	}
	if props := propertyPairs(m.Properties); len(props) > 0 {
		field(b, "properties", strings.Join(props, " "))
	}
	keys := shownHeaderKeys(m.Headers)
	for i, k := range keys {
		label := ""
		if i == 0 {
			label = "headers"
		}
		field(b, label, k+" = "+formatValue(m.Headers[k])+countNote(k))
	}
	for i, d := range m.Deaths.Entries {
		label := ""
		if i == 0 {
			label = "x-death"
		}
		field(b, label, fmt.Sprintf("%d. %s", i+1, describeDeath(d)))
	}
	for _, p := range m.Deaths.Problems {
		field(b, "x-death", "problem: "+p)
	}
	if m.Deaths.First.Known {
		f := m.Deaths.First
		field(b, "first death", fmt.Sprintf("%s from queue %q (exchange %q)", f.Reason, f.Queue, f.Exchange))
	}
	t, skip := Choose(m, o.Override)
	if skip != nil {
		field(b, "replay", "skipped: "+skip.Detail)
	} else {
		field(b, "replay to", describeTarget(t))
	}
	writeBodyText(b, m, o)
}

func propertyPairs(p Properties) []string {
	var out []string
	add := func(k, v string) {
		if v != "" {
			out = append(out, k+"="+v)
		}
	}
	quote := func(s string) string {
		if s == "" {
			return ""
		}
		return strconv.Quote(s)
	}
	add("content-type", p.ContentType)
	add("content-encoding", p.ContentEncoding)
	if p.DeliveryMode != 0 {
		add("delivery-mode", strconv.Itoa(int(p.DeliveryMode)))
	}
	if p.Priority != 0 {
		add("priority", strconv.Itoa(int(p.Priority)))
	}
	add("correlation-id", quote(p.CorrelationID))
	add("reply-to", quote(p.ReplyTo))
	add("expiration", quote(p.Expiration))
	add("type", quote(p.Type))
	add("user-id", quote(p.UserID))
	add("app-id", quote(p.AppID))
	return out
}

// countNote says what a delivery counter the broker sets counts: the
// peeks of this DLQ too (each returns what it read with basic.nack), not
// only the attempts where the message died. "" for another header.
func countNote(k string) string {
	switch k {
	case HeaderAcquiredCount:
		return " (how often a queue handed it out, this DLQ's peeks included; replay removes it)"
	case HeaderDeliveryCount:
		return " (the deliveries a quorum queue counted, this DLQ's peeks included before RabbitMQ 4.3; replay removes it)"
	}
	return ""
}

// shownHeaderKeys are the headers shown as such: the dead-lettering ones
// are shown decoded.
func shownHeaderKeys(h amqp.Table) []string {
	var keys []string
	for k := range h {
		if !slices.Contains(deathHeaders, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func describeDeath(d Death) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s from queue %q", d.Reason, d.Queue)
	var meta []string
	if d.Count != 0 {
		meta = append(meta, fmt.Sprintf("count %d", d.Count))
	}
	if !d.Time.IsZero() {
		meta = append(meta, "at "+d.Time.Format(time.RFC3339))
	}
	if d.OriginalExpiration != "" {
		meta = append(meta, fmt.Sprintf("original expiration %s ms", d.OriginalExpiration))
	}
	if len(meta) > 0 {
		b.WriteString(" (" + strings.Join(meta, ", ") + ")")
	}
	fmt.Fprintf(&b, "; it had been published to exchange %q with %s", d.Exchange, describeKeys(d.RoutingKeys))
	return b.String()
}

func describeKeys(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	switch len(keys) {
	case 0:
		return "no routing key"
	case 1:
		return "routing key " + q[0]
	default:
		return fmt.Sprintf("routing key %s and CC %s", q[0], strings.Join(q[1:], ", "))
	}
}

func describeTarget(t Target) string {
	s := fmt.Sprintf("exchange %q, %s", t.Exchange, describeKeys(append([]string{t.RoutingKey}, t.CC...)))
	return s + " (from " + t.From + ")"
}

func writeBodyText(b *strings.Builder, m *Message, o PeekRender) {
	body := m.Body
	if len(body) == 0 {
		field(b, "body", "empty")
		return
	}
	shown, truncated := clip(body, o.MaxBody)
	text := isText(body) || (truncated && isText(shown))
	if text {
		shown = trimRune(shown)
	}
	kind := "binary, hex dump"
	switch {
	case text:
		kind = "text"
	case o.Raw:
		kind = "binary, base64"
	}
	desc := fmt.Sprintf("%s, %s", plural(len(body), "byte"), kind)
	if truncated {
		desc += fmt.Sprintf(" (first %d shown; --max-body 0 shows all)", len(shown))
	}
	field(b, "body", desc+":")
	var lines []string
	switch {
	case text:
		lines = strings.Split(strings.TrimRight(string(shown), "\n"), "\n")
	case o.Raw:
		enc := base64.StdEncoding.EncodeToString(shown)
		for len(enc) > 76 {
			lines = append(lines, enc[:76])
			enc = enc[76:]
		}
		lines = append(lines, enc)
	default:
		lines = strings.Split(strings.TrimRight(hex.Dump(shown), "\n"), "\n")
	}
	for _, l := range lines {
		b.WriteString("    " + strings.TrimRight(l, " \t\r") + "\n")
	}
}

// clip cuts body to max bytes (0: no limit).
func clip(body []byte, max int) ([]byte, bool) {
	if max <= 0 || len(body) <= max {
		return body, false
	}
	return body[:max], true
}

// trimRune drops a rune cut in half at the end of a clipped text.
func trimRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

// isText reports whether body is valid UTF-8 made of printable characters
// and ordinary whitespace.
func isText(body []byte) bool {
	if !utf8.Valid(body) {
		return false
	}
	for _, r := range string(body) {
		if r == '\n' || r == '\r' || r == '\t' {
			continue
		}
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// formatValue renders an AMQP field value on one line.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "void"
	case string:
		return strconv.Quote(x)
	case []byte:
		if len(x) > 32 {
			return fmt.Sprintf("bytes 0x%s… (%d bytes)", hex.EncodeToString(x[:32]), len(x))
		}
		return "bytes 0x" + hex.EncodeToString(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case amqp.Decimal:
		return decimalString(x)
	case amqp.Table:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + " = " + formatValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func decimalString(d amqp.Decimal) string {
	r := new(big.Rat).SetFrac(big.NewInt(int64(d.Value)), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	return r.FloatString(int(d.Scale))
}

// jsonValue turns an AMQP field value into plain JSON: timestamps as
// RFC 3339 strings, byte arrays as base64 strings, decimals as strings.
func jsonValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case amqp.Decimal:
		return decimalString(x)
	case amqp.Table:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v
}

type peekJSON struct {
	FormatVersion   int    `json:"format_version"`
	Vhost           string `json:"vhost"`
	Queue           string `json:"queue"`
	MessagesInQueue int    `json:"messages_in_queue"`
	// Uncounted: the queue's count was 0, yet it held messages:
	// messages_in_queue is how many were read (PeekResult.Uncounted).
	Uncounted bool          `json:"uncounted,omitempty"`
	Messages  []messageJSON `json:"messages"`
}

type messageJSON struct {
	Index         int             `json:"index"`
	Exchange      string          `json:"exchange"`
	RoutingKey    string          `json:"routing_key"`
	Redelivered   bool            `json:"redelivered"`
	Properties    propertiesJSON  `json:"properties"`
	Headers       map[string]any  `json:"headers,omitempty"`
	Deaths        []deathJSON     `json:"deaths,omitempty"`
	FirstDeath    *firstDeathJSON `json:"first_death,omitempty"`
	DeathProblems []string        `json:"death_problems,omitempty"`
	ReplayTo      *targetJSON     `json:"replay_to,omitempty"`
	ReplaySkipped string          `json:"replay_skipped,omitempty"`
	BodySize      int             `json:"body_size"`
	BodyEncoding  string          `json:"body_encoding"`
	Body          string          `json:"body"`
	BodyTruncated bool            `json:"body_truncated,omitempty"`
}

// WritePeekJSON writes the versioned JSON view of a peek. Header values
// that JSON lacks are strings: timestamps in RFC 3339, byte arrays in
// base64, decimals in decimal notation. A body is "text" when it is
// printable UTF-8, else "base64"; --max-body applies.
func WritePeekJSON(w io.Writer, res *PeekResult, o PeekRender) error {
	doc := peekJSON{FormatVersion: FormatVersion, Vhost: o.Vhost, Queue: res.Queue, MessagesInQueue: res.InQueue, Uncounted: res.Uncounted, Messages: []messageJSON{}}
	for i := range res.Messages {
		m := &res.Messages[i]
		mj := messageJSON{
			Index: m.Index, Exchange: m.Exchange, RoutingKey: m.RoutingKey, Redelivered: m.Redelivered,
			Properties: toPropertiesJSON(m.Properties), Deaths: toDeathsJSON(m.Deaths.Entries), DeathProblems: m.Deaths.Problems,
			BodySize: len(m.Body),
		}
		if keys := shownHeaderKeys(m.Headers); len(keys) > 0 {
			mj.Headers = map[string]any{}
			for _, k := range keys {
				mj.Headers[k] = jsonValue(m.Headers[k])
			}
		}
		if m.Deaths.First.Known {
			mj.FirstDeath = toFirstDeathJSON(m.Deaths.First)
		}
		if t, skip := Choose(m, o.Override); skip != nil {
			mj.ReplaySkipped = skip.Detail
		} else {
			mj.ReplayTo = toTargetJSON(&t)
		}
		shown, truncated := clip(m.Body, o.MaxBody)
		mj.BodyTruncated = truncated
		if isText(m.Body) || (truncated && isText(trimRune(shown))) {
			mj.BodyEncoding, mj.Body = "text", string(trimRune(shown))
		} else {
			mj.BodyEncoding, mj.Body = "base64", base64.StdEncoding.EncodeToString(shown)
		}
		doc.Messages = append(doc.Messages, mj)
	}
	return writeJSON(w, doc)
}

func writeJSON(w io.Writer, doc any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ReplayRender configures the rendering of a replay report.
type ReplayRender struct {
	Vhost string
	// MaxLines caps the lines listed per kind of problem (0: 20).
	MaxLines int
}

// WriteReplayText writes the human view of a replay.
func WriteReplayText(w io.Writer, rep *Report, o ReplayRender) error {
	if o.MaxLines <= 0 {
		o.MaxLines = 20
	}
	var b strings.Builder
	if rep.DryRun {
		b.WriteString("Dry run: nothing is published or removed; the messages read go back to the queue, marked redelivered.\n")
	}
	switch {
	case rep.Uncounted:
		limit := "replaying what it holds"
		if rep.Limit < math.MaxInt {
			limit = fmt.Sprintf("replaying up to the first %d (--limit)", rep.Limit)
		}
		fmt.Fprintf(&b, "Queue %q (vhost %q): its count came back 0, yet it holds messages (RabbitMQ answers 0 for a quorum queue whose leader does not answer within 250 ms, whatever it holds; or they arrived since); %s.\n", rep.Queue, o.Vhost, limit)
	case rep.InQueue == 0 && rep.Delayed > 0:
		fmt.Fprintf(&b, "Queue %q (vhost %q) has no message ready to replay: %s for a delayed retry (%s); run the replay again once it is over.\n", rep.Queue, o.Vhost, waiting(rep.Delayed), rep.DelayedRetry)
	case rep.InQueue == 0:
		fmt.Fprintf(&b, "Queue %q (vhost %q) is empty: nothing to replay.\n", rep.Queue, o.Vhost)
	case rep.Limit < rep.InQueue:
		fmt.Fprintf(&b, "Queue %q (vhost %q): %s; replaying the first %d (--limit).\n", rep.Queue, o.Vhost, plural(rep.InQueue, "message"), rep.Limit)
	default:
		fmt.Fprintf(&b, "Queue %q (vhost %q): %s; replaying %s.\n", rep.Queue, o.Vhost, plural(rep.InQueue, "message"), showingAll(rep.InQueue))
	}
	for _, action := range []string{ActionSkipped, ActionFailed} {
		listed := 0
		more := 0
		for _, oc := range rep.Outcomes {
			if oc.Action != action || oc.Kind == SkipOtherOrigin {
				continue // the summary counts those --from-queue leaves
			}
			if listed == o.MaxLines {
				more++
				continue
			}
			listed++
			fmt.Fprintf(&b, "  %s #%d%s: %s\n", action, oc.Index, idSuffix(oc.MessageID), oc.Reason)
		}
		if more > 0 {
			fmt.Fprintf(&b, "  … and %d more %s (-o json lists every message)\n", more, action)
		}
	}
	writeCopies(&b, rep)
	var notes []string
	noted := map[string]int{}
	for _, oc := range rep.Outcomes {
		for _, n := range oc.Notes {
			if noted[n] == 0 {
				notes = append(notes, n)
			}
			noted[n]++
		}
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "  note (%s): %s\n", plural(noted[n], "message"), n)
	}
	for _, ov := range rep.Overflows {
		if !ov.Lost || rep.Refusal == nil {
			fmt.Fprintf(&b, "  note: %s\n", ov)
		}
	}
	writeDestinations(&b, rep)
	b.WriteString(summaryLine(rep) + "\n")
	if rep.Refusal != nil {
		fmt.Fprintf(&b, "Refused: the replay would publish nothing without --allow-data-loss: %s.\n", rep.Refusal.Detail())
	}
	if rep.InQueue > 0 && rep.DelayedRetry != "" && rep.Skipped+rep.Failed > 0 {
		left, verb, pronoun := "message", "waits", "it"
		if n := rep.Skipped + rep.Failed; n > 1 {
			left, verb, pronoun = fmt.Sprintf("%d messages", n), "wait", "they"
		}
		fmt.Fprintf(&b, "The %s left in %q went back with a nack and %s for a delayed retry (%s) before %s can be read again", left, rep.Queue, verb, rep.DelayedRetry, pronoun)
		if rep.Delayed > 0 {
			fmt.Fprintf(&b, " (the broker counts %d held back)", rep.Delayed)
		}
		b.WriteString("; run the replay again once it is over.\n")
	}
	if rep.Interrupted != nil {
		fmt.Fprintf(&b, "Interrupted: %v.\nEvery message not replayed is still in %q (the one in flight may have been delivered as well); run the replay again to continue.\n", rep.Interrupted, rep.Queue)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCopies names, per queue, the messages left in the DLQ that it took
// a copy of (Outcome.Copies): a replay run again as it is delivers
// another.
func writeCopies(b *strings.Builder, rep *Report) {
	var order []string
	byQueue := map[string][]string{}
	for _, oc := range rep.Outcomes {
		if oc.Action != ActionFailed {
			continue
		}
		for _, q := range oc.Copies {
			if byQueue[q] == nil {
				order = append(order, q)
			}
			byQueue[q] = append(byQueue[q], fmt.Sprintf("#%d", oc.Index))
		}
	}
	for _, q := range order {
		idx := byQueue[q]
		fmt.Fprintf(b, "  copies made: queue %q holds (or may hold) a copy of %s left in %q (%s): running the replay again as it is delivers another\n",
			q, plural(len(idx), "message"), rep.Queue, strings.Join(idx, ", "))
	}
}

func showingAll(n int) string {
	if n == 1 {
		return "it"
	}
	return fmt.Sprintf("all %d", n)
}

func idSuffix(id string) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf(" (message id %q)", id)
}

type destination struct {
	target Target
	count  int
	queues []string
	routed bool
}

// writeDestinations lists where the messages went, a group per target and
// origin queue (the queue the messages died in): each group says which
// queues got a copy where its messages did not die, and how to send them
// to their own queue alone. When the messages of the run died in several
// queues, that advice replays one origin at a time (--from-queue): one
// run with --routing-key Q would send every message to Q. A destination
// --to-exchange and --routing-key name together is the user's choice: it
// gets no such advice.
func writeDestinations(b *strings.Builder, rep *Report) {
	var order []string
	groups := map[string]*destination{}
	var origins []string
	for _, oc := range rep.Outcomes {
		if oc.Target == nil || (oc.Action != ActionReplayed && oc.Action != ActionWouldReplay) {
			continue
		}
		t := *oc.Target
		key := strings.Join(append([]string{t.Exchange, t.RoutingKey, t.From, t.OriginQueue}, t.CC...), "\x00")
		g := groups[key]
		if g == nil {
			g = &destination{target: t, queues: oc.Queues, routed: oc.Routed}
			groups[key] = g
			order = append(order, key)
		}
		g.count++
		if t.OriginQueue != "" && !slices.Contains(origins, t.OriginQueue) {
			origins = append(origins, t.OriginQueue)
		}
	}
	if len(order) == 0 {
		return
	}
	verb := "replayed to"
	if rep.DryRun {
		verb = "would go to"
	}
	fmt.Fprintf(b, "Destinations (messages %s):\n", verb)
	width := len(strconv.Itoa(rep.Replayed))
	pad := strings.Repeat(" ", width+4)
	for _, key := range order {
		g := groups[key]
		line := fmt.Sprintf("  %*d  %s", width, g.count, describeTarget(g.target))
		if g.routed {
			line += " → " + strings.Join(g.queues, ", ")
		}
		b.WriteString(line + "\n")
		origin := g.target.OriginQueue
		if origin == "" {
			continue
		}
		if len(origins) > 1 {
			fmt.Fprintf(b, "%sdied in %q\n", pad, origin)
		}
		if !g.routed || g.target.From == FromFlags {
			continue
		}
		var others []string
		for _, q := range g.queues {
			if q != origin {
				others = append(others, strconv.Quote(q))
			}
		}
		if len(others) > 0 {
			advice := fmt.Sprintf("--to-exchange \"\" --routing-key %s", origin)
			if len(origins) > 1 {
				advice = fmt.Sprintf("--from-queue %s %s (the others died elsewhere: --routing-key alone would send them to %q too)", origin, advice, origin)
			}
			fmt.Fprintf(b, "%snote: this also delivers a copy to %s, where these messages did not die; to send them only to %q, pass %s\n",
				pad, strings.Join(others, ", "), origin, advice)
		}
		if !slices.Contains(g.queues, origin) {
			why := "the bindings changed?"
			if g.target.From == FromDeathByFlags {
				why = "the --to-exchange or --routing-key given changed the route"
			}
			fmt.Fprintf(b, "%snote: this no longer reaches %q, where these messages died (%s)\n", pad, origin, why)
		}
	}
}

func summaryLine(rep *Report) string {
	kinds := func(action string) string {
		counts := map[string]int{}
		var names []string
		for _, oc := range rep.Outcomes {
			if oc.Action == action {
				if counts[oc.Kind] == 0 {
					names = append(names, oc.Kind)
				}
				counts[oc.Kind]++
			}
		}
		if len(names) == 0 {
			return ""
		}
		if len(names) == 1 {
			return " (" + names[0] + ")"
		}
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%d %s", counts[n], n)
		}
		return " (" + strings.Join(parts, ", ") + ")"
	}
	if rep.DryRun {
		return fmt.Sprintf("Dry run: would replay %d, skip %d%s, fail %d%s.", rep.Replayed, rep.Skipped, kinds(ActionSkipped), rep.Failed, kinds(ActionFailed))
	}
	return fmt.Sprintf("replayed %d, skipped %d%s, failed %d%s", rep.Replayed, rep.Skipped, kinds(ActionSkipped), rep.Failed, kinds(ActionFailed))
}

type replayJSON struct {
	FormatVersion   int    `json:"format_version"`
	Vhost           string `json:"vhost"`
	Queue           string `json:"queue"`
	DryRun          bool   `json:"dry_run"`
	MessagesInQueue int    `json:"messages_in_queue"`
	// Uncounted: the queue's count was 0, yet it held messages
	// (Report.Uncounted): messages_in_queue is 0, limit 0 when none was
	// asked.
	Uncounted   bool           `json:"uncounted,omitempty"`
	Limit       int            `json:"limit"`
	Summary     summaryJSON    `json:"summary"`
	Interrupted string         `json:"interrupted,omitempty"`
	Overflows   []overflowJSON `json:"overflows,omitempty"`
	Refusal     string         `json:"refusal,omitempty"`
	Messages    []outcomeJSON  `json:"messages"`
}

type summaryJSON struct {
	Replayed int `json:"replayed"`
	Skipped  int `json:"skipped"`
	Failed   int `json:"failed"`
}

// WriteReplayJSON writes the versioned JSON view of a replay: one entry
// per message taken, with its action (replayed, would-replay, skipped,
// failed), destination and reason.
func WriteReplayJSON(w io.Writer, rep *Report, o ReplayRender) error {
	doc := replayJSON{
		FormatVersion: FormatVersion, Vhost: o.Vhost, Queue: rep.Queue, DryRun: rep.DryRun,
		MessagesInQueue: rep.InQueue, Limit: min(rep.Limit, limitUnset(rep)), Uncounted: rep.Uncounted,
		Summary:  summaryJSON{Replayed: rep.Replayed, Skipped: rep.Skipped, Failed: rep.Failed},
		Messages: toOutcomesJSON(rep.Outcomes),
	}
	if rep.Interrupted != nil {
		doc.Interrupted = rep.Interrupted.Error()
	}
	doc.Overflows = toOverflowsJSON(rep.Overflows)
	if rep.Refusal != nil {
		doc.Refusal = rep.Refusal.Detail()
	}
	return writeJSON(w, doc)
}

// waiting is "1 message waits" or "N messages wait".
func waiting(n int) string {
	if n == 1 {
		return "1 message waits"
	}
	return plural(n, "message") + " wait"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// limitUnset is what the JSON view writes for rep's limit when it has none
// (an uncounted queue replayed whole: math.MaxInt): 0.
func limitUnset(rep *Report) int {
	if rep.Limit == math.MaxInt {
		return 0
	}
	return rep.Limit
}
