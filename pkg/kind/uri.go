package kind

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// uriHint is how an AMQP URI is written.
const uriHint = "write amqp://user:password@host:port/vhost (amqps:// for TLS; no port: 5672, or 5671 for amqps; %2F for vhost \"/\")"

// uriProblems are the problems of the URIs of setting key of s (one, or a
// list: each entry's problem names its place), as RabbitMQ's amqp_uri
// finds them (URIProblem), each URI shown without its password. (A list
// with an entry that is not a string is reported by its type, and these
// not at all.)
func uriProblems(s map[string]any, key string) []Problem {
	var out []Problem
	_, isList := s[key].([]any)
	for i, uri := range URIs(s[key]) {
		msg, hint := URIProblem(uri)
		if msg == "" {
			continue
		}
		p := Problem{Field: key, Msg: fmt.Sprintf("%s is not a valid URI: %s; RabbitMQ refuses it", MaskURI(uri), msg), Hint: hint}
		if isList {
			p.Item = i + 1
		}
		out = append(out, p)
	}
	return out
}

// URIProblem says what RabbitMQ's URI parser refuses in uri, and how to
// fix it ("" when it takes it): amqp_uri:parse/1 and uri_parser:parse/2
// of deps/amqp_client at v3.10.8, v4.0.5 and v4.3.5, which every shovel
// end (whatever its protocol) and every federation upstream's uri go
// through when they are written; each refusal measured on 3.10.8, 4.0.5
// and 4.3.6 (HTTP 400 "not a valid URI"). The messages never quote the
// user name or password.
func URIProblem(uri string) (msg, hint string) {
	scheme, rest, ok := strings.Cut(uri, ":")
	if !ok {
		return "it has no scheme", uriHint
	}
	if s := strings.ToLower(scheme); s != "amqp" && s != "amqps" {
		return fmt.Sprintf("its scheme %q is neither amqp nor amqps", scheme), uriHint
	}
	// Without an authority, amqp_uri finds no user info and fails
	// (case_clause), whatever the rest.
	after, ok := strings.CutPrefix(rest, "//")
	if !ok {
		return fmt.Sprintf("%s: is not followed by //", scheme), uriHint
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	msg, hint = authorityProblem(after[:end])
	if msg == "" {
		msg, hint = pathProblem(after[end:])
	}
	if msg == "" {
		msg, hint = queryProblem(after[end:], strings.ToLower(scheme) == "amqps", hasHost(after[:end]))
	}
	if msg != "" && !strings.Contains(after[:end], "@") && strings.Contains(after[end:], "@") {
		// The authority ends at the first / ? or #, so a user name or
		// password holding one is cut there: its pieces read as a host,
		// a port or a path, and must not be quoted.
		return "an @ comes after its first /, ? or #, so the broker reads the credentials before it as host, port and path",
			"write a / ? # in a user name or password as %2F, %3F, %23 (and @ as %40)"
	}
	return msg, hint
}

// authorityProblem checks a URI's user name, password, host and port.
func authorityProblem(authority string) (msg, hint string) {
	userinfo, hostport, hasUser := strings.Cut(authority, "@")
	if !hasUser {
		userinfo, hostport = "", authority
	}
	user, password, _ := strings.Cut(userinfo, ":")
	password, _, _ = strings.Cut(password, ":")
	if !escapesOK(user) {
		return "its user name holds a % that does not start an escape of two hex digits", "write %25 for a % in it"
	}
	if !escapesOK(password) {
		return "its password holds a % that does not start an escape of two hex digits", "write %25 for a % in it"
	}
	host, port, msg := splitHostPort(hostport)
	if msg != "" {
		return msg, "write an IPv6 address in brackets, with the port after them: amqp://user:password@[::1]:5672/vhost"
	}
	if !escapesOK(host) {
		return "its host holds a % that does not start an escape of two hex digits", "write %25 for a % in it"
	}
	if port == nil {
		return "", ""
	}
	if msg, hint := portProblem(*port, hasUser); msg != "" {
		return msg, hint
	}
	if host == "" {
		return "it has a port but no host", "give the host before the port (amqp://user:password@host:5672/vhost), or leave both out for this broker (amqp:///vhost)"
	}
	return "", ""
}

// splitHostPort splits a URI's host and port as uri_parser does: an IPv6
// address in brackets ([::1]:5672; one without its closing bracket is
// the host up to the path), or the host up to the first colon. port is
// nil when there is none; msg says what is wrong after an address in
// brackets.
func splitHostPort(hostport string) (host string, port *string, msg string) {
	if inner, ok := strings.CutPrefix(hostport, "["); ok {
		host, after, closed := strings.Cut(inner, "]")
		if !closed || after == "" {
			return host, nil, ""
		}
		if _, p, ok := strings.Cut(after, ":"); ok {
			return host, &p, ""
		}
		return host, nil, "an IPv6 address in brackets is followed by something else than :port"
	}
	host, p, ok := strings.Cut(hostport, ":")
	if !ok {
		return host, nil, ""
	}
	return host, &p, ""
}

// portProblem checks a URI's port: an integer (list_to_integer/1, which
// takes a sign) from 1 to 65535. hasUser says the URI has credentials
// before an @: without them, a port that is no number is not quoted, as
// in amqp://user:password, written without its @host, it is the password.
func portProblem(port string, hasUser bool) (msg, hint string) {
	const fix = "give a port from 1 to 65535, or none for the default (5672 for amqp, 5671 for amqps)"
	if !erlangInteger(port) {
		if !hasUser {
			return "its port is not a number", fix + "; an IPv6 address goes in brackets ([::1]:5672); a password goes before an @ and the host (amqp://user:password@host)"
		}
		return fmt.Sprintf("its port %q is not a number", port), fix + "; an IPv6 address goes in brackets ([::1]:5672)"
	}
	if n, err := strconv.ParseInt(port, 10, 64); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("its port %s is out of range", port), fix
	}
	return "", ""
}

// pathProblem checks a URI's path, the vhost: one segment after the
// slash ("/" is %2F), its escapes valid.
func pathProblem(rest string) (msg, hint string) {
	path, _, _ := strings.Cut(rest, "#")
	path, _, _ = strings.Cut(path, "?")
	if path == "" {
		return "", ""
	}
	vhost := path[1:] // after the authority, a path starts with its slash
	if strings.Contains(vhost, "/") {
		return fmt.Sprintf("its path %q holds more than one segment, and the vhost is one", path), "write a / in the vhost's name as %2F: amqp://host/a%2Fb for vhost \"a/b\""
	}
	if !escapesOK(vhost) {
		return fmt.Sprintf("its vhost %q holds a %% that does not start an escape of two hex digits", vhost), "write %25 for a % in it"
	}
	return "", ""
}

// erlangInteger reports whether list_to_integer/1 reads s: one optional
// sign, then decimal digits.
func erlangInteger(s string) bool {
	digits := strings.TrimLeft(s, "+-")
	return len(s)-len(digits) <= 1 && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// hasHost reports whether a URI's authority names a host: without one,
// amqp_uri reads the URI as a direct connection to this broker.
func hasHost(authority string) bool {
	hostport := authority
	if _, after, ok := strings.Cut(authority, "@"); ok {
		hostport = after
	}
	host, _, _ := splitHostPort(hostport)
	return host != ""
}

// The query parameters amqp_uri:broker_add_query/3 refuses, by the
// connection's record: those that name one of its fields but
// channel_max, frame_max, heartbeat and connection_timeout (integers)
// and password (a TLS key's, taken or ignored by version). Other names
// are ignored.
var (
	networkUnsettable = map[string]bool{"username": true, "virtual_host": true, "host": true, "port": true,
		"ssl_options": true, "auth_mechanisms": true, "client_properties": true, "socket_options": true}
	directUnsettable = map[string]bool{"username": true, "virtual_host": true, "node": true,
		"adapter_info": true, "client_properties": true}
	integerParams = map[string]bool{"channel_max": true, "frame_max": true, "heartbeat": true, "connection_timeout": true}
)

// queryProblem checks a URI's query (rest is the URI after its
// authority) as amqp_uri reads it, measured on 4.3.6 and the same in
// the amqp_uri of 3.10 to 4.3: pieces split at & and at their first =,
// a piece without = left out, the first piece of a name the one read,
// nothing unescaped. Without a host (a direct connection) amqps is
// refused (badrecord) and only the direct record's fields are read.
func queryProblem(rest string, tls, host bool) (msg, hint string) {
	const settable = "a URI's query sets only heartbeat, channel_max, frame_max, connection_timeout, auth_mechanism and, for amqps, TLS options; give the user name, password, host, port and vhost in the URI itself"
	if tls && !host {
		return "it is amqps without a host, and a URI without a host is a direct connection to this broker, which takes no TLS",
			"write amqp:///vhost for this broker, or give the host to connect to over TLS"
	}
	rest, _, _ = strings.Cut(rest, "#")
	_, query, _ := strings.Cut(rest, "?")
	seen := map[string]bool{}
	for _, piece := range strings.Split(query, "&") {
		name, value, ok := strings.Cut(piece, "=")
		if ok && name == "auth_mechanism" && host {
			// Every one is read (proplists:get_all_values), not the
			// first alone.
			if msg, hint := mechanismProblem(value); msg != "" {
				return msg, hint
			}
		}
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		switch {
		case host && integerParams[name] && !erlangInteger(value):
			return fmt.Sprintf("its query parameter %s=%q is not an integer", name, value),
				fmt.Sprintf("write %s as a whole number in plain digits (%s=10)", name, name)
		case host && networkUnsettable[name], !host && directUnsettable[name]:
			return fmt.Sprintf("its query sets %s, which RabbitMQ does not take from a query", name), settable
		case tls && name == "depth" && !erlangInteger(value):
			// build_ssl_broker reads it with list_to_integer (4.3.6,
			// 4.0.5 and 3.10.8 answer 400 to depth=two).
			return fmt.Sprintf("its query parameter depth=%q is not an integer", value),
				"write the TLS certificate chain's depth as a whole number (depth=2)"
		case tls && name == "verify" && value != "verify_none" && value != "verify_peer":
			// An atom to the TLS options: RabbitMQ 4.3 refuses one it
			// does not know (list_to_existing_atom, HTTP 400); 4.0.5 and
			// 3.10.8 take any, and the shovel's TLS connection then fails.
			return fmt.Sprintf("its query parameter verify=%q is neither verify_peer nor verify_none", value),
				"write verify=verify_peer to check the server's certificate (with cacertfile), or verify=verify_none not to"
		case tls && name == "fail_if_no_peer_cert" && value != "true" && value != "false":
			return fmt.Sprintf("its query parameter fail_if_no_peer_cert=%q is neither true nor false", value),
				"write fail_if_no_peer_cert=true or fail_if_no_peer_cert=false"
		}
	}
	return "", ""
}

// authMechanisms are the functions of amqp_auth_mechanisms (3.10 to 4.3),
// which an auth_mechanism of one word names.
var authMechanisms = []string{"plain", "amqplain", "external", "crdemo"}

// mechanismProblem checks one auth_mechanism value as amqp_uri reads it:
// one word, a function of amqp_auth_mechanisms, or MODULE:FUNCTION of a
// plugin's own (which mqctl cannot check). RabbitMQ 4.3 refuses a word
// that is no atom it knows (list_to_existing_atom: HTTP 400 at the
// apply, the changes before it made); 4.0.5 and 3.10.8 take any, and
// the shovel or link then never connects (amqp_auth_mechanisms has no
// such function).
func mechanismProblem(value string) (msg, hint string) {
	words := strings.Split(value, ":")
	switch {
	case len(words) == 1 && slices.Contains(authMechanisms, value):
		return "", ""
	case len(words) == 2 && words[0] != "" && words[1] != "":
		return "", ""
	}
	return fmt.Sprintf("its query parameter auth_mechanism=%q is no authentication mechanism", value),
		"write auth_mechanism=plain (a user name and password), amqplain, or external (the client certificate, with amqps), or MODULE:FUNCTION for a plugin's own"
}

// escapesOK reports whether every % of s starts an escape amqp_uri
// unescapes: two more characters that list_to_integer/2 reads in base 16
// to a byte.
func escapesOK(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; i = strings.IndexByte(s, '%') {
		if i+3 > len(s) {
			return false
		}
		if n, err := strconv.ParseInt(s[i+1:i+3], 16, 64); err != nil || n < 0 {
			return false
		}
		s = s[i+3:]
	}
	return true
}

// amqp10URIProblems are the problems of the URIs of setting key of an
// amqp10 shovel end s that RabbitMQ's AMQP 1.0 client cannot connect with,
// although the broker takes them when the shovel is written: a character
// outside ASCII, raw or percent-encoded. amqp10_client:parse_uri (v3.10.8,
// v4.0.5, v4.3.5) parses the URI as a list of bytes, which uri_string
// refuses with one above 127 (invalid_uri: the shovel never starts), and
// decodes a percent-encoded user name or password as UTF-8 into
// characters it then sends one byte each (list_to_binary): "%C3%A4" (ä in
// UTF-8) goes out as the one byte E4 (ä in Latin-1), so the login is
// refused (and a character above U+00FF cannot be sent at all). Measured
// on 4.3.6 and 4.0.5 with a user whose password is "pä": raw and
// "p%C3%A4" never run; the amqp091 protocol takes both forms (running on
// 4.3.6, 4.0.5 and 3.10.8). The UTF-8 of the UTF-8 ("p%C3%83%C2%A4") runs
// on both, through the very decoding a fixed client would not do: mqctl
// does not write it. Each URI is shown without its password.
func amqp10URIProblems(s map[string]any, key string) []Problem {
	var out []Problem
	_, isList := s[key].([]any)
	for i, uri := range URIs(s[key]) {
		userinfo := ""
		if _, rest, ok := strings.Cut(uri, "://"); ok {
			authority := rest
			if end := strings.IndexAny(rest, "/?#"); end >= 0 {
				authority = rest[:end]
			}
			if at := strings.LastIndex(authority, "@"); at >= 0 {
				userinfo = authority[:at]
			}
		}
		var msg string
		switch {
		case nonASCII(userinfo):
			msg = "its user name or password holds a character outside ASCII, which RabbitMQ's AMQP 1.0 client refuses (invalid_uri): the shovel never starts"
		case nonASCII(uri):
			msg = "it holds a character outside ASCII, which RabbitMQ's AMQP 1.0 client refuses (invalid_uri): the shovel never starts"
		case highEscape(userinfo):
			msg = "its user name or password holds a percent-encoded character outside ASCII (an escape above %7F), which RabbitMQ's AMQP 1.0 client sends as other bytes (Latin-1, not UTF-8): the login is refused and the shovel never runs"
		default:
			continue
		}
		p := Problem{Field: key, Msg: fmt.Sprintf("%s: %s", MaskURI(uri), msg),
			Hint: "give the shovel's user a name and password in ASCII, or use protocol amqp091 for this end, which takes them raw or percent-encoded as UTF-8 (%C3%A4 for ä)"}
		if isList {
			p.Item = i + 1
		}
		out = append(out, p)
	}
	return out
}

// nonASCII reports whether s holds a byte above 127.
func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > 127 {
			return true
		}
	}
	return false
}

// highEscape reports whether s holds a percent-escape of a byte above
// 127 (%80 to %FF).
func highEscape(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && strings.ContainsRune("89abcdefABCDEF", rune(s[i+1])) && isHex(s[i+2]) {
			return true
		}
	}
	return false
}
