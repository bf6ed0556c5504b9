package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/suggest"
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
fails, and when there is nothing to test: a file without tests, a --run
that matches no test's name, a --vhost where no test runs. With --live, an
error that stops the run (the broker refuses a vhost's copy) comes after the
report of the tests run, which counts those that did not ("N not run";
not_run in -o json).`,
		Example: `  mqctl test -f examples/orders
  mqctl test -f examples/orders --live
  mqctl test --run 'retry' -o json`,
		Args: noArgs,
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
		return err // the loader's errors show no value from the environment
	}
	// A value from the environment (${VAR}) may be a secret: the report,
	// the log and the errors show what the file wrote instead.
	hidden := topotest.Hidden(t)
	if err := g.runLoaded(ctx, stdout, prefixed{w: stderr, hide: hidden}, f, t, match, version); err != nil {
		return hideError(err, hidden)
	}
	return nil
}

// runLoaded runs the tests of t that match selects, writing the report to
// stdout and a live run's log to log.
func (g *globals) runLoaded(ctx context.Context, stdout io.Writer, log prefixed, f testFlags, t *topology.Topology, match *regexp.Regexp, version rmqversion.Version) error {
	tests, err := g.selectTests(t, match, log.hide, version)
	if err != nil {
		return err
	}
	var r *topotest.Report
	var stopped error // what stopped a live run, reported after what it did
	if f.live {
		c, amqpURL, err := g.connect(ctx)
		if err != nil {
			return err
		}
		r, stopped = topotest.RunLive(ctx, c, t, tests, topotest.LiveOptions{
			AMQPURL: amqpURL, TLS: c.TLSConfig(), Wait: f.wait, Log: log})
		if r == nil {
			return stopped
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
	r.Hide(log.hide)
	if err := (testsView{json: g.output == "json", w: stdout}).report(r); err != nil {
		return errors.Join(err, stopped)
	}
	if stopped != nil && len(r.NotRun) > 0 {
		return fmt.Errorf("%w\n%d of the %d tests did not run: %s", stopped, len(r.NotRun), len(tests), quotedList(r.NotRun))
	}
	if stopped != nil {
		return stopped // every test ran (a throwaway vhost not deleted)
	}
	if !r.OK() {
		return &ExitCodeError{Code: ExitError}
	}
	return nil
}

// selectTests returns the tests of t to run: those in the vhosts --vhost
// keeps whose name match matches (all without --run). A run that would
// test nothing is refused, naming why: a CI job that runs mqctl test on a
// file without tests, or with a --run that matches none (a typo), must not
// pass having tested nothing. A test is selected by its name, or by its
// name as the report shows it (hidden: the values from the environment
// shown as the file wrote them).
func (g *globals) selectTests(t *topology.Topology, match *regexp.Regexp, hidden topology.EnvValues, version rmqversion.Version) ([]topology.Test, error) {
	if len(t.Tests) == 0 {
		verb := "has"
		if len(g.topologyFiles()) > 1 {
			verb = "have"
		}
		return nil, fmt.Errorf("%s %s no tests (no tests: section, or an empty one), so there is nothing to test; add some, such as\n%s\n(mqctl test --help explains each kind of test)",
			strings.Join(g.topologyFiles(), ", "), verb, hidden.Written(testsExampleFor(t, version)))
	}
	var inScope, tests []topology.Test
	for _, tc := range t.Tests {
		if _, kept := t.Vhosts[tc.Vhost]; kept {
			inScope = append(inScope, tc)
		}
	}
	if len(inScope) == 0 {
		var in []string
		for _, tc := range t.Tests {
			if !slices.Contains(in, tc.Vhost) {
				in = append(in, tc.Vhost)
			}
		}
		slices.Sort(in)
		return nil, fmt.Errorf("no test runs in --vhost %s: the file's tests run in %s; name one of those with --vhost, or leave --vhost out",
			quotedList(g.vhosts), quotedList(in))
	}
	for _, tc := range inScope {
		if match == nil || match.MatchString(tc.Name) || match.MatchString(hidden.Written(tc.Name)) {
			tests = append(tests, tc)
		}
	}
	if len(tests) > 0 {
		return tests, nil
	}
	names := make([]string, len(inScope))
	for i, tc := range inScope {
		names[i] = hidden.Written(tc.Name) // as the report shows it, and a word of it
	}
	hint := ""
	if near := nearTest(match.String(), names); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	return nil, fmt.Errorf("--run %q matches no test%s; the tests are %s: fix the pattern (a regular expression over the test names), or leave --run out to run them all",
		match.String(), hint, quotedList(names))
}

// nearTest is the test name, or a word of one, nearest to pattern, for a
// --run that matches none ("" when none is near).
func nearTest(pattern string, names []string) string {
	if near := suggest.Closest(pattern, names); near != "" {
		return near
	}
	var words []string
	for _, n := range names {
		for _, w := range strings.Fields(n) {
			if !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	return suggest.Closest(pattern, words)
}

// testsExample is a tests: section to start from, as mqctl test --help
// shows it.
const testsExample = `  tests:
    - name: created orders reach shipping
      publish: {exchange: orders, routing_key: order.created}
      expect: {queues: [orders.shipping]}`

// testsExampleFor is a tests: section to start from for t: a message
// published to the exchange of the file's first binding of a declared
// direct, fanout or topic exchange to a queue (without arguments: a
// headers binding needs headers), with a key that binding matches,
// expecting the queues the simulator says it reaches, so that it passes
// as it is; testsExample when the file has no such binding. Before, the
// advice was testsExample alone, whose exchange and queues (orders,
// orders.shipping) a file without them refuses.
func testsExampleFor(t *topology.Topology, version rmqversion.Version) string {
	names := t.VhostNames()
	for _, vn := range names {
		v := t.Vhosts[vn]
		if v == nil {
			continue
		}
		for _, b := range v.Bindings {
			x := v.Exchanges[b.Source]
			if b.DestinationKind() != kind.Queue || len(b.Arguments) > 0 || x == nil {
				continue
			}
			key := b.RoutingKey
			switch x.Type {
			case "direct", "fanout":
			case "topic":
				words := strings.Split(key, ".")
				for i, w := range words {
					if w == "*" || w == "#" {
						words[i] = "x"
					}
				}
				key = strings.Join(words, ".")
			default:
				continue
			}
			tc := topology.Test{Name: "example", Vhost: vn, Publish: topology.TestMessage{Exchange: b.Source, RoutingKey: key}}
			r := topotest.Simulate(t, []topology.Test{tc}, version)
			if len(r.Tests) != 1 || r.Tests[0].Unknown || len(r.Tests[0].Got) == 0 {
				continue
			}
			got := r.Tests[0].Got
			var sb strings.Builder
			fmt.Fprintf(&sb, "  tests:\n    - name: %s\n", yamlScalar(strings.TrimSpace(b.Source+" "+key)+" reaches "+strings.Join(got, ", ")))
			if len(names) > 1 {
				fmt.Fprintf(&sb, "      vhost: %s\n", yamlScalar(vn))
			}
			quoted := make([]string, len(got))
			for i, q := range got {
				quoted[i] = yamlScalar(q)
			}
			fmt.Fprintf(&sb, "      publish: {exchange: %s, routing_key: %s}\n      expect: {queues: [%s]}", yamlScalar(b.Source), yamlScalar(key), strings.Join(quoted, ", "))
			return sb.String()
		}
	}
	return testsExample
}

// plainScalar is what YAML reads as the string it writes, unquoted, in a
// flow mapping or list too.
var plainScalar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-/]*$`)

// yamlScalar writes s as a YAML string: as it is where YAML reads it so,
// else double-quoted.
func yamlScalar(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		return strconv.Quote(s)
	}
	if plainScalar.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// hideError is err with the values of hidden it shows replaced with what
// the file wrote (topology.EnvValues.Written); it wraps err, so that the exit
// code stays err's.
func hideError(err error, hidden topology.EnvValues) error {
	if msg := hidden.Written(err.Error()); msg != err.Error() {
		return &hiddenError{msg: msg, err: err}
	}
	return err
}

type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }

// prefixed writes each line it is given behind "mqctl: ", with the values
// of hide it shows replaced with what the file wrote.
type prefixed struct {
	w    io.Writer
	hide topology.EnvValues
}

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := fmt.Fprintf(p.w, "mqctl: %s", p.hide.Written(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
