package definitions

import (
	"strings"
	"unicode/utf8"

	"github.com/mqctl/mqctl/pkg/topology"
)

// Error is one problem found in a definitions file. Pos names the file and,
// where known, the line and column of the offending object or character.
type Error struct {
	Pos topology.Pos
	Msg string
}

func (e *Error) Error() string {
	if p := e.Pos.String(); p != "" {
		return p + ": " + e.Msg
	}
	return e.Msg
}

// ErrorList is every problem found in one definitions file, in file order.
// Read returns it when the file cannot be turned into a topology.
type ErrorList []*Error

// Error renders one problem per line.
func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// position converts a byte offset in data to a 1-based line and column
// (columns count characters, not bytes).
func position(data []byte, offset int) (line, col int) {
	if offset > len(data) {
		offset = len(data)
	}
	if offset < 0 {
		offset = 0
	}
	line, col = 1, 1
	for i := 0; i < offset; {
		r, size := utf8.DecodeRune(data[i:])
		i += size
		if r == '\n' {
			line++
			col = 1
			continue
		}
		col++
	}
	return line, col
}
