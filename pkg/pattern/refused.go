package pattern

import (
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
)

// maxRepeat is the largest count PCRE takes in a {n,m} quantifier ("number
// too big in {} quantifier" above it); Go's syntax stops at 1000.
const maxRepeat = 65535

// Refused reports whether RabbitMQ refuses regular expression expr as
// invalid: a policy's or operator policy's pattern (HTTP 400, the policy's
// validation fails) and a permission's or topic permission's regexps
// (invalid_regexp). what says what is wrong, fix how to fix it.
//
// RabbitMQ compiles them with Erlang's re, PCRE; Go's syntax (RE2) refuses
// much that PCRE reads (lookaround, backreferences, possessive
// quantifiers, atomic groups, \Q…\E in a class, counts above 1000, verbs
// such as (*UTF8)). So only the errors of Go's syntax that PCRE makes too
// refuse expr: a parenthesis or a bracket left open, a ) with no group, a
// trailing backslash, a repetition with nothing to repeat, a character
// range out of order, a {n,m} count out of order or above 65535 (Erlang/OTP
// re.compile answers "missing )", "unmatched parentheses", "missing
// terminating ] for character class", "\ at end of pattern", "nothing to
// repeat", "range out of order in character class", "numbers out of order
// in {} quantifier", "number too big in {} quantifier"). Any other error is
// left to the broker, and a pattern Go's syntax cannot read is evaluated as
// PCRE (Compile).
func Refused(expr string) (what, fix string, refused bool) {
	_, err := syntax.Parse(expr, syntax.Perl)
	e, ok := err.(*syntax.Error)
	if !ok {
		return "", "", false
	}
	switch e.Code {
	case syntax.ErrMissingParen:
		return string(e.Code), `close the group or escape the parenthesis (\()`, true
	case syntax.ErrUnexpectedParen:
		return string(e.Code), `remove the ) that closes no group, or escape it (\))`, true
	case syntax.ErrMissingBracket:
		return fmt.Sprintf("%s for the character class %s", e.Code, e.Expr), `close the character class with ], or escape the bracket (\[)`, true
	case syntax.ErrTrailingBackslash:
		return string(e.Code), `remove the backslash, or double it (\\) to match a backslash`, true
	case syntax.ErrMissingRepeatArgument:
		// (*UTF8), (*UCP), (*ANY)… are PCRE's verbs and options, which Go
		// reads as a repetition of nothing.
		if strings.Contains(expr, "(*") {
			return "", "", false
		}
		return fmt.Sprintf("%s %s: nothing to repeat", e.Code, e.Expr), fmt.Sprintf(`put what to repeat before %s, or escape it (\%s)`, e.Expr, firstRune(e.Expr)), true
	case syntax.ErrInvalidCharRange:
		lo, hi, ok := rangeEnds(e.Expr)
		if !ok || lo <= hi {
			return "", "", false
		}
		return fmt.Sprintf("%s %s: the range runs backwards", e.Code, e.Expr), fmt.Sprintf(`write the lower character first ([%c-%c]), or escape the hyphen (\-) to match it`, hi, lo), true
	case syntax.ErrInvalidRepeatSize:
		min, max, ok := repeatCounts(e.Expr)
		switch {
		case !ok:
			return "", "", false
		case min > maxRepeat || max > maxRepeat:
			return fmt.Sprintf("%s %s: PCRE takes counts up to %d", e.Code, e.Expr, maxRepeat), fmt.Sprintf("use counts of at most %d", maxRepeat), true
		case max >= 0 && max < min:
			return fmt.Sprintf("%s %s: the counts are out of order", e.Code, e.Expr), fmt.Sprintf("write the smaller count first ({%d,%d})", max, min), true
		}
	}
	return "", "", false
}

// firstRune is the first character of s, "" for none.
func firstRune(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}

// rangeEnds reads a character range as Go's syntax error gives it, "z-a"
// or `\x7a-\x61`: both ends single characters (an escape such as \d is
// not one); ok is false otherwise.
func rangeEnds(expr string) (lo, hi rune, ok bool) {
	for i := 1; i < len(expr)-1; i++ {
		if expr[i] != '-' {
			continue
		}
		l, okl := literal(expr[:i])
		h, okh := literal(expr[i+1:])
		if okl && okh {
			return l, h, true
		}
	}
	return 0, 0, false
}

// literal is the one character s stands for in a character class.
func literal(s string) (rune, bool) {
	re, err := syntax.Parse("["+s+"]", syntax.Perl)
	if err != nil || re.Op != syntax.OpLiteral || len(re.Rune) != 1 {
		return 0, false
	}
	return re.Rune[0], true
}

// repeatCounts reads a {n}, {n,} or {n,m} quantifier: max is -1 for none.
func repeatCounts(expr string) (min, max int, ok bool) {
	body, found := strings.CutPrefix(expr, "{")
	if body, found = strings.CutSuffix(body, "}"); !found {
		return 0, 0, false
	}
	lo, hi, comma := strings.Cut(body, ",")
	min, err := strconv.Atoi(lo)
	if err != nil {
		return 0, 0, false
	}
	switch {
	case !comma:
		return min, min, true
	case hi == "":
		return min, -1, true
	}
	max, err = strconv.Atoi(hi)
	if err != nil {
		return 0, 0, false
	}
	return min, max, true
}
