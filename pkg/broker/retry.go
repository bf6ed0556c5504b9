package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Retry bounds how the client tries a failed request again. A request goes
// to the current endpoint; when that one does not answer (connection
// refused or reset, timeout) or answers 5xx, the client moves to the next
// endpoint, which becomes the current one for later requests too. One
// round tries every endpoint once; between rounds the client waits
// Backoff, doubled after each round up to MaxBackoff (plus up to a fifth
// at random, so that several clients do not retry in step).
//
// What is tried again:
//   - reads (GET), on any of the failures above;
//   - writes (PUT, POST, DELETE) only when they certainly did nothing: the
//     connection could not be opened, or a declaration (queue, exchange,
//     policy, binding) was answered 404 although its vhost exists (RabbitMQ
//     3.10 does so while the node shuts down). A write that was sent and got
//     no answer, or a
//     5xx, is not tried again: the broker may have carried it out, and the
//     error wraps ErrOutcomeUnknown so that the caller reads the object
//     back before deciding to write again.
//
// A 4xx answer is the broker's decision and is never tried again.
type Retry struct {
	// Attempts is the number of rounds (1: no retry). Default 4.
	Attempts int
	// Backoff is the pause after the first round. Default 250ms.
	Backoff time.Duration
	// MaxBackoff caps the pause. Default 2s.
	MaxBackoff time.Duration
	// Budget is how long after the first try a new round may still start.
	// A try itself is bounded by Config.Timeout, and every endpoint is
	// tried once in a round whatever the budget: with the default 30s
	// timeout a read that timed out moves on to the next endpoint, but is
	// not tried again on the same one (lower the timeout for that).
	// Default 10s.
	Budget time.Duration
}

// DefaultRetry is used for the zero fields of Config.Retry: four tries of
// each endpoint with pauses of 250ms, 500ms and 1s between rounds — about
// 1.75s plus the tries themselves — and no new round after 10s.
var DefaultRetry = Retry{Attempts: 4, Backoff: 250 * time.Millisecond, MaxBackoff: 2 * time.Second, Budget: 10 * time.Second}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = DefaultRetry.Attempts
	}
	if r.Backoff <= 0 {
		r.Backoff = DefaultRetry.Backoff
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = DefaultRetry.MaxBackoff
	}
	if r.MaxBackoff < r.Backoff {
		r.MaxBackoff = r.Backoff
	}
	if r.Budget <= 0 {
		r.Budget = DefaultRetry.Budget
	}
	return r
}

// pause is the wait after round (from 0), without jitter.
func (r Retry) pause(round int) time.Duration {
	d := r.Backoff
	for range round {
		d *= 2
		if d >= r.MaxBackoff {
			return r.MaxBackoff
		}
	}
	return d
}

// failure classifies the outcome of one try.
type failure int

const (
	failNone      failure = iota // success
	failAnswered                 // an answer that is the broker's decision (4xx, bad JSON): final
	failFinal                    // not worth another try: TLS settings, cancelled context, bad request
	failNotSent                  // nothing reached the broker (no connection), or it did nothing and may be asked again
	failNoAnswer                 // sent (or maybe sent) but no answer: reset, timeout, cut answer
	failAnswer5xx                // the endpoint answered 5xx
)

// retryableStatus reports whether an HTTP status means "this endpoint
// cannot serve the request now" rather than "the broker says no".
func retryableStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// classifyTransport tells a request that never left (dial failure) from one
// whose fate is unknown, and both from failures another try cannot cure.
func classifyTransport(ctx context.Context, err error) failure {
	if ctx.Err() != nil || speaksAMQP(err) {
		return failFinal
	}
	var (
		verr    *tls.CertificateVerificationError
		uaerr   x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
	)
	if errors.As(err, &verr) || errors.As(err, &uaerr) || errors.As(err, &hostErr) || errors.As(err, &invErr) ||
		errors.As(err, &recErr) || errors.As(err, &alert) || strings.Contains(err.Error(), "tls:") ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return failFinal
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return failNotSent
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return failNotSent
	}
	return failNoAnswer
}

// transportDetail is the short form of a transport failure: "dial:
// connection refused", "read: connection reset by peer", "no answer within
// 30s", "the connection was closed".
func transportDetail(err error, timeout time.Duration) string {
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the connection was closed"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		inner := op.Err
		var sys *os.SyscallError
		if errors.As(inner, &sys) {
			inner = sys.Err
		}
		return op.Op + ": " + MaskURL(inner.Error())
	}
	inner := err
	var uerr *url.Error
	if errors.As(err, &uerr) {
		inner = uerr.Err // url.Error repeats the request URL; keep only the cause
	}
	return MaskURL(inner.Error())
}

// current is the index of the endpoint requests go to now.
func (c *Client) current() int { return int(c.cur.Load()) % len(c.endpoints) }

// moveOn makes the endpoint after failed the current one, unless another
// request already moved on.
func (c *Client) moveOn(failed int) {
	c.cur.CompareAndSwap(int32(failed), int32((failed+1)%len(c.endpoints)))
}

// do sends r, trying it again as Retry says (see there), and decodes a JSON
// answer into out (when out is non-nil).
func (c *Client) do(ctx context.Context, r *request, out any) error {
	var body []byte
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return fmt.Errorf("%s: encode request: %w", r.op, err)
		}
		body = b
	}
	write := r.method != http.MethodGet && r.method != http.MethodHead
	n := len(c.endpoints)
	start := time.Now()
	last := make([]string, n)    // each endpoint's last failure, short
	var lastErr error            // the last failure in full
	transport := make([]bool, n) // each endpoint's last failure was a transport one
	tries := 0
	for round := 0; ; round++ {
		first := c.current()
		for k := range n {
			idx := (first + k) % n
			ep := c.endpoints[idx]
			tries++
			sendCtx := ctx
			if write {
				var err error
				if sendCtx, err = guardWrite(ctx); err != nil {
					return err
				}
			}
			err, class, detail := c.once(sendCtx, ep, r, body, out)
			switch class {
			case failNone, failAnswered:
				if idx != first {
					c.cur.Store(int32(idx))
				}
				return err
			case failFinal:
				return err
			case failNoAnswer, failAnswer5xx:
				c.moveOn(idx)
				if write {
					return outcomeUnknown(ep, err, class, detail)
				}
			case failNotSent:
				c.moveOn(idx)
			}
			last[idx], lastErr, transport[idx] = detail, err, class != failAnswer5xx
			if ctx.Err() != nil {
				return Interrupted(r.op, "while waiting for the management API at "+ep+" to answer", ctx.Err())
			}
		}
		if round+1 >= c.retry.Attempts {
			break
		}
		pause := c.retry.pause(round)
		pause += time.Duration(rand.Int64N(int64(pause)/5 + 1))
		if time.Since(start)+pause > c.retry.Budget {
			break
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return Interrupted(r.op, "while waiting to ask the management API at "+c.endpoints[c.current()]+" again", ctx.Err())
		case <-t.C:
		}
	}
	return c.exhausted(lastErr, last, transport, tries, time.Since(start))
}

// exhausted is the error after the last round: with one endpoint its last
// failure and how often it was tried; with several, one line naming each
// endpoint and its last failure.
func (c *Client) exhausted(lastErr error, last []string, transport []bool, tries int, took time.Duration) error {
	took = took.Round(10 * time.Millisecond)
	if len(c.endpoints) == 1 {
		if tries == 1 {
			return lastErr
		}
		return &triedError{msg: fmt.Sprintf("%s (tried %d times in %s)", lastErr, tries, took), err: lastErr}
	}
	parts := make([]string, len(c.endpoints))
	sentinel := ErrRejected
	for i, ep := range c.endpoints {
		parts[i] = ep + ": " + last[i]
		if transport[i] {
			sentinel = ErrUnreachable
		}
	}
	return &triedError{
		msg: fmt.Sprintf("no management API endpoint answered (%d tries in %s): %s: check --server and that the nodes run",
			tries, took, strings.Join(parts, "; ")),
		err: lastErr, kind: sentinel,
	}
}

// triedError is the last failure of a request that was tried several times.
type triedError struct {
	msg  string
	err  error // the last failure
	kind error // the sentinel when err is not the only cause
}

func (e *triedError) Error() string { return e.msg }

func (e *triedError) Unwrap() []error {
	if e.kind != nil {
		return []error{e.kind}
	}
	return []error{e.err}
}

// outcomeUnknown is the error of a write that was sent and got no answer,
// or a 5xx. Like the transport errors it does not repeat the request (the
// caller names what it was doing).
func outcomeUnknown(ep string, err error, class failure, detail string) error {
	what := fmt.Sprintf("no answer from the management API at %s (%s)", ep, detail)
	if class == failAnswer5xx {
		what = fmt.Sprintf("the management API at %s %s", ep, detail)
	}
	return &unknownError{
		msg: what + ": the broker may or may not have done it",
		err: err,
	}
}

// unknownError wraps ErrOutcomeUnknown and the failure (which wraps
// ErrUnreachable or ErrRejected).
type unknownError struct {
	msg string
	err error
}

func (e *unknownError) Error() string { return e.msg }

func (e *unknownError) Unwrap() []error { return []error{ErrOutcomeUnknown, e.err} }
