package dlq

import (
	"fmt"
	"slices"
	"strings"
)

// Units of a length limit.
const (
	UnitMessages = "messages"
	UnitBytes    = "bytes"
)

// Overflow is what a replay's messages do to a queue of their route whose
// overflow pushes its oldest messages out past a length limit (HeadDrop):
// what it holds ready (Held, messages or their bytes as Unit counts) and
// what the replay adds (Added) over Limit push out PushedOut (for bytes:
// messages holding that many bytes or more), dead letters of reason
// maxlen.
type Overflow struct {
	Queue     string `json:"queue"`
	Unit      string `json:"unit"`
	Held      int64  `json:"held"`
	Added     int64  `json:"added"`
	Limit     int64  `json:"limit"`
	PushedOut int64  `json:"pushed_out"`
	// Lost: RabbitMQ drops what is pushed out, Why says why. Otherwise it
	// is dead-lettered through Exchange, to DeadLetterQueues when known.
	Lost             bool     `json:"lost"`
	Why              string   `json:"why,omitempty"`
	Exchange         string   `json:"dead_letter_exchange,omitempty"`
	DeadLetterQueues []string `json:"dead_letter_queues,omitempty"`
	// Origins are the queues the messages reaching Queue died in.
	Origins []string `json:"-"`
}

// load is what a replay's messages add to one queue: how many, their
// bodies' bytes (what max-length-bytes counts), the queues they died in.
type load struct {
	messages, bytes int64
	origins         []string
}

// ready is what a queue holds ready (what a length limit counts); bytes
// is -1 when not read.
type ready struct {
	messages, bytes int64
}

// overflows returns, for queue q with limits h holding held, what adding
// add pushes out: an Overflow per limit it goes past (none when it fits).
// A byte limit is judged only when held.bytes was read.
func overflows(q string, h HeadDrop, held ready, add load) []Overflow {
	var out []Overflow
	for _, c := range []struct {
		has              bool
		unit             string
		limit, had, adds int64
	}{
		{h.HasLength, UnitMessages, h.MaxLength, held.messages, add.messages},
		{h.HasBytes && held.bytes >= 0, UnitBytes, h.MaxBytes, held.bytes, add.bytes},
	} {
		over := c.had + c.adds - c.limit
		if !c.has || c.adds == 0 || over <= 0 {
			continue
		}
		out = append(out, Overflow{
			Queue: q, Unit: c.unit, Held: c.had, Added: c.adds, Limit: c.limit, PushedOut: over,
			Lost: h.Fate.Dropped, Why: h.Fate.Why, Exchange: h.Fate.Exchange, DeadLetterQueues: h.Fate.Queues,
			Origins: add.origins,
		})
	}
	return out
}

// String says what the replay does to o's queue, for a note or a refusal.
func (o Overflow) String() string {
	limit, pushed := "max-length", "the oldest message"
	held := fmt.Sprintf("holds %s", plural(int(o.Held), "message"))
	adds := fmt.Sprintf("%d", o.Added)
	if o.PushedOut > 1 {
		pushed = fmt.Sprintf("the oldest %d messages", o.PushedOut)
	}
	if o.Unit == UnitBytes {
		limit, held = "max-length-bytes", fmt.Sprintf("holds %d bytes of ready messages", o.Held)
		adds, pushed = fmt.Sprintf("%d bytes", o.Added), fmt.Sprintf("its oldest messages, %d bytes or more", o.PushedOut)
	}
	return fmt.Sprintf("queue %q %s, its %s is %d (overflow drop-head), and the replay adds %s: the broker pushes out %s, %s",
		o.Queue, held, limit, o.Limit, adds, pushed, o.fate())
}

func (o Overflow) fate() string {
	switch {
	case o.Lost && o.PushedOut == 1 && o.Unit == UnitMessages:
		return "which is lost (" + o.Why + ")"
	case o.Lost:
		return "which are lost (" + o.Why + ")"
	case len(o.DeadLetterQueues) > 0:
		return fmt.Sprintf("dead-lettered to %s (exchange %q)", quoteAll(o.DeadLetterQueues), o.Exchange)
	default:
		return fmt.Sprintf("dead-lettered to exchange %q", o.Exchange)
	}
}

// DataLossError refuses a replay, before anything is published, whose
// messages would push older messages out of queues that lose them
// (Overflow.Lost).
type DataLossError struct {
	Queue     string
	Overflows []Overflow
}

func (e *DataLossError) Error() string {
	return fmt.Sprintf("replay of %q refused, nothing published: %s", e.Queue, e.Detail())
}

// Detail is what the replay would do, and how to avoid it.
func (e *DataLossError) Detail() string {
	desc := make([]string, len(e.Overflows))
	var queues, full, limits, origins []string
	for i, o := range e.Overflows {
		desc[i] = o.String()
		queues = appendNew(queues, fmt.Sprintf("%q", o.Queue))
		full = appendNew(full, o.Queue)
		limits = appendNew(limits, map[string]string{UnitMessages: "max-length", UnitBytes: "max-length-bytes"}[o.Unit])
		for _, q := range o.Origins {
			origins = appendNew(origins, q)
		}
	}
	return fmt.Sprintf("%s; make room in %s first (let its consumers catch up), raise its %s, or replay fewer messages (--limit, --from-queue)%s; --allow-data-loss replays anyway",
		strings.Join(desc, "; "), strings.Join(queues, " and "), strings.Join(limits, " and "), originAdvice(origins, full))
}

// originAdvice is how to send the messages that reach the full queues
// only to the queues they died in (origins), sparing the others their
// copies: none when they all died in a full one.
func originAdvice(origins, full []string) string {
	var others []string
	for _, q := range origins {
		if !slices.Contains(full, q) {
			others = append(others, q)
		}
	}
	switch {
	case len(others) == 0:
		return ""
	case len(origins) == 1:
		return fmt.Sprintf(", or only to %q, where they died (--to-exchange \"\" --routing-key %s)", others[0], others[0])
	case len(others) == 1:
		return fmt.Sprintf(", or those that died in %q only there (--from-queue %s --to-exchange \"\" --routing-key %s)", others[0], others[0], others[0])
	default:
		return fmt.Sprintf(", or those that died in %s each only there (--from-queue Q --to-exchange \"\" --routing-key Q)", quoteAll(others))
	}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
