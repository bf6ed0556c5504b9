// Package pattern matches names against the patterns of RabbitMQ policies,
// which the broker evaluates with Erlang's re, that is PCRE: a search
// anywhere in the name, with lookaround and backreferences. Go's regexp
// (RE2) reads most patterns and is used for them; a pattern only PCRE
// reads, such as the "^(?!amq\.).*" of RabbitMQ's own documentation, is
// evaluated by a backtracking engine that reads Perl's syntax.
package pattern

import (
	"fmt"
	"regexp"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// matchTimeout bounds one match by the backtracking engine. RabbitMQ
// bounds its own (a PCRE match limit of 50,000 from 4.2.9 and 4.3.2),
// and a pattern that hits the limit does not match; so here.
const matchTimeout = 100 * time.Millisecond

// Pattern is a compiled policy pattern. It is safe for concurrent use.
type Pattern struct {
	re   *regexp.Regexp
	pcre *regexp2.Regexp
}

// Compile reads expr as RabbitMQ does. The error, when neither engine
// reads it, is the one of Go's syntax, which says what is wrong.
func Compile(expr string) (*Pattern, error) {
	re, err := regexp.Compile(expr)
	if err == nil {
		return &Pattern{re: re}, nil
	}
	pcre, perr := regexp2.Compile(expr)
	if perr != nil {
		return nil, fmt.Errorf("%w (nor as PCRE: %v)", err, perr)
	}
	pcre.MatchTimeout = matchTimeout
	return &Pattern{pcre: pcre}, nil
}

// MatchString reports whether the pattern matches somewhere in s. A
// backtracking match that runs past its bound does not match.
func (p *Pattern) MatchString(s string) bool {
	if p.re != nil {
		return p.re.MatchString(s)
	}
	ok, err := p.pcre.MatchString(s)
	if err != nil {
		return false
	}
	return ok
}

// PCRE reports whether the pattern needs the backtracking engine: Go's
// syntax does not read it.
func (p *Pattern) PCRE() bool { return p.pcre != nil }

// String returns the pattern's source.
func (p *Pattern) String() string {
	if p.re != nil {
		return p.re.String()
	}
	return p.pcre.String()
}
