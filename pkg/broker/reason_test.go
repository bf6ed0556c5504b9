package broker

import (
	"encoding/json"
	"testing"
)

// TestReasonOf: a reason sent as a string is that string; one sent as an
// Erlang term has its strings (lists of character codes) spelled out, and
// a regular expression the broker cannot compile reads as such.
func TestReasonOf(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`"vhost_not_found"`, "vhost_not_found"},
		{``, ""},
		{`null`, ""},
		// RabbitMQ 4.3.6, PUT /api/permissions/V/U {"configure":"(",…}.
		{`["invalid_regexp",[40],[[109,105,115,115,105,110,103,32,99,108,111,115,105,110,103,32,112,97,114,101,110,116,104,101,115,105,115],1]]`,
			`invalid regular expression "(": missing closing parenthesis (at offset 1)`},
		{`["no_such_exchange","gone"]`, `[no_such_exchange, gone]`},
		{`["bad",[104,105],[1,2],[]]`, `[bad, "hi", [1, 2], []]`},
		{`{"a":1}`, `{"a":1}`},
	} {
		if got := reasonOf(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("reasonOf(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
}
