package loader

import (
	"fmt"
	"slices"
	"strings"
)

// interpolationError says why a ${…} reference could not be replaced.
type interpolationError struct {
	msg  string
	hint string
	// unset names the variables that are not set (each once, in order)
	// when nothing else is wrong with the value; nil otherwise.
	unset []string
}

// interpolate replaces ${VAR} and ${VAR:-default} in s with values from
// lookup, and $$ with a literal $. A $ followed by anything else is kept.
// ${VAR:-default} uses default when VAR is unset or empty, as a shell does.
// changed reports whether s contained anything to replace. The error is
// the first problem; when every problem is a variable that is not set, it
// lists them all (interpolationError.unset).
func interpolate(s string, lookup func(string) (string, bool)) (out string, changed bool, ierr *interpolationError) {
	if !strings.Contains(s, "$") {
		return s, false, nil
	}
	var sb strings.Builder
	var first *interpolationError
	var unset []string
	other := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			sb.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			sb.WriteByte('$')
			i++
			changed = true
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				if first == nil {
					first = &interpolationError{
						// The value is not quoted: it may be a secret (a
						// password with a ${ in it), the position names it.
						msg:  "a ${ in this value is not closed",
						hint: "close it with }, or write $$ for a literal $",
					}
				}
				first.unset = nil
				return s, false, first
			}
			expr := s[i+2 : i+2+end]
			val, err := expand(expr, lookup)
			if err != nil {
				if first == nil {
					first = err
				}
				if err.unset == nil {
					other = true
				} else if !slices.Contains(unset, err.unset[0]) {
					unset = append(unset, err.unset[0])
				}
			}
			sb.WriteString(val)
			i += 2 + end
			changed = true
		default:
			sb.WriteByte(c)
		}
	}
	if first != nil {
		first.unset = nil
		if !other {
			first.unset = unset
		}
		return s, false, first
	}
	return sb.String(), changed, nil
}

// expand resolves the inside of one ${…}: NAME or NAME:-default.
func expand(expr string, lookup func(string) (string, bool)) (string, *interpolationError) {
	name, def, hasDefault := strings.Cut(expr, ":-")
	if !validVarName(name) {
		return "", &interpolationError{
			// What is inside is not quoted: the ${ may be part of a
			// password written in the file.
			msg:  "a ${…} in this value is no variable reference",
			hint: "write ${NAME} or ${NAME:-default}; NAME is letters, digits and _ and does not start with a digit",
		}
	}
	val, ok := "", false
	if lookup != nil {
		val, ok = lookup(name)
	}
	switch {
	case hasDefault && val == "":
		return def, nil
	case ok:
		return val, nil
	default:
		return "", &interpolationError{
			msg:   fmt.Sprintf("environment variable %s is not set", name),
			hint:  fmt.Sprintf("set %s, or give a default: ${%s:-value}", name, name),
			unset: []string{name},
		}
	}
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
