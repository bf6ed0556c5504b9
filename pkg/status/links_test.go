package status

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/broker"
)

const linksFile = `queues:
  a: {}
shovels:
  up: { src-uri: "amqp://", src-queue: a, dest-uri: "amqp://dc2", dest-queue: a }
  down: { src-uri: "amqp://", src-queue: a, dest-uri: "amqp://dc2", dest-queue: a }
  quiet: { src-uri: "amqp://", src-queue: a, dest-uri: "amqp://dc2", dest-queue: a }
  slow: { src-uri: "amqp://", src-queue: a, dest-uri: "amqp://dc2", dest-queue: a }
  gone: { src-uri: "amqp://", src-queue: a, dest-uri: "amqp://dc2", dest-queue: a }
federation_upstreams:
  dc2: { uri: "amqp://dc2" }
`

// TestLinks: each declared shovel and each link of a declared upstream
// gets the problem its state means; a link of an upstream the file does
// not declare is not the file's; a broker without the management plugins
// gives a warning, not an alert.
func TestLinks(t *testing.T) {
	v := load(t, linksFile).Vhosts["/"]
	held := map[string]bool{"up": true, "down": true, "quiet": true, "slow": true}
	shovels := []broker.LinkState{{Name: "up", State: "running"}, {Name: "down", State: "terminated", Reason: "failed to connect to source"},
		{Name: "slow", State: "starting"}}
	fed := []broker.LinkState{{Name: "dc2", Target: "exchange orders", State: "error", Reason: "unknown_host"},
		{Name: "dc2", Target: "queue q", State: "running"}, {Name: "other", Target: "exchange x", State: "error"}}
	summary := func(links []Link) []string {
		var out []string
		for _, l := range links {
			s := l.Label()
			for _, p := range l.Problems {
				s += fmt.Sprintf(" | %s/%s: %s", p.Kind, p.Severity, p.Message)
			}
			out = append(out, s)
		}
		return out
	}
	for _, c := range []struct {
		name string
		read LinkRead
		want []string
	}{
		{"states", LinkRead{Shovels: shovels, Held: held, Federation: fed}, []string{
			`shovel "down" | link-down/alert: terminated: failed to connect to source, so it moves no messages`,
			`shovel "gone" | missing/alert: missing on the broker (run mqctl apply)`,
			`shovel "quiet" | link-down/alert: not running: the broker reports no state for it (it keeps failing to start)`,
			`shovel "slow" | link-down/alert: still starting: it keeps retrying to connect, so it moves no messages`,
			`shovel "up"`,
			`federation link from upstream "dc2" (exchange orders) | link-down/alert: error: unknown_host, so it federates no messages`,
			`federation link from upstream "dc2" (queue q)`,
		}},
		{"no management plugins", LinkRead{ShovelsErr: broker.ErrNotFound, Held: held, FedErr: broker.ErrNotFound}, []string{
			`shovel "down" | link-unknown/warning: state unknown: the broker reports no shovel states (enable the rabbitmq_shovel_management plugin)`,
			`shovel "gone" | missing/alert: missing on the broker (run mqctl apply)`,
			`shovel "quiet" | link-unknown/warning: state unknown: the broker reports no shovel states (enable the rabbitmq_shovel_management plugin)`,
			`shovel "slow" | link-unknown/warning: state unknown: the broker reports no shovel states (enable the rabbitmq_shovel_management plugin)`,
			`shovel "up" | link-unknown/warning: state unknown: the broker reports no shovel states (enable the rabbitmq_shovel_management plugin)`,
			`federation links | link-unknown/warning: state unknown: the broker reports no federation link states (enable the rabbitmq_federation_management plugin)`,
		}},
		// A user with the management tag may list shovel states, not
		// the shovels' parameters: one not listed is missing or failing.
		{"shovels not readable", LinkRead{Shovels: shovels, Federation: fed[:1]}, []string{
			`shovel "down" | link-down/alert: terminated: failed to connect to source, so it moves no messages`,
			`shovel "gone" | link-down/alert: not running: the broker reports no state for it (it is missing, or it keeps failing to start)`,
			`shovel "quiet" | link-down/alert: not running: the broker reports no state for it (it is missing, or it keeps failing to start)`,
			`shovel "slow" | link-down/alert: still starting: it keeps retrying to connect, so it moves no messages`,
			`shovel "up"`,
			`federation link from upstream "dc2" (exchange orders) | link-down/alert: error: unknown_host, so it federates no messages`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, summary(Links(v, c.read))); d != "" {
				t.Errorf("links (-want +got):\n%s", d)
			}
		})
	}
	// A link still starting, or a shovel the broker holds and reports no
	// state of, is waited for; one running or terminated is not.
	if !linksPending(v, LinkRead{Shovels: shovels, Held: held}) {
		t.Error("a starting shovel is not waited for")
	}
	if linksPending(v, LinkRead{Shovels: []broker.LinkState{{Name: "up", State: "running"}, {Name: "down", State: "terminated"}, {Name: "quiet", State: "running"}, {Name: "slow", State: "running"}}, Held: held}) {
		t.Error("settled shovels are waited for")
	}
}

// TestFederatedUpstreamsAreWaitedFor: a declared upstream that a policy
// federates with (directly, through a set, or through "all") is waited
// for until the broker reports a link of it; one no policy uses is not.
func TestFederatedUpstreamsAreWaitedFor(t *testing.T) {
	v := load(t, `exchanges:
  x: { type: fanout }
federation_upstreams:
  a: { uri: "amqp://a" }
  b: { uri: "amqp://b" }
  c: { uri: "amqp://c" }
federation_upstream_sets:
  some: [{ upstream: b }]
policies:
  direct: { pattern: "^x$", apply_to: exchanges, definition: { federation-upstream: a } }
  viaset: { pattern: "^y$", apply_to: exchanges, definition: { federation-upstream-set: some } }
`).Vhosts["/"]
	if d := cmp.Diff([]string{"a", "b"}, federatedUpstreams(v)); d != "" {
		t.Errorf("federated upstreams (-want +got):\n%s", d)
	}
	if !linksPending(v, LinkRead{Federation: []broker.LinkState{{Name: "a", State: "running"}}}) {
		t.Error("upstream b, federated through a set, has no link yet and is not waited for")
	}
	if linksPending(v, LinkRead{Federation: []broker.LinkState{{Name: "a", State: "running"}, {Name: "b", State: "error"}}}) {
		t.Error("waited although every federated upstream has a link")
	}
}

// TestLinksServerError: a listing the broker answers with a server error
// is asked again until the wait ends, then is a warning, not a failure of
// status (3.10.8 answered 500 to a federation links listing under load).
func TestLinksServerError(t *testing.T) {
	v := load(t, linksFile).Vhosts["/"]
	read := LinkRead{Shovels: []broker.LinkState{{Name: "up", State: "running"}}, Held: map[string]bool{"up": true}, FedErr: &broker.APIError{Status: 500}}
	if err := fatal(read.ShovelsErr, read.FedErr); err != nil {
		t.Errorf("a 500 is fatal: %v", err)
	}
	if !linksPending(v, read) {
		t.Error("a 500 is not asked again")
	}
	links := Links(v, read)
	last := links[len(links)-1]
	if last.Kind != "federation links" || len(last.Problems) != 1 || last.Problems[0].Severity != Warning || !strings.Contains(last.Problems[0].Message, "the broker failed to list federation link states") {
		t.Errorf("federation links after a 500: %+v", last)
	}
}

// TestLinksFinishedShovel: a shovel that deletes itself once done
// (src-delete-after) and is not on the broker has finished (or was never
// applied): a warning that says so, not the alert of a missing shovel,
// which a one-shot replay would raise for ever after its run.
func TestLinksFinishedShovel(t *testing.T) {
	v := load(t, `queues:
  a: {}
shovels:
  replay: { src-uri: "amqp://", src-queue: a, dest-uri: "amqp://", dest-queue: b, src-delete-after: queue-length }
  gone: { src-uri: "amqp://", src-queue: a, dest-uri: "amqp://", dest-queue: b, src-delete-after: never }
`).Vhosts["/"]
	var got []string
	for _, l := range Links(v, LinkRead{Held: map[string]bool{}}) {
		for _, p := range l.Problems {
			got = append(got, fmt.Sprintf("%s | %s/%s: %s", l.Label(), p.Kind, p.Severity, p.Message))
		}
	}
	want := []string{
		`shovel "gone" | missing/alert: missing on the broker (run mqctl apply)`,
		`shovel "replay" | missing/warning: not on the broker: it deletes itself once done (src-delete-after: queue-length), so it has finished, unless it was never applied`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}

// TestLinksMissingUpstream: a federation upstream the file declares and
// the broker does not hold is missing (an alert), as a missing shovel is;
// before, status said nothing of it while no link used it.
func TestLinksMissingUpstream(t *testing.T) {
	v := load(t, `federation_upstreams:
  dc2: { uri: "amqp://dc2" }
  dc3: { uri: "amqp://dc3" }
`).Vhosts["/"]
	var got []string
	for _, l := range Links(v, LinkRead{Upstreams: map[string]bool{"dc3": true}}) {
		for _, p := range l.Problems {
			got = append(got, fmt.Sprintf("%s | %s/%s: %s", l.Label(), p.Kind, p.Severity, p.Message))
		}
	}
	want := []string{`federation upstream "dc2" | missing/alert: missing on the broker (run mqctl apply)`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if links := Links(v, LinkRead{}); len(links) != 0 {
		t.Errorf("upstreams not read: links %+v, want none", links)
	}
}
