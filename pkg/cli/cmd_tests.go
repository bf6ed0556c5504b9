package cli

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/topology"
	"github.com/mqctl/mqctl/pkg/topotest"
)

// (This file is cmd_tests.go, not cmd_test.go: Go would take that name
// for a test file.)

type testFlags struct {
	live bool
	run  string
	wait time.Duration
}

func newTestCmd(g *globals) *cobra.Command {
	var f testFlags
	cmd := &cobra.Command{
		Use:   "test [--live]",
		Short: "Check the file's tests: where probe messages land (simulated, or --live on the broker)",
		Long: `test checks the expectations of the file's tests: section. Each test publishes a
probe message, optionally rejects it in a queue (reject: QUEUE), lets it expire
from a queue (expire: QUEUE), or schedules it on a delay tier (retry: {queue,
delay}), and names exactly the queues it must then land in:

  tests:
    - name: created orders reach shipping and audit
      publish: {exchange: orders, routing_key: order.created}
      expect: {queues: [orders.audit, orders.shipping]}
    - name: rejected shipping messages land in their DLQ
      publish: {exchange: orders, routing_key: order.created}
      reject: orders.shipping
      expect: {queues: [orders.shipping.dlq]}
    - name: the 10s retry comes back
      retry: {queue: orders.shipping, delay: 10s}
      expect: {queues: [orders.shipping]}

Without --live the routing simulator answers, offline. With --live, mqctl
creates a throwaway vhost (mqctl-test-<random>) on the broker, applies the
file's vhost into it (but its shovels, federation upstreams and upstream
sets, which would move real messages beyond it, and its limits), publishes real probe messages (mandatory, confirmed),
reads every queue to see where they land, and deletes the vhost afterwards,
also when a test fails. Expiry is not waited for: an expire or retry test
publishes its probe with a per-message expiration of 0, so the queue expires
it on arrival through its real dead-letter wiring; that the queue has a TTL is
checked on the file.

Prints PASS or FAIL per test and "N passed, N failed"; exits 1 when a test
fails.`,
		Example: `  mqctl test -f examples/orders
  mqctl test -f examples/orders --live
  mqctl test --run 'retry' -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.runTests(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.live, "live", false, "run the tests with real messages in a throwaway vhost on the broker")
	fs.StringVar(&f.run, "run", "", "run only the tests whose name matches this regular expression")
	g.addTargetVersionFlag(cmd)
	fs.DurationVar(&f.wait, "wait", topotest.DefaultWait, "with --live: how long to wait for a message to arrive (a test expecting a dead letter to reach no queue takes this long)")
	return cmd
}

func (g *globals) runTests(ctx context.Context, stdout, stderr io.Writer, f testFlags) error {
	if err := g.checkOutput("text", "json"); err != nil {
		return err
	}
	var match *regexp.Regexp
	if f.run != "" {
		re, err := regexp.Compile(f.run)
		if err != nil {
			return fmt.Errorf("--run %q is not a regular expression: %w", f.run, err)
		}
		match = re
	}
	if f.wait <= 0 {
		return fmt.Errorf("--wait %s: give a positive duration such as 5s", f.wait)
	}
	// --live follows the broker's version; the simulation, --rabbitmq-version.
	version, err := g.targetVersion()
	if err != nil {
		return err
	}
	// Only --live needs the secrets: it applies the file to the broker.
	load := g.loadOffline
	if f.live {
		load = g.loadTopology
	}
	t, err := load()
	if err != nil {
		return err
	}
	var tests []topology.Test
	for _, tc := range t.Tests {
		if _, kept := t.Vhosts[tc.Vhost]; kept && (match == nil || match.MatchString(tc.Name)) {
			tests = append(tests, tc)
		}
	}
	if len(tests) == 0 {
		fmt.Fprintln(stderr, "mqctl: no tests to run: add a tests: section to the file (see mqctl test --help), or check --run and --vhost")
	}
	var r *topotest.Report
	if f.live && len(tests) > 0 {
		c, amqpURL, err := g.connect(ctx)
		if err != nil {
			return err
		}
		r, err = topotest.RunLive(ctx, c, t, tests, topotest.LiveOptions{
			AMQPURL: amqpURL, TLS: c.TLSConfig(), Wait: f.wait, Log: prefixed{w: stderr}})
		if err != nil {
			return err
		}
	} else {
		// What the target would refuse of the tests' vhosts, a --live run
		// on it is refused (its apply): the simulator would answer for
		// wiring the broker never holds.
		if err := version.Check(topotest.Trial(t, tests)); err != nil {
			return judgedFor(fmt.Errorf("%w\nthe tests cannot run against a broker that refuses their vhost: fix these first (mqctl validate lists them)", err), version)
		}
		r = topotest.Simulate(t, tests, version)
		r.Live = f.live
	}
	if g.output == "json" {
		err = topotest.WriteJSON(stdout, r)
	} else {
		err = topotest.WriteText(stdout, r)
	}
	if err != nil {
		return err
	}
	if !r.OK() {
		return &ExitCodeError{Code: ExitError}
	}
	return nil
}

// prefixed writes each line it is given behind "mqctl: ".
type prefixed struct{ w io.Writer }

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := fmt.Fprintf(p.w, "mqctl: %s", b); err != nil {
		return 0, err
	}
	return len(b), nil
}
