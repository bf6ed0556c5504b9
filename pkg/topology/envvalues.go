package topology

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// EnvValue is a value a file took from the environment (${VAR}, written
// anywhere but in a key) and what the file wrote for it (Raw, with its
// ${…}). Such a value may be a secret: output shows Raw in its place.
type EnvValue struct {
	Value string `json:"value"`
	Raw   string `json:"written"`
	// Secret: the value of a secret field (a password, a URI), which no
	// saved plan holds.
	Secret bool `json:"-"`
}

// HiddenMinBytes is the length from which a value from the environment is
// hidden wherever text shows it, not only where the text quotes it or
// sets it apart ([v], k=v): a shorter value (1, quorum) is too likely
// part of the text's own words.
const HiddenMinBytes = 8

// Written is what text shows in place of the value quoted ("…"): the
// file's ${VAR} when that is all it wrote, else what it wrote, quoted.
func (e EnvValue) Written() string {
	if strings.HasPrefix(e.Raw, "${") && strings.Count(e.Raw, "${") == 1 && strings.HasSuffix(e.Raw, "}") {
		return e.Raw
	}
	return strconv.Quote(e.Raw)
}

// Hide is s without e's value: where s quotes it ("…"), the last quote
// only when lastOnly (a loader error naming its object first, whose name
// may be the same, is about the last), it is replaced with Written and
// "(its value not shown)"; a value of HiddenMinBytes or more is replaced
// with Written wherever it is.
func (e EnvValue) Hide(s string, lastOnly bool) string {
	if e.Value == "" {
		return s
	}
	written, quoted := e.Written(), strconv.Quote(e.Value)
	shown := written + notShown
	if lastOnly {
		if i := strings.LastIndex(s, quoted); i >= 0 {
			s = s[:i] + shown + s[i+len(quoted):]
		}
	} else {
		s = strings.ReplaceAll(s, quoted, shown)
	}
	if len(e.Value) >= HiddenMinBytes {
		s = strings.ReplaceAll(s, e.Value, written)
	}
	return s
}

// notShown follows a value's ${VAR} where an error or a note quoted the
// value: the reader learns that a value was there.
const notShown = " (its value not shown)"

// EnvValues are the values of a load taken from the environment
// (Topology.Env), the longest first.
type EnvValues []EnvValue

// NewEnvValues returns vs without repeats, the longest value first (so
// that a value is hidden whole before a shorter one within it).
func NewEnvValues(vs []EnvValue) EnvValues {
	out := slices.Clone(vs)
	slices.SortFunc(out, func(a, b EnvValue) int {
		if c := cmp.Compare(len(b.Value), len(a.Value)); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Value, b.Value), strings.Compare(a.Raw, b.Raw))
	})
	return EnvValues(slices.Compact(out))
}

// Hide returns s with each value of vs it shows replaced with what the
// file wrote, for an error, a finding, a note or a refusal: quoted ("v",
// as Go and JSON quote it, or \"v\" within a quoted text) as Written
// says, followed by "(its value not shown)", and bare as Raw, where it is
// at least HiddenMinBytes long or stands apart (after one of `[{(,=` or
// `":`, before one of `]}),;` or the end).
func (vs EnvValues) Hide(s string) string { return vs.replace(s, notShown, false) }

// Written is s as Hide makes it, without "(its value not shown)": for
// mqctl test's report, which shows each value as the file wrote it.
func (vs EnvValues) Written(s string) string { return vs.replace(s, "", false) }

// Quoted is s as Written makes it, but a quoted value keeps its quotes
// around what the file wrote ("${TOKEN}"): for a text in a syntax of its
// own (a diagram, JSON), which a bare ${VAR} would break.
func (vs EnvValues) Quoted(s string) string { return vs.replace(s, "", true) }

func (vs EnvValues) replace(s, note string, keepQuotes bool) string {
	if len(vs) == 0 || s == "" {
		return s
	}
	var sb strings.Builder
	last := 0
	for i := 0; i < len(s); {
		rep, n := vs.at(s, i, note, keepQuotes)
		if n == 0 {
			i++
			continue
		}
		sb.WriteString(s[last:i])
		sb.WriteString(rep)
		i += n
		last = i
	}
	if last == 0 {
		return s
	}
	sb.WriteString(s[last:])
	return sb.String()
}

// at is the replacement of the value of vs that s shows at i, and its
// length there (0: none).
func (vs EnvValues) at(s string, i int, note string, keepQuotes bool) (string, int) {
	rest := s[i:]
	for _, v := range vs {
		if v.Value == "" {
			continue
		}
		written := v.Written() + note
		if keepQuotes {
			written = strconv.Quote(v.Raw)
		}
		q := strconv.Quote(v.Value)
		if strings.HasPrefix(rest, q) {
			return written, len(q)
		}
		if j, err := json.Marshal(v.Value); err == nil && string(j) != q && strings.HasPrefix(rest, string(j)) {
			if keepQuotes {
				jr, _ := json.Marshal(v.Raw)
				return string(jr), len(j)
			}
			return written, len(j)
		}
		// Quoted within a quoted text (a test's name, quoted in a list).
		if qq := strconv.Quote(q); strings.HasPrefix(rest, qq[1:len(qq)-1]) {
			shown := strconv.Quote(written)
			return shown[1 : len(shown)-1], len(qq) - 2
		}
		if strings.HasPrefix(rest, v.Value) && (len(v.Value) >= HiddenMinBytes || apart(s, i, i+len(v.Value))) {
			return v.Raw, len(v.Value)
		}
	}
	return "", 0
}

// apart reports whether s[from:to] stands apart: a binding key in a route
// ([key]), a header in a list of them (k=v, …), a value in a table
// ({"k":v}).
func apart(s string, from, to int) bool {
	left := from > 0 && (strings.IndexByte("[{(,=", s[from-1]) >= 0 || from > 1 && s[from-2:from] == `":`)
	right := to == len(s) || strings.IndexByte("]}),;", s[to]) >= 0
	return left && right
}
