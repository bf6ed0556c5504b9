package broker_test

import (
	"errors"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A Declarer's declaration (apply's writes over AMQP, from 1,000
// declarations in a vhost) asks the write guard too, right before it goes
// out, and is not made when the guard says no.
func TestDeclarerAsksTheWriteGuard(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	c := connect(t, b)
	d := c.Declarer("mqctl test")
	defer d.Close()
	no := errors.New("the apply lock was lost")
	for _, tc := range []struct {
		queue string
		guard func() error
	}{
		{"let-go", func() error { return nil }},
		{"held-back", func() error { return no }},
	} {
		ctx := broker.WithWriteGuard(t.Context(), tc.guard)
		err := d.DeclareQueue(ctx, vh, &topology.Queue{Name: tc.queue, Durable: true})
		_, qerr := c.GetQueue(t.Context(), vh, tc.queue)
		switch {
		case tc.guard() == nil && (err != nil || qerr != nil):
			t.Errorf("declare %s under a guard that lets it go: %v; the broker: %v", tc.queue, err, qerr)
		case tc.guard() != nil && (!errors.Is(err, no) || !errors.Is(qerr, broker.ErrNotFound)):
			t.Errorf("declare %s under a guard that says no: %v, want its error; the broker: %v, want no such queue", tc.queue, err, qerr)
		}
	}
}
