package definitions

import (
	"sort"
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

// lineIndex finds line:column positions in one document. Positions asked
// for in increasing order cost, in all, one pass over the document, even
// when it is a single line (as the management API writes it).
type lineIndex struct {
	data   []byte
	starts []int // byte offset of each line's first byte

	// the last position found, to count columns on from it
	lastOffset, lastLine, lastCol int
}

func newLineIndex(data []byte) *lineIndex {
	ix := &lineIndex{data: data, starts: []int{0}, lastLine: 1, lastCol: 1}
	for i, b := range data {
		if b == '\n' {
			ix.starts = append(ix.starts, i+1)
		}
	}
	return ix
}

// position converts a byte offset to a 1-based line and column (columns
// count characters, not bytes).
func (ix *lineIndex) position(offset int) (line, col int) {
	offset = max(0, min(offset, len(ix.data)))
	l := sort.Search(len(ix.starts), func(i int) bool { return ix.starts[i] > offset }) - 1
	from, col := ix.starts[l], 1
	if ix.lastLine == l+1 && ix.lastOffset <= offset {
		from, col = ix.lastOffset, ix.lastCol
	}
	col += utf8.RuneCount(ix.data[from:offset])
	ix.lastOffset, ix.lastLine, ix.lastCol = offset, l+1, col
	return l + 1, col
}
