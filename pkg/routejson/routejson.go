// Package routejson owns the JSON of "mqctl route -o json": the types of
// the trace it prints, a contract for scripts, documented field by field
// in docs/route-json.md (a test checks the page against them).
//
// The types are this package's own, not the simulator's: a field renamed
// in pkg/route does not change the document. pkg/route maps a trace into
// them (route.WriteJSON). Field names and meanings are those route.Trace's
// own JSON had before this package: additive changes only.
package routejson

// Trace is the document: the first publish and every dead-letter hop
// after it.
type Trace struct {
	Vhost   string `json:"vhost"`
	Publish Result `json:"publish"`
	Hops    []Hop  `json:"hops"`
}

// Result is where a message goes: the queues it is delivered to, by
// which path.
type Result struct {
	Message     Message    `json:"message"`
	Deliveries  []Delivery `json:"deliveries"`
	Problems    []string   `json:"problems,omitempty"`
	Unsimulated []string   `json:"unsimulated,omitempty"`
	OneOf       []Choice   `json:"one_of,omitempty"`
	DirectReply []string   `json:"direct_reply,omitempty"`
}

// Message is the message published (or dead-lettered).
type Message struct {
	Exchange   string         `json:"exchange"`
	RoutingKey string         `json:"routing_key"`
	Headers    map[string]any `json:"headers,omitempty"`
	Expiration string         `json:"expiration,omitempty"`
}

// Step is one edge of a path: from an exchange to the next exchange or a
// queue.
type Step struct {
	Exchange     string         `json:"exchange"`
	Via          string         `json:"via"`
	BindingKey   string         `json:"binding_key,omitempty"`
	To           string         `json:"to"`
	ToType       string         `json:"to_type"`
	ExchangeType string         `json:"exchange_type,omitempty"`
	BindingArgs  map[string]any `json:"binding_args,omitempty"`
}

// Delivery is a queue the message reaches, and the path to it.
type Delivery struct {
	Queue string `json:"queue"`
	Path  []Step `json:"path"`
}

// Target is a destination an exchange that picks one may pick.
type Target struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Bindings int    `json:"bindings"`
}

// Choice is an exchange that delivers the message to one of its
// destinations (x-modulus-hash, x-local-random).
type Choice struct {
	Exchange string   `json:"exchange"`
	Path     []Step   `json:"path,omitempty"`
	Among    []Target `json:"among"`
	Picked   *Target  `json:"picked,omitempty"`
	Random   bool     `json:"random,omitempty"`
}

// Hop is a message arriving in a queue, and for each way it can leave
// as a dead letter, where it goes next.
type Hop struct {
	Queue         string          `json:"queue"`
	Path          []Step          `json:"path"`
	Next          []DeadLetterHop `json:"next,omitempty"`
	Loop          bool            `json:"loop,omitempty"`
	Truncated     bool            `json:"truncated,omitempty"`
	DelayedRetry  *DelayedRetry   `json:"delayed_retry,omitempty"`
	DeliveryLimit *int64          `json:"delivery_limit,omitempty"`
	Arrival       *Arrival        `json:"arrival,omitempty"`
}

// DeadLetterHop is one dead-letter edge of a trace.
type DeadLetterHop struct {
	Route          DeadLetterRoute `json:"route"`
	Hops           []Hop           `json:"hops,omitempty"`
	Loop           string          `json:"loop,omitempty"`
	Dropped        bool            `json:"dropped,omitempty"`
	ExpiresAfterMS *int64          `json:"expires_after_ms,omitempty"`
}

// DeadLetterRoute is where a message dead-lettered from a queue for a
// reason goes.
type DeadLetterRoute struct {
	Queue           string   `json:"queue"`
	Reason          string   `json:"reason"`
	Configured      bool     `json:"configured"`
	Exchange        string   `json:"exchange"`
	RoutingKey      string   `json:"routing_key"`
	KeyFromMessage  bool     `json:"key_from_message"`
	ExchangeMissing bool     `json:"exchange_missing"`
	Cycles          []string `json:"cycles,omitempty"`
	Result          Result   `json:"result"`
	Held            bool     `json:"held,omitempty"`
}

// DelayedRetry is a 4.3 quorum queue's delayed retry.
type DelayedRetry struct {
	Type     string `json:"type"`
	MinMS    int64  `json:"min_ms"`
	MaxMS    int64  `json:"max_ms"`
	MaxIsMin bool   `json:"max_is_min,omitempty"`
}

// Arrival is what a queue does with a message the moment it arrives,
// where it does not simply keep it.
type Arrival struct {
	Reason  string `json:"reason,omitempty"`
	Refused bool   `json:"refused,omitempty"`
	Why     string `json:"why,omitempty"`
	Unsure  bool   `json:"unsure,omitempty"`
}
