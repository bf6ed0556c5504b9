package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/plan"
)

// A write whose outcome is unknown (broker.ErrOutcomeUnknown: it was sent
// and the connection broke, the answer timed out, or the endpoint answered
// 5xx) is never sent again blindly. write reads the object back first:
// when the write took effect the step is done; when it did not, the write
// is sent once more (and, if its outcome is unknown again, read back once
// more). A write is never repeated without a read in between.

// check reads the object a write is about and reports whether the write
// took effect.
type check func(ctx context.Context) (bool, error)

// write runs call, settling an unknown outcome with done.
func write(ctx context.Context, call func() error, done check) error {
	err := call()
	for again := false; errors.Is(err, broker.ErrOutcomeUnknown); again = true {
		ok, rerr := done(ctx)
		switch {
		case rerr != nil:
			return fmt.Errorf("%w; reading it back to tell whether it was done failed too: %v", err, rerr)
		case ok:
			return nil
		case again:
			return fmt.Errorf("%w; read back, it was not done (after one more try)", err)
		}
		err = call()
	}
	return err
}

// absent turns a read of one object into "it is gone".
func absent(err error) (bool, error) {
	if errors.Is(err, broker.ErrNotFound) {
		return true, nil
	}
	return false, err
}

// present turns a read of one object into "it exists" (false when it, or
// its vhost, does not).
func present(err error) (bool, error) {
	if err == nil {
		return true, nil
	}
	if errors.Is(err, broker.ErrNotFound) {
		return false, nil
	}
	return false, err
}

func (e *executor) vhostExists(name string) check {
	return func(ctx context.Context) (bool, error) {
		_, err := e.c.GetVhost(ctx, name)
		return present(err)
	}
}

func (e *executor) vhostGone(name string) check {
	return func(ctx context.Context) (bool, error) {
		_, err := e.c.GetVhost(ctx, name)
		return absent(err)
	}
}

// vhostDescribed: the vhost has the description the update set (the only
// metadata every supported broker version stores).
func (e *executor) vhostDescribed(name, description string) check {
	return func(ctx context.Context) (bool, error) {
		info, err := e.c.GetVhost(ctx, name)
		if ok, err := present(err); !ok {
			return false, err
		}
		return description == "" || info.Description == description, nil
	}
}

func (e *executor) permitted(vhost string) check {
	return func(ctx context.Context) (bool, error) {
		ok, err := e.c.HasPermissions(ctx, vhost, e.c.Username())
		if err != nil {
			return present(err)
		}
		return ok, nil
	}
}

// written: the broker holds the object step s writes (Step.object), read
// by its kind's read, with no field that differs as the diff compares
// them: one comparison for the plan and for the read back of a write (a
// user's password against the hash the broker keeps included). One of
// that name with other settings was not written by this step (the broker
// refuses an inequivalent declaration, as the next try will show).
func (e *executor) written(s Step, read readFunc) check {
	return func(ctx context.Context) (bool, error) {
		have, err := read(ctx, e, s)
		if ok, err := present(err); !ok {
			return false, err
		}
		return len(plan.ObjectFields(s.Kind(), have, s.object())) == 0, nil
	}
}

// gone: the broker holds no object of step s, read by its kind's read.
func (e *executor) gone(s Step, read readFunc) check {
	return func(ctx context.Context) (bool, error) {
		_, err := read(ctx, e, s)
		return absent(err)
	}
}
