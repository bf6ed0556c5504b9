package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/mqctl/mqctl/internal/shell"
	"github.com/mqctl/mqctl/pkg/kind"
)

// Sentinel errors. Every error this package returns wraps at most one of
// them (ErrVhostNotFound errors also wrap ErrNotFound; ErrOutcomeUnknown
// errors also wrap ErrUnreachable or ErrRejected), so callers branch with
// errors.Is.
var (
	// ErrUnauthorized: the broker rejected the username or password.
	ErrUnauthorized = errors.New("authentication failed")
	// ErrForbidden: the user logged in but may not do this (missing
	// user tag or vhost permission).
	ErrForbidden = errors.New("permission denied")
	// ErrUnreachable: no HTTP answer from the management API (refused,
	// DNS failure, timeout).
	ErrUnreachable = errors.New("management API unreachable")
	// ErrTLS: the TLS handshake failed or the TLS settings are unusable.
	ErrTLS = errors.New("TLS failure")
	// ErrVhostNotFound: the vhost does not exist (or the user has no
	// permissions on it, which the API reports the same way).
	ErrVhostNotFound = errors.New("vhost not found")
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrRejected: the broker refused a request (400, 405, 406, 409,
	// 5xx); the broker's reason is in the message.
	ErrRejected = errors.New("rejected by the broker")
	// ErrOutcomeUnknown: a write (PUT, POST, DELETE) was sent but no
	// answer came (connection reset, timeout) or the answer was a 5xx: the
	// broker may or may not have carried it out. It is never retried
	// blindly: read the object back to tell, then retry if it was not done.
	ErrOutcomeUnknown = errors.New("outcome unknown")
)

// APIError is an HTTP error answer from the management API.
type APIError struct {
	Op     string // what was attempted, e.g. `declare queue "q1" in vhost "/"`
	Status int    // HTTP status
	Reason string // the broker's reason text (HTML entities decoded)
	Server string // management API URL, credentials masked
	kind   []error
	msg    string
}

func (e *APIError) Error() string { return e.msg }

// Unwrap returns the sentinel errors the answer maps to.
func (e *APIError) Unwrap() []error { return e.kind }

// urlRE matches a URL in text: a scheme, ://, and what follows up to a
// space (a quote may be part of a password; what follows the URL's
// credentials is kept as it is).
var urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://\S*`)

// MaskURL hides the password of every URL in s (kind.MaskURI):
// `amqp://u:secret@h/` becomes `amqp://u:***@h/`. Use it on anything that
// may print a URL.
func MaskURL(s string) string {
	var sb strings.Builder
	last := 0
	for _, span := range urlRE.FindAllStringIndex(s, -1) {
		start, end := span[0], span[1]
		// A URL between quotes ("amqps://h?password=k"}) ends at the
		// closing one when only punctuation follows it: the query's
		// password is masked, the quote kept. Anything else after a quote
		// may be the rest of a password that holds one.
		if start > 0 && s[start-1] == '"' {
			if i := strings.IndexByte(s[start:end], '"'); i >= 0 && strings.Trim(s[start+i:end], `"}]),.;`) == "" {
				end = start + i
			}
		}
		sb.WriteString(s[last:start])
		sb.WriteString(kind.MaskURI(s[start:end]))
		last = end
	}
	sb.WriteString(s[last:])
	return sb.String()
}

// errorBody is the management API's error document.
type errorBody struct {
	Error string `json:"error"`
	// Reason is the answer's reason as text (reasonOf).
	Reason string `json:"-"`
	// RawReason is the reason as sent: a string, or an Erlang term the
	// API encodes as JSON.
	RawReason json.RawMessage `json:"reason"`
	// explained says which permission or tag a refused request lacks
	// (explainRefusal); "" when unknown.
	explained string
}

// apiError classifies an HTTP error answer to r. vhostMissing reports
// whether r's vhost is known not to exist (checked by the caller on 404s).
func (c *Client) apiError(r *request, status int, body errorBody, vhostMissing bool) error {
	op, vhost, server := r.op, r.vhost, c.at(r)
	reason := strings.TrimSpace(html.UnescapeString(body.Reason))
	if reason == "" {
		reason = strings.TrimSpace(html.UnescapeString(body.Error))
	}
	if reason == "" {
		reason = http.StatusText(status)
	}
	reason = oneLine(reason)
	e := &APIError{Op: op, Status: status, Reason: reason, Server: server}
	switch {
	case status == http.StatusNotFound && body.explained != "":
		// A vhost the user may not see (client.go): unknown, not missing.
		e.kind = []error{ErrForbidden}
		e.msg = fmt.Sprintf("%s: %s", op, body.explained)
	case status == http.StatusUnauthorized && body.explained != "":
		e.kind = []error{ErrForbidden}
		e.msg = fmt.Sprintf("%s: %s", op, body.explained)
	case status == http.StatusUnauthorized && (body.Error == "not_authorised" || isAuthorisationReason(reason)):
		e.kind = []error{ErrForbidden}
		e.msg = fmt.Sprintf("%s: user %q may not do this at %s: %s%s", op, c.user, server, reason, forbiddenHint(reason, c.user))
	case status == http.StatusUnauthorized:
		e.kind = []error{ErrUnauthorized}
		detail := ""
		// A refused login says nothing more than that: 3.10 answers
		// "Login failed", 4.x "Not_Authorized".
		if reason != "Login failed" && reason != "Not_Authorized" && reason != http.StatusText(status) {
			detail = " (" + reason + ")"
		}
		e.msg = fmt.Sprintf("authentication failed for user %q at %s%s: check --username/--password", c.user, server, detail)
	case status == http.StatusForbidden:
		e.kind = []error{ErrForbidden}
		e.msg = fmt.Sprintf("%s: user %q may not do this at %s: %s", op, c.user, server, reason)
	case reason == "vhost_not_found" || vhostMissing:
		e.kind = []error{ErrVhostNotFound, ErrNotFound}
		e.msg = fmt.Sprintf("vhost %q does not exist on %s", vhost, server)
	case status == http.StatusNotFound:
		e.kind = []error{ErrNotFound}
		e.msg = fmt.Sprintf("%s: not found on %s", op, server)
	default:
		e.kind = []error{ErrRejected}
		e.msg = fmt.Sprintf("%s: the broker at %s refused (%d): %s", op, server, status, reason)
	}
	return e
}

// oneLine joins the lines of a multi-line reason with ": " (the broker's
// policy validation answers "Validation failed\n\n<<\"abc\">> is not a
// valid maximum length"), so that every error stays on one line.
func oneLine(reason string) string {
	if !strings.ContainsAny(reason, "\r\n") {
		return reason
	}
	var sb strings.Builder
	for _, l := range strings.FieldsFunc(reason, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		switch s := sb.String(); {
		case s == "":
		case strings.HasSuffix(s, ","):
			// An Erlang term printed over several lines:
			// "[{<<\"max-priority\">>,10},\n {<<\"x-queue-type\">>,…}]".
			sb.WriteString(" ")
		default:
			sb.WriteString(": ")
		}
		sb.WriteString(l)
	}
	return sb.String()
}

// isAuthorisationReason tells "logged in, but not allowed" answers (which
// the management API sends as 401 too, with error "not_authorised") from a
// failed login (error "not_authorized", reason "Login failed").
func isAuthorisationReason(reason string) bool {
	r := strings.ToLower(reason)
	return strings.HasPrefix(r, "not ") && strings.HasSuffix(r, " user") ||
		strings.Contains(r, "not authorised to access")
}

func forbiddenHint(reason, user string) string {
	switch strings.ToLower(reason) {
	case "not management user":
		return fmt.Sprintf(" (an administrator gives the user the management tag, adding any tags it has: rabbitmqctl set_user_tags %s management)", shell.Quote(user))
	case "not administrator user":
		return " (this needs the administrator tag)"
	case "not policymaker user", "user not authorised to access object":
		return " (this needs the policymaker or administrator tag, and permissions on the vhost)"
	}
	return ""
}

// speaksAMQP reports whether err is the answer of an AMQP listener to an
// HTTP request (its protocol header, "AMQP" and the version), over plain
// HTTP or TLS: --server was given the broker's AMQP port.
func speaksAMQP(err error) bool {
	var recErr tls.RecordHeaderError
	if errors.As(err, &recErr) && string(recErr.RecordHeader[:4]) == "AMQP" {
		return true
	}
	return strings.Contains(err.Error(), `malformed HTTP response "AMQP`)
}

// transportError classifies an error from the HTTP round trip (no answer).
func (c *Client) transportError(ctx context.Context, r *request, err error) error {
	op, server := r.op, c.at(r)
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, context.DeadlineExceeded) {
		return Interrupted(op, "while waiting for the management API at "+server+" to answer", ctxErr)
	}
	inner := err
	var uerr *url.Error
	if errors.As(err, &uerr) {
		inner = uerr.Err // url.Error repeats the request URL; keep only the cause
	}
	detail := MaskURL(inner.Error())

	var (
		verr    *tls.CertificateVerificationError
		uaerr   x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
	)
	switch {
	case speaksAMQP(err):
		return fmt.Errorf("%s answers in AMQP, not HTTP: that is the broker's AMQP port; give --server the management API's (15672 by default, 15671 with TLS): %w", server, ErrUnreachable)
	case errors.As(err, &recErr), strings.Contains(detail, "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("TLS handshake with %s failed: the server does not speak TLS there (use http:// for a plain listener): %w", server, ErrTLS)
	case errors.As(err, &verr), errors.As(err, &uaerr), errors.As(err, &hostErr), errors.As(err, &invErr):
		return fmt.Errorf("TLS handshake with %s failed: %s: pass the CA that signed the server's certificate with --ca-cert (or --insecure-skip-verify for a test broker): %w", server, detail, ErrTLS)
	case errors.As(err, &alert), strings.Contains(detail, "tls:"):
		return fmt.Errorf("TLS handshake with %s failed: %s: check --client-cert/--client-key and --ca-cert: %w", server, detail, ErrTLS)
	}

	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("cannot reach the management API at %s: no answer within %s: %w", server, c.timeout, ErrUnreachable)
	}
	return fmt.Errorf("cannot reach the management API at %s: %s: check --server and that the management plugin is enabled: %w", server, detail, ErrUnreachable)
}

// reasonOf is a reason the management API sent (raw) as text: a string as
// it is; an Erlang term, which the API encodes as JSON with its strings as
// lists of character codes (a permission's regular expression the broker
// cannot compile: ["invalid_regexp",[40],[[109,105,…],1]]), with its
// strings spelled out.
func reasonOf(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	if l, ok := v.([]any); ok && len(l) == 3 && l[0] == "invalid_regexp" {
		re, okRE := charList(l[1])
		if why, ok := l[2].([]any); ok && okRE && len(why) == 2 {
			if msg, ok := charList(why[0]); ok {
				return fmt.Sprintf("invalid regular expression %q: %s (at offset %s)", re, msg, termText(why[1]))
			}
		}
	}
	return termText(v)
}

// termText renders an Erlang term decoded from JSON, a list of character
// codes as the string it is.
func termText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		if s, ok := charList(x); ok {
			return strconv.Quote(s)
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = termText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// charList reports whether v is a non-empty list of printable character
// codes, and the string it spells.
func charList(v any) (string, bool) {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return "", false
	}
	var sb strings.Builder
	for _, e := range l {
		n, ok := e.(float64)
		if !ok || n != float64(int(n)) || (!unicode.IsPrint(rune(int(n))) && n != '\t') {
			return "", false
		}
		sb.WriteRune(rune(int(n)))
	}
	return sb.String(), true
}

// Interrupted is the error of what (a request, a dial) that ctx ended
// before the broker answered: for a cancelled context (Ctrl-C, SIGTERM)
// "what: interrupted during", which wraps ctxErr without printing Go's
// "context canceled"; for another end (a deadline) "what: ctxErr", as
// before.
func Interrupted(what, during string, ctxErr error) error {
	if !errors.Is(ctxErr, context.Canceled) {
		return fmt.Errorf("%s: %w", what, ctxErr)
	}
	return &interruptedError{msg: what + ": interrupted " + during, err: ctxErr}
}

type interruptedError struct {
	msg string
	err error
}

func (e *interruptedError) Error() string { return e.msg }

func (e *interruptedError) Unwrap() error { return e.err }
