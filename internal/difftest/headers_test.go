package difftest

import (
	"slices"
	"testing"
	"time"
)

// TestHeadersValuesAgainstBroker proves on the broker how the headers
// exchange compares a criterion with a header's value, where the random
// topologies do not reach: integers beyond float64's 53 bits compare
// exactly (2^53+1 is not 2^53) in every version, and up to 3.12 an
// integer equals a float only when the float holds exactly that integer;
// a timestamp header is an integer, in milliseconds from 3.13 and in
// seconds before; a binary header equals a string of the same bytes,
// except inside an array.
func TestHeadersValuesAgainstBroker(t *testing.T) {
	t.Parallel()
	c := newCase().exchange("h", "headers").
		queue("odd").queue("even").queue("arr").queue("millis").queue("seconds").queue("text").queue("text-arr").
		bindArgs("h", "millis", "", "x-match", "any", "at", int64(1700000000000)).
		bindArgs("h", "seconds", "", "x-match", "any", "at", int64(1700000000)).
		bindArgs("h", "text", "", "x-match", "any", "s", "true").
		bindArgs("h", "text-arr", "", "x-match", "any", "sa", []any{"true"}).
		bindArgs("h", "odd", "", "x-match", "any", "id", int64(1<<53+1)).
		bindArgs("h", "even", "", "x-match", "any", "id2", int64(1<<53)).
		bindArgs("h", "arr", "", "x-match", "any", "ids", []any{int64(1<<53 + 1)}).
		publish("h", "", "id", int64(1<<53)).
		publish("h", "", "id", float64(1<<53)).
		publish("h", "", "id2", int64(1<<53+1)).
		publish("h", "", "id", int64(1<<53+1)).
		publish("h", "", "id2", float64(1<<53)).
		publish("h", "", "ids", []any{int64(1 << 53)}).
		publish("h", "", "ids", []any{int64(1<<53 + 1)}).
		publish("h", "", "at", time.Unix(1700000000, 0)).
		publish("h", "", "s", []byte("true")).
		publish("h", "", "sa", []any{[]byte("true")}).c
	want := map[string][]string{
		"3.10": {"m4 odd", "m5 even", "m7 arr", "m8 seconds", "m9 text"},
		"4.0":  {"m4 odd", "m7 arr", "m8 millis", "m9 text"},
		"4.3":  {"m4 odd", "m7 arr", "m8 millis", "m9 text"},
	}
	b, client, ver := connect(t)
	copies, ok := want[ver.Line()]
	if !ok {
		t.Fatalf("the test states no answer for RabbitMQ %s", ver.Line())
	}
	conn := applied(t, b, client, c)
	res := run(t, conn, c, Options{Rounds: 1, Version: ver})
	if got := res.Found["publish"]; !slices.Equal(got, copies) {
		t.Errorf("RabbitMQ %s routed\n  %q\nwant\n  %q", ver, got, copies)
	}
}
