package difftest

import (
	"fmt"
	"sort"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/randtopo"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// expiresAtOnce bounds the TTLs (ms) treated as "expires before anyone
// looks"; longer ones never expire during a run.
const expiresAtOnce = randtopo.ExpiresAtOnce

// maxHops stops a dead-letter cascade the simulator fails to end.
const maxHops = 32

// copyState is one copy of a message the simulator says sits in a queue.
type copyState struct {
	id    string
	queue string
	// msg is the message as it sits in the queue: for a dead letter, the
	// dead-letter exchange, its routing key and the x-death headers.
	msg     route.Message
	history []string
}

func (c copyState) key() string {
	return copyKey(c.id, c.queue, c.msg.Exchange, c.msg.RoutingKey, c.msg.Headers)
}

// loopError says the simulator dead-letters a message from queue to queue
// without end, no consumer involved: RabbitMQ 3.10-3.12 do that to a
// message rejected once and then expired around a loop of TTL queues.
type loopError struct {
	id      string
	history []string
}

func (e *loopError) Error() string {
	h := e.history
	if len(h) > 6 {
		h = append(append([]string(nil), h[:6]...), "…")
	}
	return fmt.Sprintf("message %s: the simulator dead-letters it more than %d times in a row without a consumer (%s)", e.id, maxHops, strings.Join(h, "; "))
}

// predictor turns simulator answers into the copies a run expects.
type predictor struct {
	sim *route.Simulator
	// passOn holds the queues that keep no message: those the simulator
	// says keep none (route.Simulator.OnArrival: an effective length limit
	// of 0 that drops the head dead-letters each as maxlen, a message TTL
	// of 0 expires it), and those whose effective message TTL is short
	// enough to expire it before anyone looks.
	passOn map[string]route.Reason
	queues []string
}

func newPredictor(v *topology.Vhost, ver rmqversion.Version) *predictor {
	p := &predictor{sim: route.NewWith(v, route.Options{Version: ver}), passOn: map[string]route.Reason{}, queues: v.QueueNames()}
	for _, q := range p.queues {
		if a := p.sim.OnArrival(q, route.Message{}); !a.Keeps() {
			p.passOn[q] = a.Reason
		} else if ttl, ok := p.sim.QueueArgs(q).Int("x-message-ttl"); ok && ttl < expiresAtOnce {
			p.passOn[q] = route.Expired
		}
	}
	return p
}

// refusal is how the simulator says the broker refuses a publish: "" when
// it does not; "internal", "not found" or "precondition failed" from its
// problems.
func refusal(r route.Result) string {
	if len(r.Deliveries) > 0 {
		return ""
	}
	for _, p := range r.Problems {
		switch {
		case strings.Contains(p, "is internal"):
			return "internal"
		case strings.Contains(p, "is not declared") && strings.HasPrefix(p, fmt.Sprintf("exchange %q", r.Message.Exchange)):
			return "not found"
		case strings.Contains(p, "PRECONDITION_FAILED"):
			return "precondition failed"
		}
	}
	return ""
}

// published returns the copies of m that settle in queues after the
// publish: a copy in a queue that expires it moves on as a dead letter,
// and with a per-message expiration of 0 every first copy does.
func (p *predictor) published(m Message, r route.Result) ([]copyState, error) {
	var out []copyState
	msg := m.Message
	msg.Expiration = m.Expiration // the case's property, which the publish carries
	for _, d := range r.Deliveries {
		c := copyState{id: m.ID, queue: d.Queue, msg: msg, history: []string{fmt.Sprintf("published, routed to %s via %s", d.Queue, describePath(d.Path))}}
		if err := p.settle(c, &out, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rejected returns where copy c goes when a consumer rejects it.
func (p *predictor) rejected(c copyState) ([]copyState, error) {
	var out []copyState
	if err := p.deadLetter(c, route.Rejected, &out, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// settle puts copy c where it stays: in its queue, or, where the queue
// keeps nothing (passOn, or the simulator's answer for this message, e.g.
// a first copy with expiration 0), where its dead letter settles.
func (p *predictor) settle(c copyState, out *[]copyState, depth int) error {
	reason, passes := p.passOn[c.queue]
	if a := p.sim.OnArrival(c.queue, c.msg); !a.Keeps() {
		reason, passes = a.Reason, true
	}
	switch {
	case passes && reason == "":
		return nil // refused
	case passes:
		return p.deadLetter(c, reason, out, depth)
	}
	*out = append(*out, c)
	return nil
}

func (p *predictor) deadLetter(c copyState, reason route.Reason, out *[]copyState, depth int) error {
	if depth > maxHops {
		return &loopError{id: c.id, history: c.history}
	}
	dl := p.sim.DeadLetter(c.queue, reason, c.msg)
	for _, d := range dl.Result.Deliveries {
		next := copyState{id: c.id, queue: d.Queue, msg: dl.Result.Message}
		next.history = append(append([]string(nil), c.history...), fmt.Sprintf("%s in %s, dead-lettered to %s via %s", reason, c.queue, d.Queue, describePath(d.Path)))
		if err := p.settle(next, out, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func describePath(path []route.Step) string {
	parts := make([]string, 0, len(path))
	for _, s := range path {
		ex := s.Exchange
		if ex == "" {
			ex = "(default)"
		}
		switch s.Via {
		case route.ViaAlternate:
			parts = append(parts, ex+" -alternate-> "+s.To)
		case route.ViaBinding:
			if len(s.BindingArgs) > 0 {
				parts = append(parts, fmt.Sprintf("%s -%s-> %s", ex, s.BindingArgs.Canonical(), s.To))
			} else {
				parts = append(parts, fmt.Sprintf("%s -[%s]-> %s", ex, s.BindingKey, s.To))
			}
		default:
			parts = append(parts, ex+" -> "+s.To)
		}
	}
	return strings.Join(parts, ", ")
}

// copyKey identifies a copy by what the broker shows of it: message id,
// queue, exchange, routing key, and the dead-letter history in the
// x-death and x-first-death-* headers. Two copies with one key cannot be
// told apart.
func copyKey(id, queue, exchange, routingKey string, headers map[string]any) string {
	return fmt.Sprintf("%s|%s|%s|%q|%s", id, queue, exchange, routingKey, deathSignature(headers))
}

// deathSignature renders the dead-letter headers of h: the x-first-death-*
// and x-last-death-* headers (3.13+) and, for each x-death entry in order,
// its queue, reason, count, exchange and routing keys. Fields the
// simulator does not model (time, original-expiration) are left out.
func deathSignature(h map[string]any) string {
	var sb strings.Builder
	for _, k := range []string{"x-first-death-queue", "x-first-death-reason", "x-first-death-exchange"} {
		if v, ok := h[k]; ok {
			fmt.Fprintf(&sb, "%s=%v ", strings.TrimPrefix(k, "x-first-death-"), v)
		}
	}
	for _, k := range []string{"x-last-death-queue", "x-last-death-reason", "x-last-death-exchange"} {
		if v, ok := h[k]; ok {
			fmt.Fprintf(&sb, "last-%s=%v ", strings.TrimPrefix(k, "x-last-death-"), v)
		}
	}
	deaths, ok := h["x-death"].([]any)
	if !ok {
		return strings.TrimSpace(sb.String())
	}
	for _, d := range deaths {
		t := asTable(d)
		var rks []string
		if l, ok := t["routing-keys"].([]any); ok {
			for _, k := range l {
				rks = append(rks, fmt.Sprint(k))
			}
		}
		fmt.Fprintf(&sb, "[%v %v x%v from %q keys %q]", t["queue"], t["reason"], topology.Normalize(t["count"]), t["exchange"], rks)
	}
	return sb.String()
}

// asTable returns an AMQP table (amqp.Table or map[string]any) as a map.
func asTable(v any) map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return t
	case amqp.Table:
		return t
	}
	return nil
}

// describeCopies renders copies' queues and histories for a report.
func describeCopies(cs []copyState) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s (%s) — %s", c.queue, describeState(c.msg), strings.Join(c.history, "; ")))
	}
	sort.Strings(out)
	return out
}

func describeState(m route.Message) string {
	ex := m.Exchange
	if ex == "" {
		ex = "(default)"
	}
	s := fmt.Sprintf("exchange %s, key %q", ex, m.RoutingKey)
	if sig := deathSignature(m.Headers); sig != "" {
		s += ", " + sig
	}
	return s
}
