package kind

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestURIVhost: a URI's host and vhost as RabbitMQ's amqp_uri reads them:
// the default vhost only without a path, the path's rest (unescaped)
// otherwise, so amqp:/// is vhost "" (refused by every broker, see
// rmqversion's TestRefusedSettingsAgainstBroker).
func TestURIVhost(t *testing.T) {
	for _, c := range []struct {
		uri, vhost, host string
		ok               bool
	}{
		{"amqp://", "/", "", true},
		{"amqp:///", "", "", true},
		{"amqp:///orders", "orders", "", true},
		{"amqp:///%2F", "/", "", true},
		{"amqp:///team%20a?heartbeat=5", "team a", "", true},
		{"amqp://h", "/", "h", true},
		{"amqp://u:pw@h:5672/v", "v", "h:5672", true},
		{"amqp://u:p@ss@h/", "", "h", true},
		{"amqps://h/v", "v", "h", true},
		{"amqp:///a/b", "", "", false},
		{"http://h/v", "", "", false},
	} {
		vhost, host, ok := URIVhost(c.uri)
		if vhost != c.vhost || host != c.host || ok != c.ok {
			t.Errorf("URIVhost(%q) = %q, %q, %v; want %q, %q, %v", c.uri, vhost, host, ok, c.vhost, c.host, c.ok)
		}
	}
}

// TestURIProblem: what RabbitMQ's amqp_uri refuses in a shovel's or a
// federation upstream's URI, found offline; and nothing it takes. Each
// answer measured on 3.10.8, 4.0.5 and 4.3.6 (PUT of a shovel's src-uri
// and of an upstream's uri: the same on all three), the refusals as
// HTTP 400 "not a valid URI: {…}", the broker's term given here.
func TestURIProblem(t *testing.T) {
	for _, c := range []struct {
		uri, problem string // problem: "" when the broker takes the URI
	}{
		{"amqp://", ""},
		{"amqp:///v", ""},
		{"amqp://h", ""},
		{"amqp://fed:pw@localhost:65535/v", ""},
		{"amqp://fed:pw@localhost:+5672/v", ""}, // list_to_integer takes a sign
		{"AMQP://fed:pw@localhost/v", ""},       // the scheme in any case
		{"amqps://u:p@h:5671/v?heartbeat=5&cacertfile=/c.pem", ""},
		{"amqp://u:p%40ss@h/a%2Fb", ""},
		{"amqp://fed:pw@[::1]:5672/v", ""},
		{"amqp://fed:pw@[::1]/v", ""},
		{"amqp://h?heartbeat=5", ""},
		{"amqp://h#f", ""},
		{"amqp://fed:pw@[::1/v", ""},                                                 // no closing bracket: the host is "::1"
		{"amqp://fed:pw@[::1]x:5672/v", ""},                                          // the port after the first colon past the bracket
		{"amqp://fed:pw@localhost:99999/v", "its port 99999 is out of range"},        // port_out_of_range
		{"amqp://fed:pw@localhost:0/v", "its port 0 is out of range"},                // port_out_of_range
		{"amqp://fed:pw@localhost:-1/v", "its port -1 is out of range"},              // port_out_of_range
		{"amqp://h:99999999999999999999/v", "is out of range"},                       // port_out_of_range
		{"amqp://fed:pw@localhost:abc/v", `its port "abc" is not a number`},          // badarg
		{"amqp://fed:s3cr3t/v", `its port is not a number`},                          // the password without its @host: not quoted
		{"amqp://fed:pw@localhost:/v", `its port "" is not a number`},                // badarg
		{"amqp://fed:pw@::1/v", `its port ":1" is not a number`},                     // badarg
		{"amqp://fed:pw@:5672/v", "it has a port but no host"},                       // port_requires_host
		{"http://fed:pw@localhost/v", `its scheme "http" is neither amqp nor amqps`}, // unexpected_uri_scheme
		{"localhost", "it has no scheme"},                                            // no_scheme
		{"amqp:/localhost/v", "amqp: is not followed by //"},                         // invalid_vhost
		{"amqp:", "amqp: is not followed by //"},                                     // case_clause: no user info
		{"amqp://fed:pw@localhost/a/b", "holds more than one segment"},               // invalid_vhost
		// A raw / in a password ends the authority early: its pieces are
		// never quoted as a port or a path.
		{"amqp://bob:hunter2/Tr0ub4dor@host1/v", "an @ comes after its first /, ? or #"}, // badarg: port "hunter2"
		{"amqp://bob:8080/Tr0ub4dor@host1/v", "an @ comes after its first /, ? or #"},    // invalid_vhost
		{"amqp://host/v@x", ""},                                             // an @ in the vhost's one segment is the vhost's
		{"amqp:localhost", "amqp: is not followed by //"},                   // case_clause
		{"amqp://fed:pw@[::1]x/v", "followed by something else than :port"}, // invalid_port
		{"amqp://fed:pw@[::1]:/v", `its port "" is not a number`},           // badarg
		{"amqp://fed:p%zz@localhost/v", "its password holds a %"},           // invalid_entitiy
		{"amqp://fed:p%@localhost/v", "its password holds a %"},             // unterminated_entity
		{"amqp://f%g@localhost/v", "its user name holds a %"},
		{"amqp://fed:pw@local%host/v", "its host holds a %"},
		{"amqp://fed:pw@localhost/%zz", `its vhost "%zz" holds a %`}, // invalid_entitiy
		// The query, measured on 4.3.6 (HTTP 400 for each refusal).
		{"amqp://fed:pw@h/v?heartbeat=abc", `its query parameter heartbeat="abc" is not an integer`}, // invalid_amqp_params_parameter, not_an_integer
		{"amqp://h/v?channel_max=x", `channel_max="x" is not an integer`},
		{"amqp://h/v?frame_max=x", `frame_max="x" is not an integer`},
		{"amqp://h/v?connection_timeout=x", `connection_timeout="x" is not an integer`},
		{"amqp://h/v?heartbeat=", `heartbeat="" is not an integer`},
		{"amqp://h/v?heartbeat=%35", `heartbeat="%35" is not an integer`}, // not unescaped
		{"amqp://h/v?heartbeat=+-1", "is not an integer"},
		{"amqp://h/v?heartbeat=1=2", `heartbeat="1=2" is not an integer`},
		{"amqp://h?heartbeat=x", "is not an integer"},
		{"amqp://[::1]/v?heartbeat=x", "is not an integer"},
		{"amqps://h/v?heartbeat=x", "is not an integer"},
		{"amqp://h/v?a&heartbeat=x", "is not an integer"},
		{"amqp://h/v?heartbeat&heartbeat=x", "is not an integer"},   // a piece without = is left out
		{"amqp://h/v?heartbeat=x&heartbeat=1", "is not an integer"}, // the first is read
		{"amqp://h/v?heartbeat=x#a?b", "is not an integer"},
		// auth_mechanism, every one given: 4.3.6 refuses a word that is
		// no atom it knows (unknown_mechanism); 4.0.5 and 3.10.8 take
		// it, and the link never logs in (no such function).
		{"amqp://u:p@h/v?auth_mechanism=plain", ""},
		{"amqps://h/v?auth_mechanism=external&cacertfile=/c.pem", ""},
		{"amqp://h/v?auth_mechanism=plain&auth_mechanism=amqplain", ""},
		{"amqp://h/v?auth_mechanism=my_plugin:auth", ""}, // a plugin's own: mqctl cannot tell (4.3.6 refuses it where no such module is loaded)
		{"amqp://u:p@h/v?auth_mechanism=bogus", `its query parameter auth_mechanism="bogus" is no authentication mechanism`},
		{"amqp://h/v?auth_mechanism=plain&auth_mechanism=PLAIN", `auth_mechanism="PLAIN" is no authentication mechanism`},
		{"amqp://h/v?auth_mechanism=a:b:c", `auth_mechanism="a:b:c" is no authentication mechanism`}, // not_mechanism
		// verify, with amqps: an atom of the TLS options (4.3.6: 400
		// for verify=bogus; 4.0.5 and 3.10.8 take it, and TLS fails).
		{"amqps://h/v?verify=verify_peer&cacertfile=/c.pem", ""},
		{"amqps://h/v?verify=verify_none", ""},
		{"amqps://h/v?verify=bogus", `its query parameter verify="bogus" is neither verify_peer nor verify_none`},
		{"amqp://h/v?username=x", "its query sets username"}, // parameter_unconfigurable_in_query
		{"amqp://h/v?port=1", "its query sets port"},
		{"amqp://h/v?host=x", "its query sets host"},
		{"amqp://h/v?virtual_host=x", "its query sets virtual_host"},
		{"amqp://h/v?ssl_options=x", "its query sets ssl_options"},
		{"amqp://h/v?socket_options=x", "its query sets socket_options"},
		{"amqp://h/v?client_properties=x", "its query sets client_properties"},
		{"amqp://h/v?auth_mechanisms=x", "its query sets auth_mechanisms"},
		{"amqp:///v?username=x", "its query sets username"},
		{"amqp:///v?virtual_host=x", "its query sets virtual_host"},
		{"amqp:///v?node=x", "its query sets node"},
		{"amqp:///v?adapter_info=x", "its query sets adapter_info"},
		{"amqp:///v?client_properties=x", "its query sets client_properties"},
		{"amqps://h/v?fail_if_no_peer_cert=x", "fail_if_no_peer_cert=\"x\" is neither true nor false"}, // invalid_ssl_parameter
		{"amqps://h/v?depth=two", "depth=\"two\" is not an integer"},                                   // list_to_integer in build_ssl_broker
		{"amqps://h/v?depth=2", ""},
		{"amqps:///v", "amqps without a host"}, // badrecord
		{"amqps://", "amqps without a host"},
		{"amqps://u:pw@/v", "amqps without a host"},
		{"amqp://h/v?heartbeat=0", ""},
		{"amqp://h/v?frame_max=-1", ""},
		{"amqp://h/v?heartbeat=+5", ""},
		{"amqp://h/v?heartbeat=99999999999999999999", ""},
		{"amqp://h/v?heartbeat", ""},
		{"amqp://h/v?heartbeat=5&heartbeat", ""},
		{"amqp://h/v?heartbeat=1&heartbeat=x", ""},
		{"amqp://h/v?Heartbeat=x", ""},            // names are matched as written
		{"amqp://h/v?heart%62eat=x", ""},          // and not unescaped
		{"amqp://h/v?depth=x", ""},                // not a field of the connection
		{"amqp://h/v?password=x", ""},             // a TLS key's password
		{"amqp://h/v#?heartbeat=x", ""},           // a fragment, not a query
		{"amqp://h/v?fail_if_no_peer_cert=x", ""}, // amqp: no TLS options read
		{"amqps://h/v?fail_if_no_peer_cert=true", ""},
		{"amqp:///v?heartbeat=abc", ""}, // a direct connection has no heartbeat
		{"amqp:///v?channel_max=abc", ""},
		{"amqp:///v?auth_mechanism=bogus", ""},
		{"amqp:///v?username", ""},
		{"amqp://h/v?ssl_options", ""},
	} {
		msg, hint := URIProblem(c.uri)
		if c.problem == "" && msg != "" || !strings.Contains(msg, c.problem) {
			t.Errorf("URIProblem(%q) = %q, want %q", c.uri, msg, c.problem)
		}
		if (msg == "") != (hint == "") {
			t.Errorf("URIProblem(%q): problem %q with hint %q", c.uri, msg, hint)
		}
		if strings.Contains(msg, "pw") || strings.Contains(msg, "p%") {
			t.Errorf("URIProblem(%q) shows the password: %q", c.uri, msg)
		}
	}
}

// The URI problems of a shovel's ends and of an upstream's uri name the
// setting (and the entry of a list), show the URI without its password,
// and say how to fix it.
func TestURIProblemsOfItems(t *testing.T) {
	shovel := map[string]any{"src-uri": "amqp://fed:secret@localhost:99999/v", "src-queue": "q",
		"dest-uri": []any{"amqp://", "amqp://fed:secret@h:0/v"}, "dest-queue": "q"}
	upstream := map[string]any{"uri": "http://fed:secret@h/v"}
	for _, c := range []struct {
		name string
		got  []Problem
		want []Problem
	}{
		{"shovel", validateShovel(shovel), []Problem{
			{Field: "src-uri", Msg: "amqp://fed:***@localhost:99999/v is not a valid URI: its port 99999 is out of range; RabbitMQ refuses it",
				Hint: "give a port from 1 to 65535, or none for the default (5672 for amqp, 5671 for amqps)"},
			{Field: "dest-uri", Item: 2, Msg: "amqp://fed:***@h:0/v is not a valid URI: its port 0 is out of range; RabbitMQ refuses it",
				Hint: "give a port from 1 to 65535, or none for the default (5672 for amqp, 5671 for amqps)"}}},
		{"upstream", validateUpstream(upstream), []Problem{
			{Field: "uri", Msg: `http://fed:***@h/v is not a valid URI: its scheme "http" is neither amqp nor amqps; RabbitMQ refuses it`, Hint: uriHint}}},
	} {
		if d := cmp.Diff(c.want, c.got); d != "" {
			t.Errorf("%s: problems (-want +got):\n%s", c.name, d)
		}
	}
}
