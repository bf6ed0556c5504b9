package preflight

import (
	"context"
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// tryer is what the preflight does with the objects of one kind that a
// throwaway vhost can try. The objects of a kind without one are untried:
// the version table alone judges them.
type tryer struct {
	kind kind.Kind
	// trial is the trial of the object c writes; false when the broker
	// validates nothing of it. ends are the exchanges a binding can start
	// from and the queues it can lead to (endsOf).
	trial func(c *plan.Change, ends *planEnds) (*Trial, bool)
	// size is how many arguments (or definition keys) a trial's object
	// has, -1 when that does not apply; held adds to out the shapes of
	// v's objects of the kind whose size want takes (nil: none are held
	// as shapes, every trial is tried).
	size func(tr *Trial) int
	held func(v *topology.Vhost, want func(size int) bool, out map[string]bool)
	// try declares the trial's shape in the throwaway vhost.
	try func(t *trier, ctx context.Context, tr *Trial) error
	// prepare, when set, returns the declarations the kind's trials need,
	// made in the phase before the kind's.
	prepare func(t *trier, trials []*Trial) []func(context.Context) error
	// whole says that apply writes an object of the kind in one request,
	// which the broker carries out or refuses whole: a plan whose only
	// change is such a write needs no throwaway vhost (Options.First).
	// Not so for a vhost (its settings are written after it is made) or
	// its limits (one request per limit).
	whole bool
}

// tryers are the kinds the preflight tries, in the order of its phases:
// each kind's declarations run once the kinds before it are done.
// Exchanges come first (bindings start from them), then the queues (and
// the ends the bindings need), the bindings, the policies, and last what
// changes the throwaway vhost itself: its default queue type would apply
// to queues declared after it, and a limit of max-queues 0 would refuse
// every queue after it. A kind with a type of its own (topology.Typed)
// takes its place in the registry's order (kind.VhostKinds) with a
// definedTryer and no code of its own.
var tryers = slices.Concat(objectTryers(), []tryer{
	{
		kind: kind.Vhost,
		trial: func(c *plan.Change, _ *planEnds) (*Trial, bool) {
			v, ok := c.After.(*plan.VhostMeta)
			if !ok || v.DefaultQueueType == "" {
				return nil, false // a name and a description: nothing the broker validates
			}
			return &Trial{Kind: c.Kind, Key: vhostKey(v.DefaultQueueType), Vhost: v}, true
		},
		size: func(*Trial) int { return -1 },
		held: func(v *topology.Vhost, _ func(int) bool, out map[string]bool) {
			if v.DefaultQueueType != "" {
				out[vhostKey(v.DefaultQueueType)] = true
			}
		},
		try: (*trier).vhostSettings,
	},
	{
		kind: kind.VhostLimits,
		trial: func(c *plan.Change, _ *planEnds) (*Trial, bool) {
			it, ok := c.After.(plan.ItemObject)
			if !ok {
				return nil, false
			}
			return &Trial{Kind: c.Kind, Key: "vhost_limits\x00" + it.Settings.Canonical(), Item: it.Item}, true
		},
		size: func(*Trial) int { return -1 },
		try:  (*trier).limits,
	},
})

// bindingTryer is the tryer of bindings.
var bindingTryer = tryer{
	kind:  kind.Binding,
	trial: bindingTrial,
	size:  func(tr *Trial) int { return len(tr.Binding.Arguments) },
	held:  heldBindings,
	try:   (*trier).binding,
	// A queue and an exchange to bind to, and an exchange of each
	// source shape the broker already holds.
	prepare: (*trier).ends,
	whole:   true,
}

// objectTryers are the tryers of a vhost's objects in the registry's
// order (kind.VhostKinds: exchanges, queues, bindings, the kinds of
// policy): bindings', and a definedTryer for each kind with a type of its
// own (topology.TypedOf).
func objectTryers() []tryer {
	var out []tryer
	for _, s := range kind.VhostKinds() {
		if s.Kind == kind.Binding {
			out = append(out, bindingTryer)
		} else if t, ok := topology.TypedOf(s.Kind); ok {
			out = append(out, definedTryer(s.Kind, t, declaredHooks[s.Kind]))
		}
	}
	return out
}

// tryerOf returns the tryer of kind k; false for a kind the preflight
// does not try.
func tryerOf(k kind.Kind) (tryer, bool) {
	for _, t := range tryers {
		if t.kind == k {
			return t, true
		}
	}
	return tryer{}, false
}

// declaredHooks are told what became of a kind's trial, where the
// preflight's later phases need it: an exchange's is the source its
// shape's bindings are tried from.
var declaredHooks = map[kind.Kind]func(t *trier, tr *Trial, name string, err error){
	kind.Exchange: (*trier).source,
}

// definedTryer is the tryer of kind k, a kind with a type of its own (t):
// a change's trial is the object it writes (Trial.Object), its shape is
// t's Definition's (shapeKey) and its size its arguments' count; the
// shapes held are those of a vhost's objects of the kind. It is tried as
// apply writes one, in one request (whole): a copy under a throwaway name
// written through the kind's broker driver (trier.write); declared, when
// set, is told what became of it.
func definedTryer(k kind.Kind, t topology.Typed, declared func(t *trier, tr *Trial, name string, err error)) tryer {
	def := t.Def()
	return tryer{
		kind: k,
		trial: func(c *plan.Change, _ *planEnds) (*Trial, bool) {
			o, ok := plan.Named(c.After)
			if !ok || o.Typed() != t {
				return nil, false
			}
			return &Trial{Kind: c.Kind, Key: shapeKey(string(k), def, o), Object: o}, true
		},
		size: func(tr *Trial) int { return len(def.Args(tr.Object)) },
		held: func(v *topology.Vhost, want func(int) bool, out map[string]bool) {
			m := t.In(v, k)
			for name := range m.Keys() {
				o, _ := m.Get(name)
				if o != nil && want(len(def.Args(o))) {
					out[shapeKey(string(k), def, o)] = true
				}
			}
		},
		try: func(tt *trier, ctx context.Context, tr *Trial) error {
			name := tt.name()
			err := tt.write(ctx, k, t.Renamed(tr.Object, name))
			if declared != nil {
				declared(tt, tr, name, err)
			}
			return err
		},
		whole: true,
	}
}

// bindingTrial is the trial of a binding, on the shape of its source
// (and, from an exchange type that may judge it, of its destination).
func bindingTrial(c *plan.Change, ends *planEnds) (*Trial, bool) {
	bo, ok := c.After.(plan.BindingObject)
	if !ok {
		return nil, false
	}
	b := bo.Binding
	src, ok := ends.exchanges[[2]string{c.Vhost, b.Source}]
	if !ok {
		if _, builtin := topology.BuiltinExchange(b.Source); !builtin || b.Source == "" {
			// A source nobody declares: apply reports it (MQ401).
			return nil, false
		}
	}
	tr := &Trial{Kind: c.Kind, Binding: b, Source: src}
	if src != nil && judgesDestination(src.Type) && b.DestinationType == topology.DestQueue {
		tr.DestQueueType = ends.queueTypes[[2]string{c.Vhost, b.Destination}]
	}
	tr.Key = bindingKey(b, src, tr.DestQueueType)
	return tr, true
}

// heldBindings adds the shapes of v's bindings, each on its source.
func heldBindings(v *topology.Vhost, want func(int) bool, out map[string]bool) {
	sources := map[string]string{} // each source exchange's key, made once
	for _, b := range v.Bindings {
		if !want(len(b.Arguments)) {
			continue
		}
		if src := v.Exchanges[b.Source]; src != nil {
			k, ok := sources[b.Source]
			if !ok {
				k = exchangeKey(src)
				sources[b.Source] = k
			}
			qtype := ""
			if q := v.Queues[b.Destination]; q != nil && judgesDestination(src.Type) && b.DestinationType == topology.DestQueue {
				qtype = q.TypeOrClassic()
			}
			out[bindingKeyOn(b, k, src.Type, qtype)] = true
		} else if _, builtin := topology.BuiltinExchange(b.Source); builtin {
			out[bindingKey(b, nil, "")] = true
		}
	}
}

func vhostKey(defaultQueueType string) string { return "vhost\x00" + defaultQueueType }
