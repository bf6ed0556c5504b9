package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// locks holds the apply locks of the vhosts being changed.
type locks struct {
	mu   sync.Mutex
	opts lock.Options
	held map[string]*lock.Lock
}

// newLocks prepares the apply locks of the broker behind c: each waits up
// to wait while another apply holds it, telling waiting (when set) once.
func newLocks(c *broker.Client, amqpURL string, wait time.Duration, waiting func(vhost, holder string)) *locks {
	opts := lockOptions(c, amqpURL, "apply")
	opts.Wait, opts.Waiting = wait, waiting
	opts.Holder = func(ctx context.Context, vhost string) string { return lockHolder(ctx, c, vhost) }
	return &locks{opts: opts, held: map[string]*lock.Lock{}}
}

// lockHolder names who holds the apply lock of vhost: its connection once
// the broker reports it (a few seconds after it opened), until then the
// name the holder wrote into the lock queue's arguments.
func lockHolder(ctx context.Context, c *broker.Client, vhost string) string {
	if conn := c.QueueHolder(ctx, vhost, lock.QueueName); conn != "" {
		return conn
	}
	args, err := c.QueueArguments(ctx, vhost, lock.QueueName)
	if err != nil {
		return ""
	}
	if name, ok := args.String(lock.ArgHolder); ok && name != "" {
		return fmt.Sprintf("%q", name)
	}
	return ""
}

func (l *locks) acquire(ctx context.Context, vhost string) error {
	l.mu.Lock()
	_, ok := l.held[vhost]
	l.mu.Unlock()
	if ok {
		return nil
	}
	lk, err := lock.Acquire(ctx, vhost, l.opts)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.held[vhost] = lk
	l.mu.Unlock()
	return nil
}

// open gives inspect to the exact reads of the apply's plan (startExact).
func (l *locks) open(context.Context) (inspectFunc, error) { return l.inspect, nil }

func (l *locks) inspect(_ context.Context, vhost, queue, queueType string) (lock.QueueState, error) {
	l.mu.Lock()
	lk := l.held[vhost]
	l.mu.Unlock()
	if lk == nil {
		return lock.QueueState{}, fmt.Errorf("no apply lock held on vhost %q", vhost)
	}
	if queueType == topology.QueueStream {
		return lk.InspectStream(queue, lock.StreamWait)
	}
	if queueType == topology.QueueQuorum {
		return lk.InspectQuorum(queue)
	}
	return lk.Inspect(queue)
}

// lost returns an error when a held lock is no longer this apply's (its
// connection closed, or its queue went: lock.Lock.Check, which asks the
// broker when it has not for a second): another apply could then take
// the vhost, so no further request that changes anything may go out.
func (l *locks) lost() error {
	l.mu.Lock()
	held := make([]*lock.Lock, 0, len(l.held))
	for _, lk := range l.held {
		held = append(held, lk)
	}
	l.mu.Unlock()
	for _, lk := range held {
		if err := lk.Check(); err != nil {
			return err
		}
	}
	return nil
}

// checkFirst makes sure, before anything changes, that the locks can be
// taken at all when p creates every vhost it writes in: none is held yet,
// and each is taken right after its vhost is created, so an AMQP URL that
// reaches no broker, or refuses the user, would fail the apply after its
// first change (met with --amqp-url given the management API's port).
// broker.CheckAMQP asks the broker for the first vhost p creates.
func (l *locks) checkFirst(ctx context.Context, p *plan.Plan) error {
	l.mu.Lock()
	held := len(l.held)
	l.mu.Unlock()
	if held > 0 {
		return nil
	}
	for _, c := range p.Changes {
		if c.Kind.Container() && c.Action == plan.Create {
			if err := broker.CheckAMQP(ctx, broker.AMQPDial{URL: l.opts.URL, Vhost: c.Name, TLS: l.opts.TLS, Name: l.opts.Name}); err != nil {
				return fmt.Errorf("apply refused, nothing was changed: mqctl takes the apply lock of vhost %q over AMQP right after creating it, and %w", c.Name, err)
			}
			return nil
		}
	}
	return nil
}

func (l *locks) releaseAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for vh, lk := range l.held {
		_ = lk.Release()
		delete(l.held, vh)
	}
}
