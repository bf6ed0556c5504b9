package broker_test

import (
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
)

// CheckAMQP, asked by an apply before it creates a vhost, takes the
// broker's refusal of that vhost to a user it logged in as the proof it
// looks for (the URL reaches a broker that takes the user): another apply
// of the same file created the vhost a moment before and had not yet
// given its user permissions there. It failed that apply ("apply
// refused, nothing was changed: … NOT_ALLOWED - access to vhost …
// refused for user"; TestTwoAppliesCreateOneVhost on 4.0.5, once in
// about 100 runs). A wrong password is still refused.
func TestCheckAMQPOnAVhostCreatedMeanwhile(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t) // the user made below has no permissions there
	user, pass := b.User(t)
	if err := broker.CheckAMQP(t.Context(), broker.AMQPDial{URL: b.AMQPURLFor(user, pass, ""), Vhost: vh, Name: "mqctl test"}); err != nil {
		t.Errorf("CheckAMQP on a vhost the user may not use yet: %v, want nil", err)
	}
	if err := broker.CheckAMQP(t.Context(), broker.AMQPDial{URL: b.AMQPURLFor(user, "wrong", ""), Vhost: vh, Name: "mqctl test"}); err == nil {
		t.Error("CheckAMQP with a wrong password: nil, want the broker's refusal")
	}
}
