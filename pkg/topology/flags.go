package topology

// Flag is a yes-or-no setting of an exchange or a queue (T), described
// once for every stage that reads, writes, compares or prints it: Key is
// its name in topology.yaml, in a definitions file and in the management
// API (they agree), Default what RabbitMQ takes when it is not given, and
// Of the field it is in T. Later is Setting.Later: a flag added after
// ownership records held prints (every flag added now).
type Flag[T any] struct {
	Key     string
	Default bool
	Of      func(T) *bool
	Later   bool
}

// Get returns the flag's value in o.
func (f Flag[T]) Get(o T) bool { return *f.Of(o) }

// ExchangeFlags are an exchange's flags, in the order the plan compares
// and prints them (an ownership record's prints hash them in this order).
var ExchangeFlags = []Flag[*Exchange]{
	{Key: "durable", Default: true, Of: func(x *Exchange) *bool { return &x.Durable }},
	{Key: "auto_delete", Default: false, Of: func(x *Exchange) *bool { return &x.AutoDelete }},
	{Key: "internal", Default: false, Of: func(x *Exchange) *bool { return &x.Internal }},
}

// QueueFlags are a queue's flags, in the order the plan compares and
// prints them. A queue's exclusivity is not one: mqctl never manages an
// exclusive queue (it lives and dies with its connection).
var QueueFlags = []Flag[*Queue]{
	{Key: "durable", Default: true, Of: func(q *Queue) *bool { return &q.Durable }},
	{Key: "auto_delete", Default: false, Of: func(q *Queue) *bool { return &q.AutoDelete }},
}
