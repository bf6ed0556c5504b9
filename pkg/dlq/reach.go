package dlq

import (
	"context"
	"fmt"

	"github.com/mqctl/mqctl/pkg/broker"
)

// BrokerReach is ReplayOptions.Reach from where the broker behind c says
// each queue of vhost lives (broker.Placement): a queue cannot take a
// publish while its home node is down or it has no majority
// (OutOfReach), or once it is gone (deleted since the bindings were
// read). A placement the broker does not answer is left to the publish.
func BrokerReach(ctx context.Context, c *broker.Client, vhost string) func(string) (*Unavailable, error) {
	return func(queue string) (*Unavailable, error) {
		p, found, err := c.FindQueuePlacement(ctx, vhost, queue)
		switch {
		case err != nil:
			return nil, nil
		case !found:
			return &Unavailable{Queue: queue, Why: "no longer exists (deleted since the replay read the bindings)",
				Fix: fmt.Sprintf("declare %q again, with its bindings", queue), Missed: true}, nil
		}
		why, fix := OutOfReach(p)
		if why == "" {
			return nil, nil
		}
		return &Unavailable{Queue: queue, Why: why, Fix: fix, Unconfirmed: !p.Down, Missed: p.Down && !c.RabbitMQVersion().AtLeast(4, 0)}, nil
	}
}

// OutOfReach says why queue p cannot take a publish now, after its name
// ("lives on node …, which is down"), and what brings it back; "" when it
// can. Seen on a cluster with a node stopped: a classic queue whose home
// node it is nacks a publish on 4.3.6 (the other queues of its route keep
// their copy) and routes nothing on 3.10.8 (the publish reaches the
// others alone, confirmed, or comes back unroutable); a quorum queue
// without a majority leaves it unconfirmed.
func OutOfReach(p broker.Placement) (why, fix string) {
	switch {
	case p.Down:
		return fmt.Sprintf("lives on node %s, which is down", p.HomeNode()), fmt.Sprintf("start %s again (or wait for it)", p.HomeNode())
	case p.NoMajority():
		return fmt.Sprintf("is a %s queue with %s, no majority", p.Replicated(), p.MembersOnline()),
			"bring the members' nodes back until a majority of them is online"
	}
	return "", ""
}
