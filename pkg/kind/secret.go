package kind

import (
	"net/url"
	"strings"
)

// Mask is what stands for a secret in any output: a password, a password
// hash, the credentials of a URI.
const Mask = "***"

// MaskURI hides the password of URI s, the one masking of a URI every
// output goes through: amqp://user:secret@host/v becomes
// amqp://user:***@host/v, with or without a host (amqp://user:secret@/v),
// the user and the rest kept as written (percent-encoded or not). A URI
// without a password (amqp:///v, amqp://user@/v) holds no credential and
// is kept whole. When s does not parse, or its user would hold a / ? or #,
// whatever sits between :// and the last @ is masked: a raw @ or / in a
// password is never cut short. The query's password (an amqps URI's TLS
// key password, ?password=…) is masked too. What is no URI (no
// scheme://) is Mask.
func MaskURI(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/@: \t") {
		return Mask
	}
	at := credentialsEnd(s, rest)
	if at < 0 {
		return scheme + "://" + maskPortPassword(rest)
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	switch {
	case !hasPass: // a user name alone, or an @ in the path: no password
		return scheme + "://" + rest[:at] + maskQueryPasswords(rest[at:])
	case strings.ContainsAny(user, "/?#"):
		return scheme + "://" + Mask + maskQueryPasswords(rest[at:])
	}
	return scheme + "://" + user + ":" + Mask + maskQueryPasswords(rest[at:])
}

// maskPortPassword is rest, a URI without credentials after its
// scheme://, with its query's passwords masked, and its port too when it
// is no number: amqp://user:password written without its @host reads as
// host user and port password.
func maskPortPassword(rest string) string {
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if host, port, ok := strings.Cut(authority, ":"); ok && !strings.HasPrefix(host, "[") && strings.Trim(port, "0123456789") != "" {
		return host + ":" + Mask + maskQueryPasswords(rest[len(authority):])
	}
	return maskQueryPasswords(rest)
}

// queryPassword is the query parameter of an AMQP URI that holds a secret:
// amqp_uri reads an amqps URI's ?password= as the TLS key's password.
const queryPassword = "password"

// maskQueryPasswords masks the values of the password parameters of the
// query in rest, a URI after its credentials (from the first ? to the
// fragment).
func maskQueryPasswords(rest string) string {
	beforeQuery, query, fragment := splitQuery(rest)
	if query == "" {
		return rest
	}
	pieces := strings.Split(query, "&")
	for i, piece := range pieces {
		if name, _, ok := strings.Cut(piece, "="); ok && name == queryPassword {
			pieces[i] = name + "=" + Mask
		}
	}
	return beforeQuery + strings.Join(pieces, "&") + fragment
}

// splitQuery splits a URI (or its end) into what comes before its query
// (the ? included), the query, and its fragment (the # included).
func splitQuery(s string) (before, query, fragment string) {
	if f := strings.IndexByte(s, '#'); f >= 0 {
		s, fragment = s[:f], s[f:]
	}
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s, "", fragment
	}
	return s[:q+1], s[q+1:], fragment
}

// QueryPasswords are the values of the password parameters of URI s's
// query (MaskURI masks them): what an error quoting the query as the
// broker parsed it must not show.
func QueryPasswords(s string) []string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil
	}
	_, query, _ := splitQuery(rest)
	var out []string
	for _, piece := range strings.Split(query, "&") {
		if name, value, ok := strings.Cut(piece, "="); ok && name == queryPassword && value != "" {
			out = append(out, value)
		}
	}
	return out
}

// credentialsEnd is the index in rest (s after its scheme://) of the @
// that ends s's credentials, -1 when there is none: the @ ending the
// authority when s parses with a user, as url.Parse reads it (the path or
// query may hold an @), else the last @ of rest.
func credentialsEnd(s, rest string) int {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		authority := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			authority = rest[:i]
		}
		return strings.LastIndex(authority, "@")
	}
	return strings.LastIndex(rest, "@")
}
