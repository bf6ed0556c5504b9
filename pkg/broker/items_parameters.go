package broker

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Shovels and federation objects are runtime parameters of their plugins:
// PUT and DELETE /api/parameters/{component}/{vhost}/{name} ({"value": …}),
// GET /api/parameters/{component}/{vhost} → [{"name", "value", "component",
// "vhost"}]. Measured on 3.10.8 and 4.0.5: both store the value exactly as
// it was written and give it back so (keys, a URI with its credentials, a
// string or a list of URIs as written, numbers as written: 1.5 stays 1.5),
// add no default (no ack-mode, no prefetch-count), and answer a write
// with 201 (new) or 204 (changed); so a read gives back what the file
// declared and a second plan is empty. Both answer an invalid URI with an
// error that quotes it whole, credentials included (`"amqp://u:pw@h:x" not
// a valid URI`): every write's error goes through scrub.

// parameter is the driver of a kind that is a runtime parameter (its
// kind.Spec.APIPath is parameters/{component}): the shovel and federation
// kinds. list names the setting that holds the value of a component whose
// value is a list (kind.ListSpec.Key: an upstream set), "" when the value
// is a mapping of the settings.
type parameter struct {
	spec      kind.Spec
	component string
	list      string
}

func parameterDriver(k kind.Kind) itemDriver {
	s, _ := kind.Of(k)
	c, _ := s.Parameter()
	p := parameter{spec: s, component: c}
	if s.Item.List != nil {
		p.list = s.Item.List.Key
	}
	return itemDriver{read: p.read, write: p.write, del: p.delete}
}

func (p parameter) read(ctx context.Context, c *Client, vhost string) ([]*topology.Item, error) {
	var list []struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	label := p.spec.Plural
	if err := c.GetJSON(ctx, &list, fmt.Sprintf("read the %s of vhost %q", label, vhost), vhost, "parameters", p.component, vhost); err != nil {
		return nil, err
	}
	var out []*topology.Item
	for _, e := range list {
		var settings topology.Args
		switch v := e.Value.(type) {
		case map[string]any:
			if p.list != "" {
				return nil, fmt.Errorf("read the %s of vhost %q: %s %q is a mapping, not a list: mqctl does not know this form", label, vhost, p.spec.Label, e.Name)
			}
			settings = topology.Args(v).Normalized()
			if settings == nil {
				settings = topology.Args{}
			}
		case []any:
			if p.list == "" {
				return nil, fmt.Errorf("read the %s of vhost %q: %s %q is a list, not a mapping: mqctl does not know this form", label, vhost, p.spec.Label, e.Name)
			}
			settings = topology.Args{p.list: topology.Normalize(v)}
		default:
			return nil, fmt.Errorf("read the %s of vhost %q: %s %q has a value mqctl does not know (%T)", label, vhost, p.spec.Label, e.Name, e.Value)
		}
		out = append(out, &topology.Item{Kind: p.spec.Kind, Name: e.Name, Settings: settings})
	}
	return out, nil
}

func (p parameter) write(ctx context.Context, c *Client, vhost string, _, want *topology.Item) error {
	var value any = map[string]any(want.Settings)
	if want.Settings == nil {
		value = map[string]any{}
	}
	if p.list != "" {
		l := want.Settings[p.list]
		if l == nil {
			l = []any{}
		}
		value = l
	}
	body := map[string]any{"value": value}
	err := c.PutJSON(ctx, body, fmt.Sprintf("set %s %q in vhost %q", p.spec.Label, want.Name, vhost), vhost, "parameters", p.component, vhost, want.Name)
	return scrub(err, want, p.spec.Secret)
}

func (p parameter) delete(ctx context.Context, c *Client, vhost string, have *topology.Item) error {
	err := c.DeleteJSON(ctx, fmt.Sprintf("delete %s %q in vhost %q", p.spec.Label, have.Name, vhost), vhost, "parameters", p.component, vhost, have.Name)
	if errors.Is(err, ErrNotFound) && !errors.Is(err, ErrVhostNotFound) {
		return nil // gone already: what the delete wanted
	}
	return scrub(err, have, p.spec.Secret)
}

// scrubbed is an error whose message had its secrets masked; it wraps the
// sentinel errors of the original (errors.Is still tells a refusal from a
// lost answer), not the original, whose message holds the secrets. from
// is where the broker's words start in msg (what scrub masks).
type scrubbed struct {
	msg  string
	from int
	kind []error
}

func (e *scrubbed) Error() string   { return e.msg }
func (e *scrubbed) Unwrap() []error { return e.kind }

var sentinels = []error{ErrUnauthorized, ErrForbidden, ErrUnreachable, ErrTLS,
	ErrVhostNotFound, ErrNotFound, ErrRejected, ErrOutcomeUnknown}

// bareSecretMinBytes is the length from which a secret is masked where
// the broker's words hold it unquoted too: a shorter one is too likely
// another word of the message (a name, a query parameter's value), and
// masking that word would show the reader what the secret is.
const bareSecretMinBytes = 8

// scrub masks every secret of it in err's message: the broker quotes a
// URI it refuses whole, credentials included. Only the broker's words are
// masked (the answer's reason, at the end of an APIError's message):
// mqctl's own, which name the objects, hold no secret, and a name masked
// because it is also the password (a user "svc" with the password "svc")
// would tell the reader the password. Within them a secret is masked as
// the broker quotes it: a URI whole, a password or hash between quotes,
// and unquoted only when it is long enough not to be another word.
func scrub(err error, it *topology.Item, keys []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	from := 0
	var sc *scrubbed
	var api *APIError
	switch {
	case errors.As(err, &sc):
		from = sc.from
	case errors.As(err, &api) && api.Reason != "" && strings.HasSuffix(msg, api.Reason):
		from = len(msg) - len(api.Reason)
	}
	own, words := msg[:from], msg[from:]
	var secrets []string
	// quoted are masked wherever the broker quotes them (a hash it
	// refuses, [not_base64, HASH]); passwords only where the broker's
	// words make them one (the query it parsed: {"password","KEY"}):
	// elsewhere the same quoted word is another thing (a name, a
	// mechanism) that the URI shows anyway. Both are masked unquoted when
	// long enough not to be another word.
	var quoted, passwords []string
	for _, key := range append(slices.Clone(keys), it.Secret...) {
		var values []string
		collectStrings(it.Settings[key], &values)
		for _, v := range values {
			switch {
			case key == kind.UserPasswordHash:
				quoted = append(quoted, v)
			case fmt.Sprint(topology.MaskSecret(v)) == topology.Mask: // a password
				passwords = append(passwords, v)
			default: // a URI
				secrets = append(secrets, v)
				passwords = append(passwords, kind.QueryPasswords(v)...)
				if pw := uriPassword(v); pw != "" {
					passwords = append(passwords, pw)
				}
			}
		}
	}
	// The longest first, so that a URI is masked whole before its password.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if m := fmt.Sprint(topology.MaskSecret(s)); m != s {
			words = strings.ReplaceAll(words, s, m)
		}
	}
	words = MaskURL(words)
	longestFirst := func(a, b string) int { return len(b) - len(a) }
	slices.SortFunc(quoted, longestFirst)
	slices.SortFunc(passwords, longestFirst)
	maskBare := func(text string) string {
		for _, s := range quoted {
			text = strings.ReplaceAll(text, `"`+s+`"`, `"`+topology.Mask+`"`)
		}
		for _, s := range passwords {
			text = queryPassword(s).ReplaceAllString(text, "${1}"+topology.Mask+`"`)
		}
		for _, s := range append(quoted, passwords...) {
			if len(s) >= bareSecretMinBytes {
				text = strings.ReplaceAll(text, s, topology.Mask)
			}
		}
		return text
	}
	// Outside the URIs, masked already: within one, a password may also
	// be a query parameter's name.
	var sb strings.Builder
	last := 0
	for _, span := range urlRE.FindAllStringIndex(words, -1) {
		sb.WriteString(maskBare(words[last:span[0]]))
		uri := words[span[0]:span[1]]
		for _, s := range passwords { // a URI MaskURL read otherwise than the broker wrote it
			if s != "" {
				uri = strings.ReplaceAll(uri, ":"+s+"@", ":"+topology.Mask+"@")
			}
		}
		sb.WriteString(uri)
		last = span[1]
	}
	sb.WriteString(maskBare(words[last:]))
	words = sb.String()
	out := &scrubbed{msg: own + words, from: len(own)}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			out.kind = append(out.kind, s)
		}
	}
	return out
}

// queryPassword matches password s as the broker quotes a password it
// parsed: the query's pair {"password","s"}, or the parameter it refuses
// (password, "s"); ${1} is what comes before s's quotes.
func queryPassword(s string) *regexp.Regexp {
	return regexp.MustCompile(`((?:"password"|password)\s*,\s*")` + regexp.QuoteMeta(s) + `"`)
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	}
}

// uriPassword is the password of a URI with credentials, "" when it has
// none.
func uriPassword(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	i := strings.LastIndex(rest, "@")
	if i < 0 {
		return ""
	}
	auth := rest[:i]
	if j := strings.Index(auth, "/"); j >= 0 {
		return ""
	}
	_, pw, _ := strings.Cut(auth, ":")
	return pw
}
