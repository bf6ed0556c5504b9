package cli

import (
	"io"

	"github.com/mqctl/mqctl/pkg/topotest"
)

// testsView shows what mqctl test found: the results to a person (text)
// or to a program (their JSON document, json).
type testsView struct {
	json bool
	w    io.Writer
}

// report writes the results r.
func (v testsView) report(r *topotest.Report) error {
	if v.json {
		return topotest.WriteJSON(v.w, r)
	}
	return topotest.WriteText(v.w, r)
}
