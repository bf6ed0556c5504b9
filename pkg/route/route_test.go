package route

import (
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

func hasProblem(r Result, substr string) bool {
	for _, p := range r.Problems {
		if strings.Contains(p, substr) {
			return true
		}
	}
	return false
}

func TestPublishExchangeTypes(t *testing.T) {
	s := vhost().
		ex("d", "direct").ex("f", "fanout").ex("t", "topic").
		q("q1").q("q2").q("q3").
		bind("d", "q1", "order.created").bind("d", "q2", "order.paid").bind("d", "q3", "").
		bind("f", "q1", "ignored").bind("f", "q2", "").
		bind("t", "q1", "order.*").bind("t", "q2", "#.paid").bind("t", "q3", "#").
		sim()
	tests := []struct {
		name string
		m    Message
		want []string
	}{
		{"direct exact key", msg("d", "order.created"), []string{"q1"}},
		{"direct is case-sensitive", msg("d", "Order.created"), nil},
		{"direct has no wildcards", msg("d", "order.*"), nil},
		{"direct empty key", msg("d", ""), []string{"q3"}},
		{"fanout ignores the key", msg("f", "anything"), []string{"q1", "q2"}},
		{"topic star and hash", msg("t", "order.paid"), []string{"q1", "q2", "q3"}},
		{"topic hash only", msg("t", "user.signup"), []string{"q3"}},
		{"topic empty key: # only", msg("t", ""), []string{"q3"}},
		{"default exchange: queue name", msg("", "q2"), []string{"q2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantQueues(t, s.Publish(tt.m), tt.want...)
		})
	}
}

func TestPublishDefaultExchange(t *testing.T) {
	s := vhost().q("jobs").sim()
	r := s.Publish(msg("", "jobs"))
	wantQueues(t, r, "jobs")
	if st := r.Deliveries[0].Path[0]; st.Via != ViaDefault || st.To != "jobs" || st.Exchange != "" {
		t.Errorf("path step = %+v, want the default exchange to jobs", st)
	}
	r = s.Publish(msg("", "nope"))
	wantQueues(t, r)
	if !hasProblem(r, `no queue is named "nope"`) {
		t.Errorf("problems = %q, want one naming the missing queue", r.Problems)
	}
}

func TestPublishHeaders(t *testing.T) {
	s := vhost().ex("h", "headers").
		q("all").q("any").q("allx").q("anyx").q("none").q("void").q("typed").q("float").q("anyempty").q("xignored").
		bind("h", "all", "", "x-match", "all", "format", "pdf", "type", "report").
		bind("h", "any", "", "x-match", "any", "format", "pdf", "type", "report").
		bind("h", "allx", "", "x-match", "all-with-x", "format", "pdf", "x-tenant", "acme").
		bind("h", "anyx", "", "x-match", "any-with-x", "x-tenant", "acme").
		bind("h", "none", ""). // no criteria, all: matches every message
		bind("h", "void", "", "x-match", "any", "flag", nil).
		bind("h", "typed", "", "x-match", "any", "n", "1").
		bind("h", "float", "", "x-match", "any", "n", 1.5).
		bind("h", "anyempty", "", "x-match", "any"). // any without criteria: never
		bind("h", "xignored", "", "format", "pdf", "x-tenant", "other").
		sim()
	tests := []struct {
		name string
		h    []any
		want []string
	}{
		{"all needs every criterion", []any{"format", "pdf", "type", "report"}, []string{"all", "any", "none", "xignored"}},
		{"any needs one", []any{"format", "pdf"}, []string{"any", "none", "xignored"}},
		{"value mismatch", []any{"format", "zip", "type", "report"}, []string{"any", "none"}},
		{"x- args are criteria only with -with-x", []any{"format", "pdf", "x-tenant", "acme"}, []string{"allx", "any", "anyx", "none", "xignored"}},
		{"x- headers ignored in all mode", []any{"x-tenant", "acme"}, []string{"anyx", "none"}},
		{"void criterion: presence", []any{"flag", "whatever"}, []string{"none", "void"}},
		{"string 1 is not int 1", []any{"n", 1}, []string{"none"}},
		{"string matches string", []any{"n", "1"}, []string{"none", "typed"}},
		{"float equality", []any{"n", 1.5}, []string{"float", "none"}},
		{"no headers", nil, []string{"none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantQueues(t, s.Publish(msg("h", "", tt.h...)), tt.want...)
		})
	}
}

func TestPublishHeadersNumbers(t *testing.T) {
	s := vhost().ex("h", "headers").q("int").q("bool").
		bind("h", "int", "", "n", 1).
		bind("h", "bool", "", "ok", true).
		sim()
	wantQueues(t, s.Publish(msg("h", "", "n", 1.0)), "int") // Erlang: 1 == 1.0
	wantQueues(t, s.Publish(msg("h", "", "n", int32(1))), "int")
	wantQueues(t, s.Publish(msg("h", "", "ok", true)), "bool")
	wantQueues(t, s.Publish(msg("h", "", "ok", "true")))
}

func TestPublishHeadersInvalidXMatch(t *testing.T) {
	s := vhost().ex("h", "headers", "alternate-exchange", "ae").ex("ae", "fanout").q("q").q("lost").
		bind("h", "q", "", "x-match", "ANY", "a", 1).
		bind("ae", "lost", "").
		sim()
	r := s.Publish(msg("h", "", "a", 1))
	wantQueues(t, r, "lost") // the broker refuses the binding: nothing matches, the AE takes it
	if !hasProblem(r, `x-match "ANY" is not valid`) {
		t.Errorf("problems = %q, want one about the invalid x-match", r.Problems)
	}
}

func TestPublishExchangeToExchange(t *testing.T) {
	s := vhost().ex("a", "topic").ex("b", "direct").ex("c", "fanout").q("qb").q("qc").q("both").
		bindX("a", "b", "#").bindX("b", "c", "k").bindX("c", "a", ""). // a cycle a -> b -> c -> a
		bind("b", "qb", "k").bind("c", "qc", "").
		bind("a", "both", "k").bind("c", "both", "").
		sim()
	r := s.Publish(msg("a", "k"))
	wantQueues(t, r, "both", "qb", "qc")
	for _, d := range r.Deliveries {
		if d.Queue == "both" && len(d.Path) != 1 {
			t.Errorf("path to both = %+v, want the direct binding from a (shortest)", d.Path)
		}
		if d.Queue == "qc" {
			var hops []string
			for _, st := range d.Path {
				hops = append(hops, st.Exchange+">"+st.To)
			}
			if got := strings.Join(hops, " "); got != "a>b b>c c>qc" {
				t.Errorf("path to qc = %s", got)
			}
		}
	}
	// The same key/headers carry on: b only routes key k.
	wantQueues(t, s.Publish(msg("a", "other")))
}

func TestPublishAlternateExchange(t *testing.T) {
	t.Run("used when nothing matches", func(t *testing.T) {
		s := vhost().ex("x", "direct", "alternate-exchange", "ae").ex("ae", "fanout").q("q").q("unrouted").
			bind("x", "q", "k").bind("ae", "unrouted", "").sim()
		wantQueues(t, s.Publish(msg("x", "k")), "q")
		r := s.Publish(msg("x", "other"))
		wantQueues(t, r, "unrouted")
		if st := r.Deliveries[0].Path[0]; st.Via != ViaAlternate || st.To != "ae" {
			t.Errorf("first step = %+v, want the alternate exchange", st)
		}
	})
	t.Run("chain of alternate exchanges", func(t *testing.T) {
		s := vhost().ex("x", "direct", "alternate-exchange", "ae1").ex("ae1", "direct", "alternate-exchange", "ae2").ex("ae2", "fanout").
			q("q1").q("q2").bind("ae1", "q1", "only-this").bind("ae2", "q2", "").sim()
		wantQueues(t, s.Publish(msg("x", "k")), "q2")
		wantQueues(t, s.Publish(msg("x", "only-this")), "q1")
	})
	t.Run("not used when a binding matched an exchange that routes nowhere", func(t *testing.T) {
		s := vhost().ex("x", "direct", "alternate-exchange", "ae").ex("ae", "fanout").ex("inner", "direct").
			q("unrouted").bindX("x", "inner", "k").bind("ae", "unrouted", "").sim()
		r := s.Publish(msg("x", "k"))
		wantQueues(t, r)
		if !hasProblem(r, `no binding of exchange "inner" matches routing key "k"`) ||
			!hasProblem(r, `alternate exchange "ae" of exchange "x" is not used: a binding of "x" matched (to exchange "inner")`) {
			t.Errorf("problems = %q", r.Problems)
		}
	})
	t.Run("policy alternate exchange; argument beats policy", func(t *testing.T) {
		s := vhost().ex("x", "direct").ex("y", "direct", "alternate-exchange", "ae-arg").
			ex("ae-pol", "fanout").ex("ae-arg", "fanout").q("pol").q("arg").
			bind("ae-pol", "pol", "").bind("ae-arg", "arg", "").
			policy("ae", "^[xy]$", "exchanges", 0, "alternate-exchange", "ae-pol").sim()
		wantQueues(t, s.Publish(msg("x", "k")), "pol")
		wantQueues(t, s.Publish(msg("y", "k")), "arg")
		if got, _ := s.ExchangeArgs("x").String("alternate-exchange"); got != "ae-pol" {
			t.Errorf("ExchangeArgs(x) alternate-exchange = %q, want ae-pol", got)
		}
		if got := s.ExchangePolicy("x"); got != "ae" {
			t.Errorf("ExchangePolicy(x) = %q", got)
		}
	})
	t.Run("undeclared alternate exchange", func(t *testing.T) {
		s := vhost().ex("x", "direct", "alternate-exchange", "ghost").sim()
		r := s.Publish(msg("x", "k"))
		wantQueues(t, r)
		if !hasProblem(r, `alternate exchange "ghost" of exchange "x" is not declared`) {
			t.Errorf("problems = %q", r.Problems)
		}
	})
	t.Run("alternate exchange loop terminates", func(t *testing.T) {
		s := vhost().ex("x", "direct", "alternate-exchange", "y").ex("y", "direct", "alternate-exchange", "x").sim()
		wantQueues(t, s.Publish(msg("x", "k")))
	})
	t.Run("binding to an undeclared queue does not exist", func(t *testing.T) {
		s := vhost().ex("x", "direct", "alternate-exchange", "ae").ex("ae", "fanout").q("unrouted").
			bind("x", "ghost", "k").bind("ae", "unrouted", "").sim()
		r := s.Publish(msg("x", "k"))
		wantQueues(t, r, "unrouted")
		if !hasProblem(r, `undeclared queue "ghost"`) {
			t.Errorf("problems = %q", r.Problems)
		}
	})
}

func TestPublishProblems(t *testing.T) {
	s := vhost().internal("in", "fanout").ex("front", "fanout").ex("lonely", "topic").q("q").
		bind("in", "q", "").bindX("front", "in", "").sim()
	r := s.Publish(msg("ghost", "k"))
	wantQueues(t, r)
	if !hasProblem(r, `exchange "ghost" is not declared`) {
		t.Errorf("problems = %q", r.Problems)
	}
	r = s.Publish(msg("in", "k"))
	wantQueues(t, r)
	if !hasProblem(r, `exchange "in" is internal`) {
		t.Errorf("problems = %q", r.Problems)
	}
	wantQueues(t, s.Publish(msg("front", "k")), "q") // internal exchanges are fine behind another
	r = s.Publish(msg("lonely", "a.b"))
	if !hasProblem(r, `no binding of exchange "lonely" matches routing key "a.b" and it has no alternate exchange`) {
		t.Errorf("problems = %q", r.Problems)
	}
	// An alternate exchange that is not declared is named as such, not
	// as none.
	s = vhost().ex("orders", "topic", "alternate-exchange", "unrouted").q("q").bind("orders", "q", "order.*").sim()
	r = s.Publish(msg("orders", "invoice.sent"))
	wantQueues(t, r)
	if !hasProblem(r, `no binding of exchange "orders" matches routing key "invoice.sent" and its alternate exchange "unrouted" is not declared`) || hasProblem(r, "it has no alternate exchange") {
		t.Errorf("problems = %q", r.Problems)
	}
}

func TestPublishPluginAndBuiltinExchanges(t *testing.T) {
	s := vhost().ex("delayed", "x-delayed-message", "x-delayed-type", "topic").ex("hash", "x-consistent-hash").
		q("q").q("h1").bind("delayed", "q", "a.#").bind("hash", "h1", "1").bind("amq.topic", "q", "audit.*").sim()
	r := s.Publish(msg("delayed", "a.b"))
	wantQueues(t, r, "q")
	if !hasProblem(r, "plugin exchange type x-delayed-message is not simulated") {
		t.Errorf("problems = %q", r.Problems)
	}
	r = s.Publish(msg("hash", "k"))
	wantQueues(t, r)
	if !hasProblem(r, "plugin exchange type x-consistent-hash is not simulated") {
		t.Errorf("problems = %q", r.Problems)
	}
	if len(r.Unsimulated) != 1 || r.Unsimulated[0] != "hash" {
		t.Errorf("unsimulated = %q, want [hash]", r.Unsimulated)
	}
	if hasProblem(r, "no binding") {
		t.Errorf("an unsimulated exchange must not be reported as unmatched: %q", r.Problems)
	}
	wantQueues(t, s.Publish(msg("amq.topic", "audit.login")), "q")
	r = s.Publish(msg("amq.rabbitmq.trace", "publish.x"))
	if !hasProblem(r, "is internal") {
		t.Errorf("amq.rabbitmq.trace must be internal: %q", r.Problems)
	}
}

func TestExchangeLookup(t *testing.T) {
	s := vhost().ex("orders", "topic").sim()
	if x := s.Exchange("orders"); x == nil || x.Type != "topic" {
		t.Errorf("Exchange(orders) = %+v", x)
	}
	if x := s.Exchange("amq.fanout"); x == nil || x.Type != "fanout" {
		t.Errorf("Exchange(amq.fanout) = %+v, want the built-in", x)
	}
	if x := s.Exchange("ghost"); x != nil {
		t.Errorf("Exchange(ghost) = %+v", x)
	}
	if x := s.Exchange(""); x != nil {
		t.Errorf("Exchange(\"\") = %+v", x)
	}
}

// Nil entries in a hand-built vhost must not panic.
func TestNilEntries(t *testing.T) {
	b := vhost().ex("x", "fanout").q("q").bind("x", "q", "")
	b.v.Queues["nilq"] = nil
	b.v.Exchanges["nilx"] = nil
	b.v.Bindings = append(b.v.Bindings, nil)
	s := b.sim()
	wantQueues(t, s.Publish(msg("x", "")), "q")
	wantQueues(t, s.Publish(msg("", "nilq")))
	s.DeadLetter("nilq", Rejected, msg("", "nilq"))
	if r := s.Reasons("nilq"); r != nil {
		t.Errorf("Reasons(nilq) = %v", r)
	}
	New(nil).Trace(msg("x", ""), DefaultDepth)
}

// Sender-selected distribution: the CC and BCC headers hold more routing
// keys. Found missing by the differential test (internal/difftest);
// each case checked against RabbitMQ 3.10.8.
func TestPublishCCAndBCC(t *testing.T) {
	s := vhost().ex("d", "direct").ex("t", "topic").ex("h", "headers").
		ex("withae", "direct", "alternate-exchange", "ae").ex("ae", "fanout").internal("in", "direct").
		q("q1").q("q2").q("q3").q("seen-cc").q("seen-bcc").q("lost").
		bind("d", "q1", "one").bind("d", "q2", "two").bind("d", "q3", "three").
		bind("t", "q1", "a.*").bind("t", "q2", "#.b").
		bind("h", "seen-cc", "", "x-match", "any", "CC", nil).
		bind("h", "seen-bcc", "", "x-match", "any", "BCC", nil).
		bind("withae", "q1", "one").bind("ae", "lost", "").
		bind("in", "q1", "one").
		sim()
	tests := []struct {
		name    string
		m       Message
		want    []string
		problem string
	}{
		{"direct: the key and every CC key", msg("d", "one", "CC", []any{"two"}), []string{"q1", "q2"}, ""},
		{"direct: BCC keys route too", msg("d", "one", "BCC", []any{"three"}, "CC", []any{"two"}), []string{"q1", "q2", "q3"}, ""},
		{"topic: each key matched", msg("t", "x", "CC", []any{"a.z", "z.b"}), []string{"q1", "q2"}, ""},
		{"default exchange: each key names a queue", msg("", "q1", "CC", []any{"q2", "nope"}, "BCC", []any{"q3"}), []string{"q1", "q2", "q3"}, ""},
		{"non-string elements are ignored", msg("d", "none", "CC", []any{int64(1), "two"}), []string{"q2"}, ""},
		{"headers exchange sees CC, not BCC (removed before routing)", msg("h", "", "CC", []any{"x"}, "BCC", []any{"y"}), []string{"seen-cc"}, ""},
		{"alternate exchange not used when a CC key matched", msg("withae", "nothing", "CC", []any{"one"}), []string{"q1"}, ""},
		{"CC that is not an array: refused", msg("d", "one", "CC", "two"), nil, "PRECONDITION_FAILED"},
		{"BCC that is not an array: refused", msg("", "q1", "BCC", int64(2)), nil, "PRECONDITION_FAILED"},
		{"internal exchange is refused before CC is read", msg("in", "one", "CC", "two"), nil, "is internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Publish(tt.m)
			wantQueues(t, r, tt.want...)
			if tt.problem != "" && !hasProblem(r, tt.problem) {
				t.Errorf("problems = %q, want one with %q", r.Problems, tt.problem)
			}
		})
	}
	if got := msg("d", "one", "CC", []any{"two"}, "BCC", []any{"three"}).RoutingKeys(); !equalStrings(got, []string{"one", "two", "three"}) {
		t.Errorf("RoutingKeys = %q", got)
	}
}

// Inside arrays, the headers exchange compares AMQP types as well as
// values (Erlang ==, or =:= from 3.13, on {type, value} pairs); at the top
// level it compares integers of any width, and up to 3.12 an integer with
// a float of the same value. Found by the differential test
// (internal/difftest, TestKnownCases); checked against RabbitMQ 3.10.8
// and 4.0.5.
func TestPublishHeadersTypedArrays(t *testing.T) {
	for _, ver := range []string{"3.10.8", "4.0.5"} {
		t.Run(ver, func(t *testing.T) { testPublishHeadersTypedArrays(t, ver) })
	}
}

func testPublishHeadersTypedArrays(t *testing.T, ver string) {
	s := vhost().ex("h", "headers").q("arr-int").q("arr-str").q("arr-float").q("int").q("nested").q("float").
		bind("h", "arr-int", "", "x-match", "any", "a", []any{1}).
		bind("h", "arr-str", "", "x-match", "any", "a", []any{"v1"}).
		bind("h", "arr-float", "", "x-match", "any", "a", []any{1.5}).
		bind("h", "int", "", "x-match", "any", "n", 1).
		bind("h", "float", "", "x-match", "any", "f", 1.5).
		bind("h", "nested", "", "x-match", "any", "t", map[string]any{"k": []any{1}}).
		simFor(ver)
	// intFloat is the answer where an integer criterion meets a float
	// header of the same value: it matches up to 3.12 only.
	var intFloat []string
	if ver == "3.10.8" {
		intFloat = []string{"int"}
	}
	tests := []struct {
		name  string
		value any
		key   string
		want  []string
	}{
		{"long array element matches a long", []any{int64(1)}, "a", []string{"arr-int"}},
		{"signedint array element is not a long", []any{int32(1)}, "a", nil},
		{"double 1.0 array element is not a long", []any{1.0}, "a", nil},
		{"string array element", []any{"v1"}, "a", []string{"arr-str"}},
		{"double array element", []any{1.5}, "a", []string{"arr-float"}},
		{"float array element is not a double", []any{float32(1.5)}, "a", nil},
		{"an array is not its element", "v1", "a", nil},
		{"top level: signedint equals long", int32(1), "n", []string{"int"}},
		{"top level: double 1.0 and long 1", 1.0, "n", intFloat},
		{"top level: float 1 and long 1", float32(1), "n", intFloat},
		{"top level: float 1.5 equals double 1.5", float32(1.5), "f", []string{"float"}},
		{"top level: long 1 is not double 1.5", int64(1), "f", nil},
		{"top level: a one-element array is not the number", []any{int64(1)}, "n", nil},
		{"table elements are typed too", map[string]any{"k": []any{int64(1)}}, "t", []string{"nested"}},
		{"table with a signedint inside", map[string]any{"k": []any{int32(1)}}, "t", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantQueues(t, s.Publish(Message{Exchange: "h", Headers: map[string]any{tt.key: tt.value}}), tt.want...)
		})
	}
}

// Numbers compare by their exact values in every version: a criterion
// 9007199254740993 (2^53+1) does not match a header 9007199254740992,
// though both read as the same float64; up to 3.12 an integer equals a
// float only when the float holds exactly that integer. Measured on
// RabbitMQ 4.3.6, 4.0.5 and 3.10.8 (internal/difftest
// TestHeadersNumbersAgainstBroker): none routes m1-m3, all route m4,
// and only 3.10.8 routes m5 (a double equal to the integer).
func TestPublishHeadersLargeIntegers(t *testing.T) {
	for _, ver := range []string{"3.10.8", "4.0.5", "4.3.6"} {
		t.Run(ver, func(t *testing.T) {
			s := vhost().ex("h", "headers").q("odd").q("even").q("arr").
				bind("h", "odd", "", "x-match", "any", "id", int64(1<<53+1)).
				bind("h", "arr", "", "x-match", "any", "ids", []any{int64(1<<53 + 1)}).
				bind("h", "even", "", "x-match", "any", "id2", int64(1<<53)).
				simFor(ver)
			var intFloat []string
			if ver == "3.10.8" {
				intFloat = []string{"even"}
			}
			tests := []struct {
				name  string
				key   string
				value any
				want  []string
			}{
				{"m1 long 2^53 is not 2^53+1", "id", int64(1 << 53), nil},
				{"m2 double 2^53 is not 2^53+1", "id", float64(1 << 53), nil},
				{"m3 long 2^53+1 is not 2^53", "id2", int64(1<<53 + 1), nil},
				{"m4 long 2^53+1", "id", int64(1<<53 + 1), []string{"odd"}},
				{"m5 double 2^53 and long 2^53", "id2", float64(1 << 53), intFloat},
				{"array elements compare exactly too", "ids", []any{int64(1 << 53)}, nil},
				{"the same array element", "ids", []any{int64(1<<53 + 1)}, []string{"arr"}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					wantQueues(t, s.Publish(Message{Exchange: "h", Headers: map[string]any{tt.key: tt.value}}), tt.want...)
				})
			}
		})
	}
}

// The headers exchange reads a timestamp header as an integer, in
// milliseconds from 3.13 (mc_amqpl:routing_value/2) and in seconds
// before, and a binary header as its bytes, which equal a string's.
// Measured on RabbitMQ 4.3.6, 4.0.5 and 3.10.8 (internal/difftest
// TestHeadersValuesAgainstBroker).
func TestPublishHeadersTimestampAndBinary(t *testing.T) {
	at := time.Unix(1700000000, 0)
	for _, tt := range []struct {
		ver  string
		want []string
	}{
		{"3.10.8", []string{"seconds", "text"}},
		{"4.0.5", []string{"millis", "text"}},
		{"4.3.6", []string{"millis", "text"}},
	} {
		t.Run(tt.ver, func(t *testing.T) {
			s := vhost().ex("h", "headers").q("millis").q("seconds").q("text").q("arr").
				bind("h", "millis", "", "x-match", "any", "at", int64(1700000000000)).
				bind("h", "seconds", "", "x-match", "any", "at", int64(1700000000)).
				bind("h", "text", "", "x-match", "any", "s", "true").
				bind("h", "arr", "", "x-match", "any", "a", []any{"true"}).
				simFor(tt.ver)
			r := s.Publish(Message{Exchange: "h", Headers: map[string]any{"at": at, "s": []byte("true"), "a": []any{[]byte("true")}}})
			wantQueues(t, r, tt.want...)
			if ok, _ := HeadersMatch(a("x-match", "any", "s", "true"), map[string]any{"s": []byte("true")}, rmqversion.MustParse(tt.ver)); !ok {
				t.Errorf("HeadersMatch: a binary header does not match the string criterion")
			}
		})
	}
}

// RabbitMQ 4.3.5+ refuses a topic binding key with more than two '#'
// words (rabbit_exchange_type_topic:validate_binding/2): such a binding
// does not exist there and routes nothing; earlier versions have it.
// Measured: RabbitMQ 4.3.6 refuses "#.a.#.b.#" (HTTP 400 "uses 3 '#'
// wildcards, at most 2 are allowed"), 4.0.5 and 3.10.8 bind it and route
// a.b through it (internal/difftest TestTopicHashLimitAgainstBroker).
func TestPublishTopicHashLimit(t *testing.T) {
	for _, tt := range []struct {
		ver  string
		want []string
	}{
		{"3.10.8", []string{"three", "two"}},
		{"4.0.5", []string{"three", "two"}},
		{"4.3.4", []string{"three", "two"}},
		{"4.3.5", []string{"two"}},
		{"4.3", []string{"two"}},
	} {
		t.Run(tt.ver, func(t *testing.T) {
			s := vhost().ex("t", "topic").q("three").q("two").
				bind("t", "three", "#.a.#.b.#").
				bind("t", "two", "#.a.#").
				simFor(tt.ver)
			r := s.Publish(msg("t", "a.b"))
			wantQueues(t, r, tt.want...)
			if refused := hasProblem(r, "refuses its routing key"); refused != (len(tt.want) == 1) {
				t.Errorf("problems %q: the refused binding is named %v", r.Problems, refused)
			}
		})
	}
}

// A table criterion of two or more fields matches only if the client
// sends the fields in the binding's order, which the simulator cannot
// know: it routes by content and says so. Measured on RabbitMQ 4.3.6,
// 4.0.5 and 3.10.8: 30 publishes of the same {a: 1, b: 2, c: 3} from
// amqp091-go matched an equal table criterion 16, 18 and 18 times; a
// one-field table always matched.
func TestPublishHeadersTableFieldOrder(t *testing.T) {
	s := vhost().ex("h", "headers").q("tab").q("one").q("arr").
		bind("h", "tab", "", "x-match", "any", "t", map[string]any{"a": 1, "b": 2}).
		bind("h", "one", "", "x-match", "any", "u", map[string]any{"a": 1}).
		bind("h", "arr", "", "x-match", "any", "l", []any{map[string]any{"a": 1, "b": "x"}}).
		sim()
	tests := []struct {
		name    string
		headers []any
		want    []string
		ordered bool
	}{
		{"two fields", []any{"t", map[string]any{"b": int64(2), "a": int64(1)}}, []string{"tab"}, true},
		{"one field", []any{"u", map[string]any{"a": int64(1)}}, []string{"one"}, false},
		{"a table in an array", []any{"l", []any{map[string]any{"a": int64(1), "b": "x"}}}, []string{"arr"}, true},
		{"other fields", []any{"t", map[string]any{"a": int64(1), "b": int64(3)}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Publish(msg("h", "", tt.headers...))
			wantQueues(t, r, tt.want...)
			if got := hasProblem(r, "in the binding's order"); got != tt.ordered {
				t.Errorf("problems %q: field order named %v, want %v", r.Problems, got, tt.ordered)
			}
		})
	}
}
