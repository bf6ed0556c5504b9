package flow

import (
	"reflect"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// upstream declares a federation upstream in vhost "/" with settings s.
func upstream(name string, s topology.Args) obj {
	return func(v *topology.Vhost) {
		v.Items.Put(&topology.Item{Kind: kind.FederationUpstream, Name: name, Settings: s})
	}
}

// TestLinks: a shovel added, removed, or whose source or destination
// changes, and a federation upstream likewise, change where messages go;
// before, the flows said no message went anywhere else. A shovel removed
// leaves what its source queue receives there (not lost, unless the
// queue drops it: past a length limit or TTL without a dead-letter
// exchange); what mqctl cannot tell of a host is said to be unknown.
// TestShovelLinksAgainstBroker (plan_flows_shovel_link.txtar) checks on
// the brokers that the messages pile up, and go to the new destination.
func TestLinks(t *testing.T) {
	gone := func(upstream string) string {
		return "the queue each exchange's link consumed from on " + upstream + ` ("federation: …") is deleted with the link, with the messages it holds not yet federated (resource-cleanup-mode never would keep it); a link that is not running then (still starting, or reconnecting) leaves it there, still bound to the upstream exchange and filling, until it is deleted by hand`
	}
	local := func(dest string) topology.Args {
		return topology.Args{"src-uri": "amqp:///%2F", "src-queue": "in", "dest-uri": "amqp:///%2F", "dest-queue": dest}
	}
	queues := []obj{queue("q", nil), queue("q2", nil)}
	with := func(objs ...obj) *topology.Topology { return topo(append(objs, queues...)...) }
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []Link
		loses         bool
	}{
		{name: "removed: the messages stay in the source queue",
			before: with(queue("in", nil), shovel("s", local("q"))), after: with(queue("in", nil)),
			want: []Link{{Vhost: "/", Kind: "shovel", Name: "s", Before: `queue "in" to queue "q"`,
				Effect: `messages stop leaving queue "in" for queue "q": they stay in the queue until something else consumes them`}}},
		{name: "removed, the source queue drops the oldest past its limit",
			before: with(queue("in", topology.Args{"x-max-length": 10}), shovel("s", local("q"))), after: with(queue("in", topology.Args{"x-max-length": 10})),
			want: []Link{{Vhost: "/", Kind: "shovel", Name: "s", Before: `queue "in" to queue "q"`, Loses: true,
				Effect: `messages stop leaving queue "in" for queue "q": they stay in the queue until something else consumes them, and once it holds its length limit of 10 messages it drops its oldest messages (overflow drop-head), with no dead-letter exchange: they are lost`}}, loses: true},
		{name: "added",
			before: with(queue("in", nil)), after: with(queue("in", nil), shovel("s", local("q"))),
			want: []Link{{Vhost: "/", Kind: "shovel", Name: "s", After: `queue "in" to queue "q"`,
				Effect: `messages now leave queue "in" for queue "q" (consumers of the queue now share its messages with the shovel)`}}},
		{name: "destination changed",
			before: with(queue("in", nil), shovel("s", local("q"))), after: with(queue("in", nil), shovel("s", local("q2"))),
			want: []Link{{Vhost: "/", Kind: "shovel", Name: "s", Before: `queue "in" to queue "q"`, After: `queue "in" to queue "q2"`,
				Effect: `messages from queue "in" now go to queue "q2" instead of queue "q"`}}},
		{name: "another broker, never its credentials",
			before: with(queue("in", nil), shovel("s", local("q"))),
			after:  with(queue("in", nil), shovel("s", topology.Args{"src-uri": "amqp:///%2F", "src-queue": "in", "dest-uri": "amqp://u:secret@remote:5672/x", "dest-queue": "q"})),
			want: []Link{{Vhost: "/", Kind: "shovel", Name: "s", Before: `queue "in" to queue "q"`, After: `queue "in" to queue "q" of vhost "x" on remote:5672`,
				Effect: `messages from queue "in" now go to queue "q" of vhost "x" on remote:5672 instead of queue "q"`, Unknown: "mqctl cannot tell whether remote:5672 is this broker"}}},
		{name: "from an exchange, removed",
			before: with(exchange("ex", "topic", nil), shovel("s", topology.Args{"src-uri": "amqp:///%2F", "src-exchange": "ex", "src-exchange-key": "#", "dest-uri": "amqp:///%2F", "dest-queue": "q"})), after: with(exchange("ex", "topic", nil)),
			want: []Link{{Vhost: "/", Kind: "shovel", Name: "s", Before: `exchange "ex" with key "#" to queue "q"`,
				Effect: `messages of exchange "ex" with key "#" are no longer moved to queue "q" (the queue the shovel consumed them through goes with it)`}}},
		{name: "removed with its source queue",
			before: with(queue("in", nil), shovel("s", local("q"))), after: with(),
			want: []Link{{Vhost: "/", Kind: "shovel", Name: "s", Before: `queue "in" to queue "q"`,
				Effect: `messages stop leaving queue "in" for queue "q": the queue is deleted too, with what it holds`}}, loses: true}, // the routes say the queue's name now reaches none
		{name: "an upstream no policy uses",
			before: topo(upstream("up", topology.Args{"uri": "amqp://origin"})), after: topo(upstream("up", topology.Args{"uri": "amqp://origin2"}))},
		{name: "unchanged", before: with(queue("in", nil), shovel("s", local("q"))), after: with(queue("in", nil), shovel("s", local("q")))},
		{name: "an upstream's URI changed",
			before: topo(exchange("fed.x", "topic", nil), upstream("up", topology.Args{"uri": "amqp://u:pw@origin:5672/%2F"}), policy("fed", "^fed", "exchanges", topology.Args{"federation-upstream-set": "all"})),
			after:  topo(exchange("fed.x", "topic", nil), upstream("up", topology.Args{"uri": "amqp://u:pw@origin2:5672/%2F"}), policy("fed", "^fed", "exchanges", topology.Args{"federation-upstream-set": "all"})),
			want: []Link{{Vhost: "/", Kind: "federation_upstream", Name: "up", Before: `vhost "/" on origin:5672`, After: `vhost "/" on origin2:5672`,
				Effect:  `the exchanges and queues federated through it (policy "fed") now receive messages from vhost "/" on origin2:5672 instead of vhost "/" on origin:5672; ` + gone("the old upstream"),
				Unknown: "what those queues on the old upstream hold when the link goes is not known offline"}}},
		// The upstream's federation queue of an exchange's link goes with
		// the link (TestFederationLinkGoneAgainstBroker); before, the
		// flows said it stayed there.
		{name: "an upstream removed: its exchanges' links' queues go with it",
			before: topo(exchange("fed.x", "topic", nil), upstream("up", topology.Args{"uri": "amqp://origin/v"}), policy("fed", "^fed", "exchanges", topology.Args{"federation-upstream": "up"})),
			after:  topo(exchange("fed.x", "topic", nil), policy("fed", "^fed", "exchanges", topology.Args{"federation-upstream": "up"})),
			want: []Link{{Vhost: "/", Kind: "federation_upstream", Name: "up", Before: `vhost "v" on origin:5672`,
				Effect:  `the exchanges and queues federated through it (policy "fed") no longer receive messages from vhost "v" on origin:5672; ` + gone("the upstream"),
				Unknown: "what those queues on the upstream hold when the link goes is not known offline"}}},
		{name: "an upstream removed that keeps its queues (resource-cleanup-mode never)",
			before: topo(exchange("fed.x", "topic", nil), upstream("up", topology.Args{"uri": "amqp://origin/v", "resource-cleanup-mode": "never"}), policy("fed", "^fed", "exchanges", topology.Args{"federation-upstream": "up"})),
			after:  topo(exchange("fed.x", "topic", nil), policy("fed", "^fed", "exchanges", topology.Args{"federation-upstream": "up"})),
			want: []Link{{Vhost: "/", Kind: "federation_upstream", Name: "up", Before: `vhost "v" on origin:5672`,
				Effect:  `the exchanges and queues federated through it (policy "fed") no longer receive messages from vhost "v" on origin:5672; the queue each exchange's link consumed from on the upstream stays there (resource-cleanup-mode never), still bound to the upstream exchange: it keeps taking its messages until it is deleted`,
				Unknown: "how much those queues on the upstream hold, and for how long, is not known offline"}}},
		{name: "an upstream of queues removed: the upstream's queues keep their messages",
			before: topo(queue("fed.q", nil), upstream("up", topology.Args{"uri": "amqp://origin/v"}), policy("fed", "^fed", "queues", topology.Args{"federation-upstream": "up"})),
			after:  topo(queue("fed.q", nil), policy("fed", "^fed", "queues", topology.Args{"federation-upstream": "up"})),
			want: []Link{{Vhost: "/", Kind: "federation_upstream", Name: "up", Before: `vhost "v" on origin:5672`,
				Effect: `the exchanges and queues federated through it (policy "fed") no longer receive messages from vhost "v" on origin:5672; each federated queue's namesake on the upstream keeps what it holds`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			if !reflect.DeepEqual(d.Links, tc.want) {
				t.Errorf("links:\ngot  %s\nwant %s", show(t, d.Links), show(t, tc.want))
			}
			if d.LosesMessages() != tc.loses {
				t.Errorf("LosesMessages() = %v, want %v", d.LosesMessages(), tc.loses)
			}
		})
	}
}

// upstreamSet declares a federation upstream set in vhost "/" of members.
func upstreamSet(name string, members ...string) obj {
	return func(v *topology.Vhost) {
		var l []any
		for _, m := range members {
			l = append(l, map[string]any{"upstream": m})
		}
		v.Items.Put(&topology.Item{Kind: kind.FederationUpstreamSet, Name: name, Settings: map[string]any{kind.UpstreamSetList: l}})
	}
}

// TestFederationMembership: what federates from an upstream changes
// while the upstream connects to the same place: a set that no longer
// holds it, a policy that names another upstream, or that no longer
// matches the exchange. Before, the flows compared the upstream's own
// settings alone and said no message went anywhere else.
func TestFederationMembership(t *testing.T) {
	common := []obj{exchange("fed.x", "topic", nil), queue("fq", nil), upstream("dc1", topology.Args{"uri": "amqp://u:pw@dc1/v"}), upstream("dc2", topology.Args{"uri": "amqp://u:pw@dc2/v"})}
	with := func(objs ...obj) *topology.Topology { return topo(append(objs, common...)...) }
	bySet := policy("fed", `^fed\.`, "exchanges", topology.Args{"federation-upstream-set": "dcs"})
	const unknown = "what those queues on the upstream hold when the link goes is not known offline"
	lost := func(up string) Link {
		at := `vhost "v" on ` + up + `:5672`
		return Link{Vhost: "/", Kind: "federation_upstream", Name: up, Before: at + `, to exchange "fed.x"`, After: at + ", federating no exchange or queue",
			Effect: `exchange "fed.x" no longer receives messages from ` + at + ` (policy "fed"); the queue each exchange's link consumed from on the upstream ("federation: …") is deleted with the link, with the messages it holds not yet federated (resource-cleanup-mode never would keep it); a link that is not running then (still starting, or reconnecting) leaves it there, still bound to the upstream exchange and filling, until it is deleted by hand`, Unknown: unknown}
	}
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []Link
	}{
		{name: "the set loses an upstream",
			before: with(upstreamSet("dcs", "dc1", "dc2"), bySet), after: with(upstreamSet("dcs", "dc2"), bySet), want: []Link{lost("dc1")}},
		{name: "the set gains one",
			before: with(upstreamSet("dcs", "dc2"), bySet), after: with(upstreamSet("dcs", "dc1", "dc2"), bySet),
			want: []Link{{Vhost: "/", Kind: "federation_upstream", Name: "dc1", Before: `vhost "v" on dc1:5672, federating no exchange or queue`, After: `vhost "v" on dc1:5672, to exchange "fed.x"`,
				Effect: `exchange "fed.x" now receives messages from vhost "v" on dc1:5672 (policy "fed")`}}},
		{name: "the policy names one upstream instead of the set",
			before: with(upstreamSet("dcs", "dc1", "dc2"), bySet), after: with(upstreamSet("dcs", "dc1", "dc2"), policy("fed", `^fed\.`, "exchanges", topology.Args{"federation-upstream": "dc1"})),
			want: []Link{lost("dc2")}},
		{name: "the policy no longer matches the exchange",
			before: with(policy("fed", `^fed\.`, "exchanges", topology.Args{"federation-upstream-set": "all"})), after: with(policy("fed", `^zzz`, "exchanges", topology.Args{"federation-upstream-set": "all"})),
			want: []Link{lost("dc1"), lost("dc2")}},
		{name: "a queue federated",
			before: with(), after: with(policy("fedq", `^fq$`, "queues", topology.Args{"federation-upstream": "dc2"})),
			want: []Link{{Vhost: "/", Kind: "federation_upstream", Name: "dc2", Before: `vhost "v" on dc2:5672, federating no exchange or queue`, After: `vhost "v" on dc2:5672, to queue "fq"`,
				Effect: `queue "fq" now receives messages from vhost "v" on dc2:5672 (policy "fedq")`}}},
		{name: "the same members", before: with(upstreamSet("dcs", "dc1"), bySet), after: with(upstreamSet("dcs", "dc1"), bySet)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			if !reflect.DeepEqual(d.Links, tc.want) {
				t.Errorf("links:\ngot  %s\nwant %s", show(t, d.Links), show(t, tc.want))
			}
			if d.LosesMessages() {
				t.Errorf("LosesMessages() = true: what the upstream holds stays there")
			}
		})
	}
}

// TestLinksOfAnUnsetURI: offline (diff), a shovel's or upstream's URI
// taken from a variable that is not set stands as the file wrote it
// ("${VAR}", a secret is not needed offline). Before, the flows read it
// as no URI and said the shovel moved messages to `queue "q" of vhost ""
// on ` (no host) and the upstream federated from `vhost "" on this
// broker`: where it connects is not known, and the flow says so.
func TestLinksOfAnUnsetURI(t *testing.T) {
	fed := func(uri string) *topology.Topology {
		return topo(exchange("fed.x", "topic", nil), upstream("up", topology.Args{"uri": uri}), policy("fed", "^fed", "exchanges", topology.Args{"federation-upstream": "up"}))
	}
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []Link
	}{
		{name: "a shovel added whose dest-uri is not set",
			before: topo(queue("in", nil)),
			after:  topo(queue("in", nil), shovel("s", topology.Args{"src-uri": "amqp:///%2F", "src-queue": "in", "dest-uri": "${DEST_URI}", "dest-queue": "q"})),
			want: []Link{{Vhost: "/", Kind: "shovel", Name: "s", After: `queue "in" to queue "q" on the broker and vhost of ${DEST_URI}`,
				Effect:  `messages now leave queue "in" for queue "q" on the broker and vhost of ${DEST_URI} (consumers of the queue now share its messages with the shovel)`,
				Unknown: "mqctl cannot tell which broker and vhost ${DEST_URI} names: it is not set here (set it, as plan and apply need)"}}},
		{name: "an upstream added whose uri is not set",
			before: topo(exchange("fed.x", "topic", nil), policy("fed", "^fed", "exchanges", topology.Args{"federation-upstream": "up"})),
			after:  fed("${UP_URI}"),
			want: []Link{{Vhost: "/", Kind: "federation_upstream", Name: "up", After: `the broker and vhost of ${UP_URI} (not set here)`,
				Effect: `the exchanges and queues federated through it (policy "fed") now receive messages from the broker and vhost of ${UP_URI} (not set here)`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			if !reflect.DeepEqual(d.Links, tc.want) {
				t.Errorf("links:\ngot  %s\nwant %s", show(t, d.Links), show(t, tc.want))
			}
		})
	}
}
