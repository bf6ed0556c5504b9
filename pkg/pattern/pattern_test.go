package pattern

import (
	"strings"
	"testing"
)

// TestCompile: a pattern Go's regexp reads is evaluated by it; one only
// PCRE reads (lookaround, backreferences, possessive and atomic groups)
// by the backtracking engine, with RabbitMQ's search semantics (anywhere
// in the name); one neither reads is an error.
func TestCompile(t *testing.T) {
	cases := []struct {
		expr      string
		pcre      bool
		match, no []string
	}{
		{`^orders\.`, false, []string{"orders.x"}, []string{"x.orders.y"}},
		{`audit`, false, []string{"orders.audit.dlq"}, []string{"orders"}},
		{`^(?!amq\.).*`, true, []string{"orders", "", "amqx"}, []string{"amq.gen-1"}},
		{`(?<!\.dlq)$`, true, []string{"orders"}, []string{"orders.dlq"}},
		{`^(\w+)\.\1$`, true, []string{"a.a"}, []string{"a.b"}},
		{`^(?>a+)b`, true, []string{"aab"}, []string{"ac"}},
	}
	for _, c := range cases {
		p, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if p.PCRE() != c.pcre || p.String() != c.expr {
			t.Errorf("%s: PCRE %v, String %q", c.expr, p.PCRE(), p.String())
		}
		for _, s := range c.match {
			if !p.MatchString(s) {
				t.Errorf("%s does not match %q", c.expr, s)
			}
		}
		for _, s := range c.no {
			if p.MatchString(s) {
				t.Errorf("%s matches %q", c.expr, s)
			}
		}
	}
	if _, err := Compile(`(unclosed`); err == nil || !strings.Contains(err.Error(), "missing closing )") || !strings.Contains(err.Error(), "nor as PCRE") {
		t.Errorf("an unreadable pattern: %v", err)
	}
}

// TestRunawayDoesNotMatch: a match that backtracks past the bound does
// not match, as a PCRE match that hits RabbitMQ's match limit does not.
func TestRunawayDoesNotMatch(t *testing.T) {
	p, err := Compile(`^(?=(a+)+\1)(a+)+b$`)
	if err != nil {
		t.Fatal(err)
	}
	if p.MatchString(strings.Repeat("a", 40) + "c") {
		t.Error("a runaway match matched")
	}
}

// TestRefused: what Go's syntax and PCRE both refuse is refused, naming
// the error and the fix; what only Go's syntax refuses is left alone. Each
// case's verdict is Erlang's re:compile/1 (OTP 25, PCRE 8.x), checked one
// by one.
func TestRefused(t *testing.T) {
	cases := []struct {
		expr, what, fix string // what "" when PCRE reads expr
	}{
		{`^(a`, "missing closing )", `escape the parenthesis (\()`},
		{`^(orders`, "missing closing )", "close the group"},
		{`a)`, "unexpected )", `escape it (\))`},
		{`[`, "missing closing ] for the character class [", `escape the bracket (\[)`},
		{`[^]`, "missing closing ]", "close the character class"},
		{`a\`, "trailing backslash", `double it (\\)`},
		{`*a`, "missing argument to repetition operator *: nothing to repeat", `escape it (\*)`},
		{`+`, "nothing to repeat", `escape it (\+)`},
		{`a|*b`, "nothing to repeat", "put what to repeat before *"},
		{`(?i)*`, "nothing to repeat", ""},
		{`[z-a]`, "invalid character class range z-a: the range runs backwards", "[a-z]"},
		{`[\x7a-\x61]`, "the range runs backwards", "[a-z]"},
		{`a{3,2}`, "the counts are out of order", "{2,3}"},
		{`a{70000}`, "PCRE takes counts up to 65535", "at most 65535"},
		{`x{1,70000}`, "PCRE takes counts up to 65535", ""},
		// PCRE reads these; Go's syntax does not.
		{`^orders\.`, "", ""},
		{`(?=a)`, "", ""},
		{`\1(a)`, "", ""},
		{`a*+`, "", ""},
		{`(?>a+)b`, "", ""},
		{`[\Q]\E]`, "", ""},
		{`\Q(\E`, "", ""},
		{`(*UTF8)abc`, "", ""},
		{`(*UCP)x`, "", ""},
		{`a{2000}`, "", ""},
		{`a{65535}`, "", ""},
		{`(a{500}){500}`, "", ""},
		{`[[:alpha:]-z]`, "", ""},
		{`[\d-z]`, "", ""},
		{`(?'n'a)`, "", ""},
		{`(?|(a)|(b))`, "", ""},
		{`[]a]`, "", ""},
		{`^$`, "", ""},
		{``, "", ""},
	}
	for _, c := range cases {
		what, fix, refused := Refused(c.expr)
		if refused != (c.what != "") {
			t.Errorf("%q: refused %v (%s; %s), want %v", c.expr, refused, what, fix, c.what != "")
			continue
		}
		if !strings.Contains(what, c.what) || !strings.Contains(fix, c.fix) {
			t.Errorf("%q: %q; %q, want %q; %q", c.expr, what, fix, c.what, c.fix)
		}
	}
}
