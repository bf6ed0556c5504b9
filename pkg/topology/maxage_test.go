package topology

import "testing"

// MaxAgeMillis reads a max-age as rabbit_amqqueue:check_max_age/1 does
// (v3.10.8, v4.0.5, v4.3.5): digits above 0, then exactly one unit; a
// month is 30 days, a year 365. What it refuses RabbitMQ refuses too
// (measured on 4.3.6: "0D" is invalid_max_age).
func TestMaxAgeMillis(t *testing.T) {
	for _, tc := range []struct {
		in   any
		ms   int64
		want bool
	}{
		{"7D", 604_800_000, true},
		{"168h", 604_800_000, true},
		{"10080m", 604_800_000, true},
		{"604800s", 604_800_000, true},
		{"07D", 604_800_000, true},
		{"1M", 2_592_000_000, true},
		{"1Y", 31_536_000_000, true},
		{"0D", 0, false},
		{"7d", 0, false},
		{" 7D", 0, false},
		{"7 D", 0, false},
		{"+7D", 0, false},
		{"7DD", 0, false},
		{"7", 0, false},
		{"D", 0, false},
		{"", 0, false},
		{int64(7), 0, false},
		{nil, 0, false},
		{"99999999999Y", 0, false}, // beyond an int64 of milliseconds
	} {
		ms, ok := MaxAgeMillis(tc.in)
		if ms != tc.ms || ok != tc.want {
			t.Errorf("MaxAgeMillis(%#v) = %d, %v; want %d, %v", tc.in, ms, ok, tc.ms, tc.want)
		}
	}
}

// A queue's x-max-age compares by its length, as RabbitMQ 4.3.6 compares
// it on a declare (a re-spelled age is 204, another age 400 "received
// '691200000' but current is '604800000'"); a value that is no age, and
// every other argument, compare as written.
func TestQueueArgFormsEqual(t *testing.T) {
	for _, tc := range []struct {
		key  string
		x, y any
		want bool
	}{
		{MaxAgeArgument, "7D", "7D", true},
		{MaxAgeArgument, "7D", "168h", true},
		{MaxAgeArgument, "168h", "604800s", true},
		{MaxAgeArgument, "07D", "7D", true},
		{MaxAgeArgument, "1M", "30D", true},
		{MaxAgeArgument, "1Y", "365D", true},
		{MaxAgeArgument, "7D", "8D", false},
		{MaxAgeArgument, "1Y", "12M", false}, // 360 days
		{MaxAgeArgument, "7D", "7d", false},
		{MaxAgeArgument, "7D", " 7D", false},
		{MaxAgeArgument, "7D", int64(604_800_000), false},
		{MaxAgeArgument, "bogus", "bogus", true},
		{"x-other", "7D", "168h", false},
		{"x-message-ttl", 1000, int64(1000), true},
	} {
		if got := QueueArgForms.Equal(tc.key, tc.x, tc.y); got != tc.want {
			t.Errorf("%s: Equal(%#v, %#v) = %v, want %v", tc.key, tc.x, tc.y, got, tc.want)
		}
		if got := QueueArgForms.Equal(tc.key, tc.y, tc.x); got != tc.want {
			t.Errorf("%s: Equal(%#v, %#v) = %v, want %v", tc.key, tc.y, tc.x, got, tc.want)
		}
	}
}

// Of gives each age its form, the largest whole unit, and leaves the
// table it was given as it was: the file's spelling is what is declared.
func TestArgFormsOf(t *testing.T) {
	for _, tc := range []struct{ in, want any }{
		{"168h", "7D"}, {"604800s", "7D"}, {"24h", "1D"}, {"30D", "1M"}, {"365D", "1Y"}, {"90m", "90m"}, {"bogus", "bogus"},
	} {
		a := Args{MaxAgeArgument: tc.in, "x-other": "168h"}
		got := QueueArgForms.Of(a)
		if got[MaxAgeArgument] != tc.want || got["x-other"] != "168h" || a[MaxAgeArgument] != tc.in {
			t.Errorf("Of(%v) = %v (the table given is now %v), want x-max-age %v", tc.in, got, a, tc.want)
		}
	}
}
