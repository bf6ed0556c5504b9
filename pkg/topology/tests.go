package topology

// TestAction is what happens to the probe's copy in Test.Queue after it is
// published.
type TestAction string

const (
	// ActionNone: the test checks where the publish itself lands.
	ActionNone TestAction = ""
	// ActionReject: the copy in Test.Queue is rejected (requeue=false).
	ActionReject TestAction = "reject"
	// ActionExpire: the copy in Test.Queue expires.
	ActionExpire TestAction = "expire"
)

// Test is one entry of a file's `tests:` section, resolved against the
// expanded topology: a probe message is published, optionally rejected in
// or expired from one queue, and Expect names exactly the queues it then
// lands in.
type Test struct {
	// Name is the test's name as written, or one derived from what it does.
	Name string `json:"name"`
	// Vhost is the vhost the test runs in (never empty after loading).
	Vhost string `json:"vhost"`
	// Publish is how the probe is published. A test without `publish:`
	// publishes through the default exchange straight into Queue.
	Publish TestMessage `json:"publish"`
	// Action and Queue: after the publish, the copy in Queue is rejected or
	// expires, and Expect is where that dead letter lands.
	Action TestAction `json:"action,omitempty"`
	Queue  string     `json:"queue,omitempty"`
	// Retry is set for a `retry:` test: Queue is then the delay tier of
	// Retry.Queue for Retry.Delay, the probe is published to it through the
	// default exchange, and Action is ActionExpire.
	Retry *TestRetry `json:"retry,omitempty"`
	// Expect is the sorted list of queues the message must reach, and no
	// other; empty means it must reach none.
	Expect []string `json:"expect"`
	Pos    Pos      `json:"-"`
}

// TestMessage is the probe message of a test.
type TestMessage struct {
	Exchange   string         `json:"exchange"` // "" is the default exchange
	RoutingKey string         `json:"routing_key"`
	Headers    map[string]any `json:"headers,omitempty"`
}

// TestRetry is a `retry:` test: a message scheduled on a delay tier.
type TestRetry struct {
	Queue string `json:"queue"` // the working queue the tier belongs to
	Delay int64  `json:"delay_ms"`
}
