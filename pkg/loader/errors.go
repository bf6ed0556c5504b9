package loader

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// Error is one problem in a topology file, at a position.
type Error struct {
	Pos topology.Pos
	// Msg says what is wrong, naming the offending value.
	Msg string
	// Hint says what would be accepted or how to fix it (may be empty).
	Hint string
}

func (e *Error) Error() string {
	var sb strings.Builder
	if p := e.Pos.String(); p != "" {
		sb.WriteString(p)
		sb.WriteString(": ")
	}
	sb.WriteString(e.Msg)
	if e.Hint != "" {
		sb.WriteString(" (")
		sb.WriteString(e.Hint)
		sb.WriteString(")")
	}
	return sb.String()
}

// ErrorList is every problem found in one load, in file order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	default:
		return fmt.Sprintf("%s (and %d more errors)", l[0].Error(), len(l)-1)
	}
}
