package planjson

// "mqctl apply -o json" writes a stream of messages, one JSON object per
// line (JSON Lines), as the apply goes, documented in docs/apply-json.md:
// the plan first, then a line per step as it ends, notes whenever mqctl has
// something to say, and the summary last; an apply that stops before its
// first step (refused, a stale saved plan, the broker out of reach) ends
// with an error line instead.

// Message types (Message.Type).
const (
	TypePlan    = "plan"
	TypeNote    = "note"
	TypeStep    = "step"
	TypeSummary = "summary"
	TypeError   = "error"
)

// Message is one line of the stream: Type says which of the other fields
// is set.
type Message struct {
	Type string `json:"type"`
	// Plan is the JSON plan of the changes apply makes (type plan).
	Plan *Plan `json:"plan,omitempty"`
	// Message is what mqctl says (types note and error).
	Message string `json:"message,omitempty"`
	// Step is one step's outcome (type step).
	Step *Step `json:"step,omitempty"`
	// Summary is the outcome of the whole apply (type summary).
	Summary *ApplySummary `json:"summary,omitempty"`
}

// Step is the outcome of one step of the apply.
type Step struct {
	// Step is the step as the text view names it ("declare queue "a"
	// in vhost "v"").
	Step string `json:"step"`
	// Action, Kind, Vhost and Name are the plan change the step belongs
	// to (a replace is two steps: its delete and its declare; a binding
	// that a replace takes down and restores is a step of that replace).
	Action string `json:"action"`
	Kind   string `json:"kind"`
	Vhost  string `json:"vhost"`
	Name   string `json:"name"`
	// Outcome is "done" or "failed"; Error is the broker's reason for a
	// failed step.
	Outcome    string `json:"outcome"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// ApplySummary is what the whole apply did (the stream's summary; the
// plan's own counts are Summary).
type ApplySummary struct {
	// Complete is true when every step was done and the ownership record
	// written.
	Complete bool `json:"complete"`
	// Create, Update, Replace and Delete count the plan's changes by
	// action, as the plan's summary does.
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
	// Done counts the steps done; Failed lists those that failed, with
	// why; Remaining those not started.
	Done      int      `json:"done"`
	Failed    []Step   `json:"failed"`
	Remaining []string `json:"remaining"`
	// Interrupted is true when the apply was interrupted (Ctrl-C,
	// SIGTERM); Stopped says why it stopped otherwise (a lost lock).
	Interrupted bool   `json:"interrupted"`
	Stopped     string `json:"stopped,omitempty"`
	// RecordError says why mqctl's ownership record could not be written.
	RecordError string `json:"record_error,omitempty"`
}
