// Package engine runs the sequence of a plan and of an apply against one
// broker: read the broker's state and split mqctl's ownership records off
// it, adjust the desired state to the broker's version, diff, fill in the
// messages at stake, hold back the changes on queues out of reach and, for
// an apply, take the vhosts' locks, check a saved plan's fingerprint,
// refuse what would lose data, execute, and wait until a later plan sees
// the changes.
//
// The engine prints nothing. What a user sees (the plan, the question,
// the progress, the report) is the caller's, through the hooks of Options
// and ApplyOptions, which the engine calls at fixed points of the
// sequence.
package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// Options configure an Engine.
type Options struct {
	// AMQPURL is the AMQP URL (with credentials, without a vhost) of the
	// apply locks and of the exact reads of queue depths, asked for when
	// first needed: broker.Client.AMQPURL with this as its override (""
	// takes the client's own).
	AMQPURL string
	// Note is told, one sentence each, what the user should know that is
	// no error: what the broker would not let mqctl read, a queue left
	// alone because its node is down, a deprecation. nil discards them.
	Note func(string)
	// Reconnect connects to the broker as a later command would (the
	// first endpoint that answers). After an apply through several
	// management endpoints the engine reads through it until every change
	// shows there, so that a plan right after is empty there too. nil
	// skips that wait.
	Reconnect func(context.Context) (*broker.Client, error)
	// LookupEnv reads the environment variables a saved plan names for
	// the secrets it does not hold (topology.Item.Refs); nil reads none.
	LookupEnv func(string) (string, bool)
}

// Engine plans and applies against the broker behind one client. It holds
// no state between calls; it is safe to use for several calls, one after
// the other.
type Engine struct {
	c    *broker.Client
	opts Options
	// noTable turns the version table's refusals off (tests: what the
	// preflight catches alone).
	noTable bool
	// asVersion, when set, is the version diff judges the file for in
	// place of the broker's own (tests: a broker of a later version that
	// holds what an earlier one made).
	asVersion *rmqversion.Version
	// beforeFlows, when set, is called by Plan just before the flows
	// (tests: what is still held then).
	beforeFlows func()
	// now is the preflight's clock (nil: time.Now) and sweepable the
	// leftovers its sweep may take (nil: all); tests set them.
	now       func() time.Time
	sweepable func(string) bool
}

// New returns an engine for the broker behind c. It does no I/O.
func New(c *broker.Client, opts Options) *Engine {
	return &Engine{c: c, opts: opts}
}

// note passes a note to Options.Note.
func (e *Engine) note(format string, args ...any) {
	if e.opts.Note != nil {
		e.opts.Note(fmt.Sprintf(format, args...))
	}
}

// amqpURL is the AMQP URL of the locks and of the exact queue reads.
func (e *Engine) amqpURL(ctx context.Context) (string, error) {
	return e.c.AMQPURL(ctx, e.opts.AMQPURL)
}
