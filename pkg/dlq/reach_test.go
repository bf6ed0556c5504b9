package dlq

import "testing"

// A publish left unconfirmed past the confirm timeout says which queue
// of its route lost its majority since the replay checked it (Reach is
// asked again, past what it said before): the error said only that the
// message may or may not have been delivered.
func TestDownNow(t *testing.T) {
	asked := 0
	r := &replayer{opts: ReplayOptions{Reach: func(q string) (*Unavailable, error) {
		asked++
		if q != "orders" {
			return nil, nil
		}
		return &Unavailable{Queue: q, Why: "is a quorum queue with 1 of its 3 members online (down: n2, n3), no majority", Fix: "bring the members' nodes back until a majority of them is online", Unconfirmed: true}, nil
	}}, reached: map[string]*Unavailable{"orders": nil}}
	for _, tc := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{Routed: true, Queues: []string{"audit", "orders"}}, ` (since the replay began, queue "orders" is a quorum queue with 1 of its 3 members online (down: n2, n3), no majority: bring the members' nodes back until a majority of them is online, and run the replay again)`},
		{Outcome{Routed: true, Queues: []string{"audit"}}, ""},
		{Outcome{}, ""}, // the route is not known
	} {
		if got := r.downNow(tc.o); got != tc.want {
			t.Errorf("downNow(%v) = %q\nwant %q", tc.o.Queues, got, tc.want)
		}
	}
	if asked != 3 {
		t.Errorf("Reach asked %d times, want 3: once per queue of each known route, whatever it said before", asked)
	}
}
