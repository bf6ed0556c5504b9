package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// backoffSource is a vhost whose quorum queues hold delayed retry
// arguments, some exactly as retry.backoff writes them, some not.
func backoffSource() *topology.Topology {
	top := topology.New()
	v := top.Vhost("/")
	v.Exchanges["dlx"] = &topology.Exchange{Name: "dlx", Type: "direct", Durable: true}
	q := func(name, typ string, args topology.Args) {
		v.Queues[name] = &topology.Queue{Name: name, Type: typ, Durable: true, Arguments: args.Normalized()}
	}
	dr := func(kv ...any) topology.Args {
		a := topology.Args{}
		for i := 0; i+1 < len(kv); i += 2 {
			a[kv[i].(string)] = kv[i+1]
		}
		return a
	}
	// Exactly retry.backoff's.
	q("jobs", topology.QueueQuorum, dr("x-delayed-retry-type", "failed", "x-delayed-retry-min", 1000, "x-delayed-retry-max", 60000,
		"x-delivery-limit", 4, "x-dead-letter-exchange", "dlx", "x-dead-letter-routing-key", "jobs"))
	q("fixed", topology.QueueQuorum, dr("x-delayed-retry-type", "all", "x-delayed-retry-min", 1500))
	q("zero", topology.QueueQuorum, dr("x-delayed-retry-type", "returned", "x-delayed-retry-min", 10, "x-delayed-retry-max", 10, "x-delivery-limit", 0))
	// Not what retry.backoff writes: they stay arguments.
	q("disabled", topology.QueueQuorum, dr("x-delayed-retry-type", "disabled", "x-delayed-retry-min", 1000))
	q("bogus", topology.QueueQuorum, dr("x-delayed-retry-type", "bogus", "x-delayed-retry-min", 1000))
	q("no-min", topology.QueueQuorum, dr("x-delayed-retry-type", "all"))
	q("text-min", topology.QueueQuorum, dr("x-delayed-retry-type", "all", "x-delayed-retry-min", "1000"))
	q("max-below", topology.QueueQuorum, dr("x-delayed-retry-type", "all", "x-delayed-retry-min", 1000, "x-delayed-retry-max", 500))
	q("unlimited", topology.QueueQuorum, dr("x-delayed-retry-type", "failed", "x-delayed-retry-min", 1000, "x-delivery-limit", -1))
	q("classic", topology.QueueClassic, dr("x-delayed-retry-type", "failed", "x-delayed-retry-min", 1000))
	// A delivery limit alone is delivery_limit, as before.
	q("limited", topology.QueueQuorum, dr("x-delivery-limit", 3))
	return top
}

func exportBackoff(t *testing.T, top *topology.Topology, opts Options) (string, *topology.Topology) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteYAML(&buf, top, opts); err != nil {
		t.Fatal(err)
	}
	back, err := loader.LoadBytes("exported.yaml", buf.Bytes(), loader.Options{})
	if err != nil {
		t.Fatalf("the export does not load: %v\n%s", err, numbered(buf.String()))
	}
	return buf.String(), back
}

// From a broker with delayed retry, export writes retry.backoff where the
// arguments are exactly what it declares, and the file loads back into
// the same arguments; anything else stays an argument. Without
// DelayedRetry, or without sugar, every argument stays as it is.
func TestExportBackoff(t *testing.T) {
	t.Parallel()
	ignore := append(cmp.Options{cmpopts.IgnoreFields(topology.Queue{}, "Backoff")}, topologyOpts...)
	for _, opts := range []Options{{Sugar: true, DelayedRetry: true}, {Sugar: true}, {DelayedRetry: true}} {
		src := backoffSource()
		out, back := exportBackoff(t, src, opts)
		if diff := cmp.Diff(sorted(src), sorted(back), ignore); diff != "" {
			t.Errorf("%+v: loading the export gives another topology (-source +loaded):\n%s\n%s", opts, diff, numbered(out))
		}
		resugared := opts.Sugar && opts.DelayedRetry
		if strings.Contains(out, "backoff:") != resugared {
			t.Errorf("%+v: backoff written: %t\n%s", opts, !resugared, out)
		}
		if !resugared {
			continue
		}
		for _, want := range []string{
			"      jobs:\n        type: quorum\n        dead_letter: {exchange: dlx, routing_key: jobs}\n        retry: {backoff: {min: 1s, max: 1m}, attempts: 5}\n",
			"      fixed:\n        type: quorum\n        retry: {backoff: {min: 1500ms}, when: all}\n",
			"      zero:\n        type: quorum\n        retry: {backoff: {min: 10ms, max: 10ms}, when: returned, attempts: 1}\n",
			"      limited: {type: quorum, delivery_limit: 3}\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("export lacks\n%s\n%s", want, numbered(out))
			}
		}
		v := back.Vhosts["/"]
		for name, want := range map[string]bool{"jobs": true, "fixed": true, "zero": true,
			"disabled": false, "bogus": false, "no-min": false, "text-min": false, "max-below": false, "unlimited": false, "classic": false, "limited": false} {
			if got := v.Queues[name].Backoff != nil; got != want {
				t.Errorf("%s: written as retry.backoff: %t, want %t\n%s", name, got, want, numbered(out))
			}
		}
	}
}

// A queue with delay tiers keeps them as retry.delays; its delayed retry
// arguments (a queue uses one form in a file) stay arguments.
func TestExportBackoffBesideTiers(t *testing.T) {
	t.Parallel()
	top := topology.New()
	v := top.Vhost("/")
	v.Queues["q"] = &topology.Queue{Name: "q", Type: topology.QueueQuorum, Durable: true,
		Arguments: topology.Args{"x-delayed-retry-type": "failed", "x-delayed-retry-min": int64(1000)}}
	v.Queues["q.retry.10s"] = &topology.Queue{Name: "q.retry.10s", Type: topology.QueueQuorum, Durable: true,
		Arguments: topology.Args{"x-message-ttl": int64(10000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "q"}}
	out, back := exportBackoff(t, top, Options{Sugar: true, DelayedRetry: true})
	if !strings.Contains(out, "retry: {delays: [10s]}") || strings.Contains(out, "backoff") {
		t.Errorf("export:\n%s", numbered(out))
	}
	if got := back.Vhosts["/"].Queues["q"].Arguments; !got.Equal(v.Queues["q"].Arguments) {
		t.Errorf("q arguments %v", got)
	}
}
