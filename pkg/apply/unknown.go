package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/mqctl/mqctl/pkg/broker"
)

// A write whose outcome is unknown (broker.ErrOutcomeUnknown: it was sent
// and the connection broke, the answer timed out, or the endpoint answered
// 5xx) is never sent again blindly. write reads the object back first:
// when the write took effect the step is done; when it did not, the write
// is sent once more (and, if its outcome is unknown again, read back once
// more). A write is never repeated without a read in between.

// ErrNotDone is in the error of a write whose outcome was unknown twice
// and that was read back not done both times: the broker answered (a 5xx,
// not silence) and can be read, so it is no sign of a broker out of reach.
var ErrNotDone = errors.New("read back, it was not done")

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
			return fmt.Errorf("%w; %w (after one more try)", err, ErrNotDone)
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
// by its kind's object, as its driver tells a write done
// (broker.Driver.Holds: no field that differs as the diff compares them,
// one comparison for the plan and for the read back of a write, a user's
// password against the hash the broker keeps included; a vhost's
// description). One of that name with other settings was not written by
// this step (the broker refuses an inequivalent declaration, as the next
// try will show).
func (e *executor) written(s Step, o object) check {
	return func(ctx context.Context) (bool, error) {
		have, err := o.read(ctx, e, s)
		if ok, err := present(err); !ok {
			return false, err
		}
		return o.d.Holds(o.k, have, s.object()), nil
	}
}

// gone: the broker holds no object of step s, read by its kind's object.
func (e *executor) gone(s Step, o object) check {
	return func(ctx context.Context) (bool, error) {
		_, err := o.read(ctx, e, s)
		return absent(err)
	}
}
