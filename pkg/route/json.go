package route

import (
	"encoding/json"
	"io"

	"github.com/mqctl/mqctl/pkg/routejson"
)

// WriteJSON writes trace t as "mqctl route -o json" prints it: its public
// form (routejson), indented.
func WriteJSON(w io.Writer, t Trace) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(traceJSON(t))
}

func traceJSON(t Trace) routejson.Trace {
	return routejson.Trace{Vhost: t.Vhost, Publish: resultJSON(t.Publish), Hops: mapAll(t.Hops, hopJSON)}
}

// mapAll maps each element of s with f, keeping a nil slice nil (null in
// JSON) and an empty one empty ([]).
func mapAll[S, D any](s []S, f func(S) D) []D {
	if s == nil {
		return nil
	}
	out := make([]D, len(s))
	for i, e := range s {
		out[i] = f(e)
	}
	return out
}

func resultJSON(r Result) routejson.Result {
	return routejson.Result{
		Message: routejson.Message{
			Exchange: r.Message.Exchange, RoutingKey: r.Message.RoutingKey,
			Headers: r.Message.Headers, Expiration: r.Message.Expiration,
		},
		Deliveries:  mapAll(r.Deliveries, deliveryJSON),
		Problems:    r.Problems,
		Unsimulated: r.Unsimulated,
		OneOf:       mapAll(r.OneOf, choiceJSON),
		DirectReply: r.DirectReply,
	}
}

func stepJSON(s Step) routejson.Step {
	return routejson.Step{
		Exchange: s.Exchange, Via: s.Via, BindingKey: s.BindingKey, To: s.To, ToType: s.ToType,
		ExchangeType: s.ExchangeType, BindingArgs: s.BindingArgs,
	}
}

func deliveryJSON(d Delivery) routejson.Delivery {
	return routejson.Delivery{Queue: d.Queue, Path: mapAll(d.Path, stepJSON)}
}

func targetJSON(t Target) routejson.Target {
	return routejson.Target{Name: t.Name, Type: t.Type, Bindings: t.Bindings}
}

func choiceJSON(c Choice) routejson.Choice {
	out := routejson.Choice{Exchange: c.Exchange, Path: mapAll(c.Path, stepJSON), Among: mapAll(c.Among, targetJSON), Random: c.Random}
	if c.Picked != nil {
		p := targetJSON(*c.Picked)
		out.Picked = &p
	}
	return out
}

func hopJSON(h Hop) routejson.Hop {
	out := routejson.Hop{
		Queue: h.Queue, Path: mapAll(h.Path, stepJSON), Next: mapAll(h.Next, deadLetterHopJSON),
		Loop: h.Loop, Truncated: h.Truncated, DeliveryLimit: h.DeliveryLimit,
	}
	if d := h.DelayedRetry; d != nil {
		out.DelayedRetry = &routejson.DelayedRetry{Type: d.Type, MinMS: d.MinMS, MaxMS: d.MaxMS, MaxIsMin: d.MaxIsMin}
	}
	if a := h.Arrival; a != nil {
		out.Arrival = &routejson.Arrival{Reason: string(a.Reason), Refused: a.Refused, Why: a.Why, Unsure: a.Unsure}
	}
	return out
}

func deadLetterHopJSON(n DeadLetterHop) routejson.DeadLetterHop {
	r := n.Route
	return routejson.DeadLetterHop{
		Route: routejson.DeadLetterRoute{
			Queue: r.Queue, Reason: string(r.Reason), Configured: r.Configured, Exchange: r.Exchange,
			RoutingKey: r.RoutingKey, KeyFromMessage: r.KeyFromMessage, ExchangeMissing: r.ExchangeMissing,
			Cycles: r.Cycles, Result: resultJSON(r.Result), Held: r.Held,
		},
		Hops: mapAll(n.Hops, hopJSON), Loop: n.Loop, Dropped: n.Dropped, ExpiresAfterMS: n.ExpiresAfterMS,
	}
}
