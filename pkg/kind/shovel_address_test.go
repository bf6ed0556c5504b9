package kind

import (
	"strings"
	"testing"
)

// TestAMQP10Addresses: the addresses of an amqp10 shovel's ends that
// RabbitMQ refuses when the shovel connects are refused offline, each
// with a fix that works; the ones it takes pass. Each case measured on
// 4.3.6 and 4.0.5 by creating the shovel (source or destination on this
// broker's AMQP 1.0 listener, vhost with queue q1, "a b", "c/d" and
// direct exchange x1) through the management API and reading its state
// after a few seconds: "running", or terminated (4.3.6) / starting again
// (4.0.5) with the error given. Address v1 forms (/queue/q1, a bare name)
// are not checked: 4.0.5 runs them, 4.3.6 refuses them while it denies the
// deprecated feature amqp_address_v1 (its default), and another AMQP 1.0
// broker may read them as its own.
func TestAMQP10Addresses(t *testing.T) {
	for _, c := range []struct {
		key, addr string
		problem   string // "" when RabbitMQ takes it
		hint      string
	}{
		{"src-address", "/queues/q1", "", ""},
		{"src-address", "/queues/a%20b", "", ""},
		{"src-address", "/queues/c%2Fd", "", ""},
		{"src-address", "/queues/a+b", "", ""},                                                             // queue "a+b": + is no space (not-found on both: no such queue)
		{"src-address", "/queue/q1", "", ""},                                                               // v1: 4.0.5 runs it, 4.3.6 amqp_address_v1_not_permitted
		{"src-address", "q1", "", ""},                                                                      // v1 likewise
		{"src-address", "/queues/", "names no queue", "/queues/NAME"},                                      // 4.3.6: no queue ''
		{"src-address", "/queues/a%2", `"%2", which starts no two-digit hex escape`, `"/queues/a%252"`},    // bad_address
		{"src-address", "/queues/a%zz", `"%zz", which starts no two-digit hex escape`, `"/queues/a%25zz"`}, // bad_address
		{"src-address", "/queues/c/d", `"/", which must be percent-encoded`, `"/queues/c%2Fd"`},            // bad_address
		{"src-address", "/queues/a b", `" ", which must be percent-encoded`, `"/queues/a%20b"`},            // bad_address
		{"src-address", "/queues/café", `"é", which must be percent-encoded: RabbitMQ refuses the address (bad_address) and the shovel never starts; RabbitMQ 4.3.6's management API then answers 500`, `"/queues/caf%C3%A9"`}, // bad_address; GET /api/shovels 500 while it exists
		{"src-address", "/exchanges/x1", "is an exchange", "src-address: /queues/NAME"}, // 4.3.6 v1 not permitted, 4.0.5 unknown_destination
		{"dest-address", "/queues/q1", "", ""},
		{"dest-address", "/exchanges/x1", "", ""},
		{"dest-address", "/exchanges/x1/k", "", ""},
		{"dest-address", "/exchanges/x1/", "", ""},                                                                // the empty routing key
		{"dest-address", "/exchange/x1/k", "", ""},                                                                // v1
		{"dest-address", "/queues/", "names no queue", "/queues/NAME"},                                            // bad_address_string
		{"dest-address", "/queues/a%2", `"%2", which starts no two-digit hex escape`, `"/queues/a%252"`},          // bad_address_string
		{"dest-address", "/exchanges/", "names the default exchange", "/queues/NAME"},                             // bad_address_string
		{"dest-address", "/exchanges//k", "names the default exchange", "/queues/NAME"},                           // bad_address_string
		{"dest-address", "/exchanges/amq.default", "names the default exchange", "/queues/NAME"},                  // bad_address_string
		{"dest-address", "/exchanges/x1/k/z", "more than an exchange and a routing key", `"/exchanges/x1/k%2Fz"`}, // bad_address_string
		{"dest-address", "/exchanges/x1/a%zz", `routing key "%zz", which starts no two-digit hex escape`, `"/exchanges/x1/a%25zz"`},
		{"dest-address", "/exchanges/x 1", `exchange name " ", which must be percent-encoded`, `"/exchanges/x%201"`},
	} {
		s := map[string]any{"src-protocol": "amqp10", "dest-protocol": "amqp10", "src-uri": "amqp://h", "dest-uri": "amqp://h",
			"src-address": "/queues/q1", "dest-address": "/queues/q1"}
		s[c.key] = c.addr
		var got []Problem
		for _, p := range validateShovel(s) {
			if p.Field == c.key {
				got = append(got, p)
			}
		}
		switch {
		case c.problem == "" && len(got) > 0:
			t.Errorf("%s %q: RabbitMQ takes it, got %+v", c.key, c.addr, got)
		case c.problem == "":
		case len(got) != 1:
			t.Errorf("%s %q: want one problem saying %q, got %+v", c.key, c.addr, c.problem, got)
		case !strings.Contains(got[0].Msg, c.problem) || !strings.Contains(got[0].Hint, c.hint):
			t.Errorf("%s %q: got %q (%s); want it to say %q, the fix %q", c.key, c.addr, got[0].Msg, got[0].Hint, c.problem, c.hint)
		}
	}
}

// TestAMQP10AddressFixesDecode: the address each fix writes is one
// RabbitMQ takes, naming what the writer meant.
func TestAMQP10AddressFixesDecode(t *testing.T) {
	for _, name := range []string{"c/d", "a b", "café", "a%zz", "q1", "x:y@z"} {
		enc := encodeSegment(name)
		got, bad := decodeSegment(enc)
		if bad != "" || got != name {
			t.Errorf("encodeSegment(%q) = %q, which decodes to %q (%s)", name, enc, got, bad)
		}
	}
}

// TestAMQP10URIs: an amqp10 shovel end whose URI holds a character
// outside ASCII (raw, or a percent-encoded byte above %7F in its user
// name or password) is refused offline, without quoting the password: the
// broker writes the shovel, and its AMQP 1.0 client then never connects
// (raw: invalid_uri; percent-encoded: the login sent as Latin-1). The
// amqp091 protocol takes both forms (measured running on 4.3.6, 4.0.5 and
// 3.10.8), and so does a federation upstream's uri: neither is refused.
func TestAMQP10URIs(t *testing.T) {
	for _, c := range []struct {
		protocol, uri string
		problem       string // "" when it connects
	}{
		{"amqp10", "amqp://u:pa@h:5672?hostname=vhost:v", ""},
		{"amqp10", "amqp://u:p%41%2F@h", ""}, // ASCII escapes decode to what they say
		{"amqp10", "amqp://u:pä@h", "its user name or password holds a character outside ASCII"},
		{"amqp10", "amqp://ü:pa@h", "its user name or password holds a character outside ASCII"},
		{"amqp10", "amqp://u:p%C3%A4@h", "percent-encoded character outside ASCII"},
		{"amqp10", "amqp://u:pa@hö", "it holds a character outside ASCII"},
		{"amqp091", "amqp://u:pä@h/v", ""},
		{"amqp091", "amqp://u:p%C3%A4@h/v", ""},
	} {
		for _, end := range []string{"src", "dest"} {
			s := map[string]any{"src-protocol": c.protocol, "dest-protocol": c.protocol, "src-uri": "amqp://h", "dest-uri": "amqp://h",
				"src-address": "/queues/q1", "dest-address": "/queues/q1", "src-queue": "q1", "dest-queue": "q1"}
			if c.protocol == "amqp091" {
				delete(s, "src-address")
				delete(s, "dest-address")
			}
			s[end+"-uri"] = []any{"amqp://h", c.uri}
			var got []Problem
			for _, p := range validateShovel(s) {
				if p.Field == end+"-uri" {
					got = append(got, p)
				}
			}
			switch {
			case c.problem == "" && len(got) > 0:
				t.Errorf("%s %s %s: refused: %+v", c.protocol, end, c.uri, got)
			case c.problem != "" && (len(got) != 1 || !strings.Contains(got[0].Msg, c.problem) || got[0].Item != 2 ||
				strings.Contains(got[0].Msg, "pä") || strings.Contains(got[0].Msg, "%C3") || !strings.Contains(got[0].Hint, "amqp091")):
				t.Errorf("%s %s %s: want one problem with %q in item 2, the password not shown, got %+v", c.protocol, end, c.uri, c.problem, got)
			}
		}
	}
	if ps := validateUpstream(map[string]any{"uri": "amqp://u:pä@h/v"}); len(ps) > 0 {
		t.Errorf("federation upstream: %+v", ps)
	}
}

// TestShovelQueue: an end's queue, an amqp10 address decoded as RabbitMQ
// decodes it (the flows' source queue took "/queues/a%20b" as "a%20b").
func TestShovelQueue(t *testing.T) {
	for _, tc := range []struct {
		s         map[string]any
		end, want string
	}{
		{map[string]any{"src-queue": "q1"}, "src", "q1"},
		{map[string]any{"src-protocol": "amqp10", "src-address": "/queues/a%20b"}, "src", "a b"},
		{map[string]any{"dest-protocol": "amqp10", "dest-address": "/exchanges/x1/k"}, "dest", ""},
		{map[string]any{"dest-queue": "q2"}, "dest", "q2"},
	} {
		if got := ShovelQueue(tc.s, tc.end); got != tc.want {
			t.Errorf("ShovelQueue(%v, %s) = %q, want %q", tc.s, tc.end, got, tc.want)
		}
	}
}
