package cli

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/plan"
)

// savedFlows are the flows of a saved plan, left in its file when the
// plan was read (plan.StreamSavedFlowsApart) and read again from there
// when apply shows the plan: held only while they are shown, not while
// apply reads the broker beside the rest of the plan. The file stays open
// (a plan saved again over it by rename leaves this one readable), and is
// read whole again, to the same digest, or refused: a file written over
// in place since would show other flows than the plan's.
type savedFlows struct {
	name string
	f    *os.File
	at   int64  // where the flows are in the file (plan.ReadSavedFlows)
	sum  []byte // the file's SHA-256 when the plan was read
}

// read reads the flows from the file again.
func (s *savedFlows) read() (*flow.Diff, error) {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, s.readErr(err)
	}
	sum := sha256.New()
	r := io.TeeReader(s.f, sum)
	if _, err := io.CopyN(io.Discard, r, s.at); err != nil {
		return nil, s.readErr(err)
	}
	d, err := plan.ReadSavedFlows(r)
	// The rest, to its digest, whether the flows read or not: a file
	// written over in place may not.
	if _, cerr := io.Copy(io.Discard, r); err == nil {
		err = cerr
	}
	if !bytes.Equal(sum.Sum(nil), s.sum) {
		return nil, fmt.Errorf("%s changed since apply read it (written over while apply ran): nothing was changed; apply the plan again, and do not change its file until apply is done", s.name)
	}
	if err != nil {
		return nil, s.readErr(err)
	}
	return d, nil
}

func (s *savedFlows) readErr(err error) error {
	return fmt.Errorf("read the message flows of %s again to show them: %w; nothing was changed", s.name, err)
}

// close closes the file; nothing for a nil s.
func (s *savedFlows) close() {
	if s != nil {
		s.f.Close()
	}
}
