package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// routeOptions are the route command's own flags.
type routeOptions struct {
	exchange   string
	routingKey string
	headers    map[string]any
	// expiration is the message's expiration property (milliseconds),
	// "" for none.
	expiration string
	depth      int
	// version is the RabbitMQ version whose dead-letter rules the
	// simulation follows (zero: rmqversion.Default, 4.3).
	version rmqversion.Version
}

func newRouteCmd(g *globals) *cobra.Command {
	var (
		o       routeOptions
		headers []string
	)
	cmd := &cobra.Command{
		Use:   "route --exchange X --routing-key K [--header k=v]... [--expiration MS]",
		Short: "Simulate where a message ends up, dead-letter hops included",
		Long: `route simulates a publish against the topology file, without a broker: every
queue the message reaches (direct, fanout, topic and headers exchanges,
exchange-to-exchange bindings, alternate exchanges, the default exchange),
and for each queue where its rejected, expired, overflowing or over-delivered
messages go next, hop by hop, until they settle, are dropped, or loop. A
quorum queue that dead-letters at least once (dead-letter-strategy
at-least-once, overflow reject-publish) holds a dead letter it cannot
route, and tries again, where others drop it: route says "held".

--expiration gives the message a per-message TTL, in milliseconds, as the
AMQP expiration property does: in each queue it reaches it then expires
after the smaller of that and the queue's message TTL, so route follows its
expired dead letters even where the queue has no TTL. Its dead letters lose
the expiration (x-death records it as original-expiration).

A message that reaches no queue is reported as unroutable; that is an answer,
not an error (exit 0). An undeclared exchange, an internal exchange (clients
cannot publish to it) or an unknown vhost is an error (exit 1).`,
		Example: `  mqctl route --exchange orders --routing-key order.created
  mqctl route --exchange "" --routing-key orders.shipping.retry.10s
  mqctl route --exchange docs --header format=pdf --header pages=3 -o json
  mqctl route --exchange orders --routing-key order.created --expiration 60000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			if !cmd.Flags().Changed("exchange") {
				return errors.New(`--exchange is required (use --exchange "" for the default exchange)`)
			}
			if o.depth < 0 {
				return fmt.Errorf("--depth %d: the number of dead-letter hops to follow cannot be negative", o.depth)
			}
			if cmd.Flags().Changed("expiration") {
				if _, err := route.ParseExpiration(o.expiration); err != nil {
					return fmt.Errorf("--expiration %q: RabbitMQ refuses a publish with this expiration (%v); give milliseconds from 0 to %d, e.g. --expiration 60000", o.expiration, err, int64(route.MaxExpiration))
				}
			}
			h, err := parseRouteHeaders(headers)
			if err != nil {
				return err
			}
			o.headers = h
			if o.version, err = g.targetVersion(); err != nil {
				return err
			}
			t, err := g.loadOffline()
			if err != nil {
				return err
			}
			// A value the file took from the environment (a binding's key
			// or header, ${VAR}) may be a secret: the routes show what the
			// file wrote (in its quotes in JSON).
			// What runRoute wrote is shown with its error too (a route
			// that fails an expectation exits non-zero).
			var buf bytes.Buffer
			rerr := runRoute(&buf, t, g.vhosts, g.output, o)
			if err := writeRouteHidden(cmd.OutOrStdout(), buf.String(), g.output, t.Env); err != nil {
				return err
			}
			return rerr
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.exchange, "exchange", "", `exchange to publish to ("" is the default exchange)`)
	f.StringVar(&o.routingKey, "routing-key", "", "routing key of the message")
	f.StringArrayVar(&headers, "header", nil, "message header key=value (repeatable; integers and true/false are typed, anything else is a string)")
	f.StringVar(&o.expiration, "expiration", "", "the message's expiration (per-message TTL) in milliseconds, as the AMQP expiration property")
	f.IntVar(&o.depth, "depth", route.DefaultDepth, "dead-letter hops to follow at most")
	g.addTargetVersionFlag(cmd)
	return cmd
}

// parseRouteHeaders turns key=value flags into message headers: integers and
// true/false become typed values, anything else stays a string.
func parseRouteHeaders(kvs []string) (map[string]any, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--header %q: want key=value, e.g. --header format=pdf", kv)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--header %q: header %q is given twice", kv, k)
		}
		switch {
		case v == "true":
			out[k] = true
		case v == "false":
			out[k] = false
		default:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[k] = n
			} else {
				out[k] = v
			}
		}
	}
	return out, nil
}

// routeVhost picks the vhost to simulate: the one given with --vhost, else
// the file's only vhost, else "/".
func routeVhost(t *topology.Topology, vhosts []string) (*topology.Vhost, error) {
	declared := t.VhostNames()
	switch {
	case len(vhosts) > 1:
		return nil, fmt.Errorf("route simulates one vhost at a time, got --vhost %s; pass one of them", strings.Join(vhosts, ","))
	case len(vhosts) == 1:
		if v, ok := t.Vhosts[vhosts[0]]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("vhost %q is not declared (declared: %s); pass one of those to --vhost", vhosts[0], routeQuoteList(declared))
	case len(declared) == 1:
		return t.Vhosts[declared[0]], nil
	case len(declared) == 0:
		return nil, errors.New("the topology declares no vhost: add one under vhosts:")
	}
	if v, ok := t.Vhosts["/"]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("the topology declares several vhosts (%s) and none is \"/\": pass --vhost to pick one", routeQuoteList(declared))
}

// runRoute simulates the publish o describes against t and writes the
// trace to w as text or JSON.
func runRoute(w io.Writer, t *topology.Topology, vhosts []string, output string, o routeOptions) error {
	v, err := routeVhost(t, vhosts)
	if err != nil {
		return err
	}
	sim := route.NewWith(v, route.Options{Version: o.version})
	if o.exchange != "" {
		x := sim.Exchange(o.exchange)
		if x == nil {
			return routeUndeclared(t, v, vhosts, o.exchange)
		}
		if x.Internal {
			return fmt.Errorf("exchange %q in vhost %q is internal: clients cannot publish to it (the broker closes the channel); publish to an exchange bound to it", o.exchange, v.Name)
		}
	}
	m := route.Message{Exchange: o.exchange, RoutingKey: o.routingKey, Headers: o.headers, Expiration: o.expiration}
	tr := sim.Trace(m, o.depth)
	return writeRoute(w, output, tr, func() error {
		return writeRouteText(w, tr, sim.Problems(), unsimulatedPaths(v, o.version, m, tr.Publish.Unsimulated), routeNotes(sim, tr))
	})
}

// routeUndeclared explains an exchange the vhost route simulates does not
// declare: naming the vhosts that declare it (when --vhost did not choose
// this one), else what this vhost declares.
func routeUndeclared(t *topology.Topology, v *topology.Vhost, vhosts []string, exchange string) error {
	if len(vhosts) == 0 {
		var in []string
		for _, vn := range t.VhostNames() {
			if _, ok := t.Vhosts[vn].Exchanges[exchange]; ok && vn != v.Name {
				in = append(in, vn)
			}
		}
		if len(in) > 0 {
			noun := "vhost"
			if len(in) > 1 {
				noun = "vhosts"
			}
			return fmt.Errorf("exchange %q is not declared in vhost %q, the one route simulates without --vhost, but in %s %s: pass --vhost %s",
				exchange, v.Name, noun, routeQuoteList(in), in[0])
		}
	}
	declared := "it declares no exchange"
	if names := v.ExchangeNames(); len(names) > 0 {
		declared = "declared: " + routeQuoteList(names)
	}
	return fmt.Errorf("exchange %q is not declared in vhost %q (%s); publish to a declared exchange, or declare it", exchange, v.Name, declared)
}

// unsimulatedPaths finds the path a publish of m takes to each plugin
// exchange in names that the simulator cannot follow: it routes m again
// through a copy of vhost v in which each of them is a fanout exchange
// bound to a stand-in queue, whose delivery path is that path. nil when
// names is empty.
func unsimulatedPaths(v *topology.Vhost, ver rmqversion.Version, m route.Message, names []string) map[string][]route.Step {
	if len(names) == 0 {
		return nil
	}
	c := *v
	c.Exchanges = make(map[string]*topology.Exchange, len(v.Exchanges))
	for k, x := range v.Exchanges {
		c.Exchanges[k] = x
	}
	c.Queues = make(map[string]*topology.Queue, len(v.Queues)+len(names))
	for k, q := range v.Queues {
		c.Queues[k] = q
	}
	c.Bindings = append([]*topology.Binding(nil), v.Bindings...)
	standIn := map[string]string{} // stand-in queue -> exchange
	for _, name := range names {
		x := v.Exchanges[name]
		if x == nil {
			continue
		}
		fan := *x
		fan.Type, fan.Arguments = "fanout", nil
		c.Exchanges[name] = &fan
		q := "\x00unsimulated\x00" + name
		standIn[q] = name
		c.Queues[q] = &topology.Queue{Name: q, Type: topology.QueueClassic, Durable: true}
		c.Bindings = append(c.Bindings, &topology.Binding{Source: name, Destination: q, DestinationType: topology.DestQueue})
	}
	out := map[string][]route.Step{}
	for _, d := range route.NewWith(&c, route.Options{Version: ver}).Publish(m).Deliveries {
		if x, ok := standIn[d.Queue]; ok && len(d.Path) > 0 {
			out[x] = d.Path[:len(d.Path)-1]
		}
	}
	return out
}
