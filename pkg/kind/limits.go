package kind

// vhostLimitsItem: a vhost's limits (SPEC §9), one item per vhost, named
// after it, whose settings are the limits set (limits: {max-queues: 10}).
var vhostLimitsItem = &ItemSpec{
	Shape:  Single,
	Doc:    "The vhost's limits (SPEC §9), set in place: the most connections and queues it accepts; -1 is no limit.",
	Loosen: looserLimits,
	Fields: []Field{
		{Name: "max-connections", Type: FieldInt, Min: -1, Help: "the most client connections the vhost accepts (-1: no limit, 0: none)"},
		{Name: "max-queues", Type: FieldInt, Min: -1, Help: "the most queues the vhost holds (-1: no limit, 0: none)"},
	},
}

// userLimitsItem: a user's limits, one item per user, named after it.
var userLimitsItem = &ItemSpec{
	Shape: Single,
	Doc:   "The user's limits (SPEC §9), set in place: the most connections and channels it may open; -1 is no limit.",
	Fields: []Field{
		{Name: "max-connections", Type: FieldInt, Min: -1, Help: "the most connections the user may open (-1: no limit)"},
		{Name: "max-channels", Type: FieldInt, Min: -1, Help: "the most channels the user may open (-1: no limit)"},
	},
}

// LoosenPhase is the apply phase of the writes that loosen a kind's
// settings (ItemSpec.Loosen): after the vhosts are written, before any
// declaration.
const LoosenPhase = 1

// looserLimits is vhost limits' ItemSpec.Loosen: per limit have sets, the
// looser of have's and want's (a negative limit, or none, is no limit).
// RabbitMQ checks max-queues when a queue is declared, and max-connections
// when a connection opens: a file that raises max-queues and adds queues
// had them refused (the limit was written after them), and every apply
// after stopped there again.
func looserLimits(have, want map[string]any) map[string]any {
	out := map[string]any{}
	looser := false
	for k, h := range have {
		hv, hok := integer(have, k)
		wv, wok := integer(want, k)
		switch {
		case !hok:
			out[k] = h
		case !wok:
			looser = true // no limit: left out
		case wv < 0 && hv >= 0:
			out[k], looser = wv, true // no limit
		case hv >= 0 && wv > hv:
			out[k], looser = wv, true
		default:
			out[k] = h
		}
	}
	if !looser {
		return nil
	}
	return out
}
