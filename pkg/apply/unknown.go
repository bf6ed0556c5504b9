package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
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

// exchangeIs: the exchange exists with want's settings, compared as the
// diff compares them. One that exists with other settings was not
// declared by this write (the broker refuses an inequivalent declaration,
// as the next try will show).
func (e *executor) exchangeIs(vhost string, want *topology.Exchange) check {
	return func(ctx context.Context) (bool, error) {
		have, err := e.c.GetExchange(ctx, vhost, want.Name)
		if ok, err := present(err); !ok {
			return false, err
		}
		return holds(kind.Exchange, plan.ExchangeObject{Exchange: have}, plan.ExchangeObject{Exchange: want}), nil
	}
}

// holds reports whether have, as the broker holds it, is want: no field
// differs as the diff compares them (one comparison for the plan and for
// the read back of a write).
func holds(k kind.Kind, have, want plan.Object) bool {
	return len(plan.ObjectFields(k, have, want)) == 0
}

func (e *executor) exchangeGone(vhost, name string) check {
	return func(ctx context.Context) (bool, error) {
		_, err := e.c.GetExchange(ctx, vhost, name)
		return absent(err)
	}
}

// queueIs: the queue exists with want's settings.
func (e *executor) queueIs(vhost string, want *topology.Queue) check {
	return func(ctx context.Context) (bool, error) {
		have, err := e.c.GetQueue(ctx, vhost, want.Name)
		if ok, err := present(err); !ok {
			return false, err
		}
		return holds(kind.Queue, plan.QueueObject{Queue: have}, plan.QueueObject{Queue: want}), nil
	}
}

func (e *executor) queueGone(vhost, name string) check {
	return func(ctx context.Context) (bool, error) {
		_, err := e.c.GetQueue(ctx, vhost, name)
		return absent(err)
	}
}

func (e *executor) bindingExists(vhost string, b *topology.Binding) check {
	return func(ctx context.Context) (bool, error) {
		_, err := e.c.BindingPropertiesKey(ctx, vhost, b)
		return present(err)
	}
}

func (e *executor) bindingGone(vhost string, b *topology.Binding) check {
	return func(ctx context.Context) (bool, error) {
		_, err := e.c.BindingPropertiesKey(ctx, vhost, b)
		return absent(err)
	}
}

// policyIs: the policy of kind k exists with want's settings.
func (e *executor) policyIs(k kind.Kind, vhost string, want *topology.Policy) check {
	return func(ctx context.Context) (bool, error) {
		have, err := e.c.GetPolicy(ctx, k, vhost, want.Name)
		if ok, err := present(err); !ok {
			return false, err
		}
		return holds(k, plan.PolicyObject{Policy: have}, plan.PolicyObject{Policy: want}), nil
	}
}

// itemIs reads the items of kind k in vhost back: true when want is
// there with its settings, or, with want nil, when the item named name is
// gone.
func (e *executor) itemIs(k kind.Kind, vhost string, want *topology.Item, name ...string) check {
	return func(ctx context.Context) (bool, error) {
		items, err := e.c.ReadItems(ctx, k, vhost)
		if err != nil {
			return false, err
		}
		for _, it := range items {
			switch {
			case want == nil && len(name) > 0 && it.Name == name[0]:
				return false, nil
			case want != nil && it.Name == want.Name:
				return it.Settings.Equal(want.Settings), nil
			}
		}
		return want == nil, nil
	}
}

func (e *executor) policyGone(k kind.Kind, vhost, name string) check {
	return func(ctx context.Context) (bool, error) {
		_, err := e.c.GetPolicy(ctx, k, vhost, name)
		return absent(err)
	}
}
