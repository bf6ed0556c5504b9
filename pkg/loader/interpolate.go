package loader

import (
	"fmt"
	"strings"
)

// interpolationError says why a ${…} reference could not be replaced.
type interpolationError struct {
	msg  string
	hint string
}

// interpolate replaces ${VAR} and ${VAR:-default} in s with values from
// lookup, and $$ with a literal $. A $ followed by anything else is kept.
// ${VAR:-default} uses default when VAR is unset or empty, as a shell does.
// changed reports whether s contained anything to replace.
func interpolate(s string, lookup func(string) (string, bool)) (out string, changed bool, ierr *interpolationError) {
	if !strings.Contains(s, "$") {
		return s, false, nil
	}
	var sb strings.Builder
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
				return s, false, &interpolationError{
					msg:  fmt.Sprintf("unterminated ${ in %q", s),
					hint: "close it with }, or write $$ for a literal $",
				}
			}
			expr := s[i+2 : i+2+end]
			val, err := expand(expr, lookup)
			if err != nil {
				return s, false, err
			}
			sb.WriteString(val)
			i += 2 + end
			changed = true
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), changed, nil
}

// expand resolves the inside of one ${…}: NAME or NAME:-default.
func expand(expr string, lookup func(string) (string, bool)) (string, *interpolationError) {
	name, def, hasDefault := strings.Cut(expr, ":-")
	if !validVarName(name) {
		return "", &interpolationError{
			msg:  fmt.Sprintf("invalid variable reference ${%s}", expr),
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
			msg:  fmt.Sprintf("environment variable %s is not set", name),
			hint: fmt.Sprintf("set %s, or give a default: ${%s:-value}", name, name),
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
