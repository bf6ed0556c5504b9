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
// password is never cut short. What is no URI (no scheme://) is Mask.
func MaskURI(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/@: \t") {
		return Mask
	}
	at := credentialsEnd(s, rest)
	if at < 0 {
		return s
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	switch {
	case !hasPass:
		return s // a user name alone, or an @ in the path: no password
	case strings.ContainsAny(user, "/?#"):
		return scheme + "://" + Mask + rest[at:]
	}
	return scheme + "://" + user + ":" + Mask + rest[at:]
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
