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
