// Package bench holds benchmarks that need the local broker. Run them with
//
//	make bench-live      (go test -run '^$' -bench . -benchtime 1x ./bench/)
//
// BenchmarkApplyVsImport times, in one run, on fresh vhosts: RabbitMQ's own
// definitions import (POST /api/definitions/{vhost}) of a generated
// topology, mqctl apply of the same topology, a no-op mqctl plan, and one
// GET /api/definitions/{vhost}, and reports their ratios.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/cli"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// genYAML writes n working queues, each with its own DLQ and one binding:
// 2n queues and 2n bindings once expanded.
func genYAML(vhost string, n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "version: 1\nvhosts:\n  %q:\n    exchanges:\n      events: { type: topic }\n      events.dlx: { type: direct }\n    queues:\n", vhost)
	for i := 0; i < n; i++ {
		q := fmt.Sprintf("svc%03d.q%05d", i%100, i)
		fmt.Fprintf(&sb, "      %s:\n        bindings: [{ exchange: events, routing_key: \"svc%03d.event%d.#\" }]\n", q, i%100, i)
		fmt.Fprintf(&sb, "        dead_letter: { exchange: events.dlx, queue: %s.dlq }\n", q)
		fmt.Fprintf(&sb, "        limits: { max_length: 10000, overflow: reject-publish }\n")
	}
	return sb.String()
}

// definitions renders one vhost of t as a definitions document for
// POST /api/definitions/{vhost}.
func definitions(v *topology.Vhost) []byte {
	type obj = map[string]any
	doc := obj{"exchanges": []obj{}, "queues": []obj{}, "bindings": []obj{}}
	for _, n := range v.ExchangeNames() {
		e := v.Exchanges[n]
		doc["exchanges"] = append(doc["exchanges"].([]obj), obj{"name": n, "type": e.Type, "durable": e.Durable, "auto_delete": e.AutoDelete, "internal": e.Internal, "arguments": nonNil(e.Arguments)})
	}
	for _, n := range v.QueueNames() {
		q := v.Queues[n]
		args := nonNil(q.Arguments)
		args["x-queue-type"] = q.Type
		doc["queues"] = append(doc["queues"].([]obj), obj{"name": n, "durable": q.Durable, "auto_delete": q.AutoDelete, "arguments": args})
	}
	for _, b := range v.Bindings {
		doc["bindings"] = append(doc["bindings"].([]obj), obj{"source": b.Source, "destination": b.Destination, "destination_type": b.DestinationType, "routing_key": b.RoutingKey, "arguments": nonNil(b.Arguments)})
	}
	out, _ := json.Marshal(doc)
	return out
}

func nonNil(a topology.Args) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	return out
}

func httpDo(b *testing.B, br *testbroker.Broker, method, path string, body []byte) []byte {
	b.Helper()
	req, err := http.NewRequest(method, strings.TrimRight(br.URL, "/")+"/api/"+path, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.SetBasicAuth(br.Username, br.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		b.Fatalf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	return data
}

func run(b *testing.B, args ...string) string {
	b.Helper()
	var out, errb bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	if code := cli.Main(context.Background(), args, env); code != 0 {
		b.Fatalf("mqctl %v: exit %d\n%s\n%s", args, code, tail(out.String()), errb.String())
	}
	return out.String()
}

func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

func BenchmarkApplyVsImport(b *testing.B) {
	n := 5000
	if s := os.Getenv("MQCTL_BENCH_QUEUES"); s != "" {
		fmt.Sscanf(s, "%d", &n)
	}
	br := testbroker.New(b)
	for i := 0; i < b.N; i++ {
		importVhost, applyVhost := br.Vhost(b), br.Vhost(b)
		dir := b.TempDir()
		file := filepath.Join(dir, "topology.yaml")
		if err := os.WriteFile(file, []byte(genYAML(applyVhost, n)), 0o644); err != nil {
			b.Fatal(err)
		}
		t, err := loader.LoadBytes("gen.yaml", []byte(genYAML(importVhost, n)), loader.Options{})
		if err != nil {
			b.Fatal(err)
		}
		v := t.Vhosts[importVhost]
		defs := definitions(v)

		start := time.Now()
		httpDo(b, br, http.MethodPost, "definitions/"+url.PathEscape(importVhost), defs)
		importDur := time.Since(start)

		conn := []string{"--server", br.URL, "--username", br.Username, "--password", br.Password}
		start = time.Now()
		run(b, append([]string{"apply", "-f", file, "--auto-approve", "--quiet"}, conn...)...)
		applyDur := time.Since(start)

		start = time.Now()
		out := run(b, append([]string{"plan", "-f", file}, conn...)...)
		planDur := time.Since(start)
		if !strings.HasPrefix(out, "No changes.") {
			b.Fatalf("plan after apply is not empty:\n%s", tail(out))
		}

		start = time.Now()
		httpDo(b, br, http.MethodGet, "definitions/"+url.PathEscape(applyVhost), nil)
		getDur := time.Since(start)

		b.ReportMetric(float64(len(v.Queues)), "queues")
		b.ReportMetric(float64(len(v.Bindings)), "bindings")
		b.ReportMetric(importDur.Seconds(), "import_s")
		b.ReportMetric(applyDur.Seconds(), "apply_s")
		b.ReportMetric(applyDur.Seconds()/importDur.Seconds(), "apply/import")
		b.ReportMetric(planDur.Seconds(), "noop_plan_s")
		b.ReportMetric(getDur.Seconds(), "get_defs_s")
		b.ReportMetric(planDur.Seconds()/getDur.Seconds(), "plan/get")
	}
}
