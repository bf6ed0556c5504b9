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
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/cli"
	"github.com/mqctl/mqctl/pkg/loader"
)

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
	if resp.StatusCode >= 300 && !(method == http.MethodDelete && resp.StatusCode == http.StatusNotFound) {
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
		// Vhosts of 10,000+ queues take longer to delete than the test
		// harness's client waits, so the benchmark manages its own.
		importVhost, applyVhost := testbroker.Name(b, "mqctl-bench-import"), testbroker.Name(b, "mqctl-bench-apply")
		httpDo(b, br, http.MethodPut, "vhosts/"+url.PathEscape(importVhost), []byte(`{}`))
		br.Permit(b, br.Username, importVhost)
		b.Cleanup(func() {
			for _, vh := range []string{importVhost, applyVhost} {
				deleteVhost(b, br, vh)
			}
		})
		dir := b.TempDir()
		file := filepath.Join(dir, "topology.yaml")
		if err := os.WriteFile(file, []byte(gentopo.YAML(applyVhost, n)), 0o644); err != nil {
			b.Fatal(err)
		}
		t, err := loader.LoadBytes("gen.yaml", []byte(gentopo.YAML(importVhost, n)), loader.Options{})
		if err != nil {
			b.Fatal(err)
		}
		v := t.Vhosts[importVhost]
		defs, err := gentopo.Definitions(v)
		if err != nil {
			b.Fatal(err)
		}

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

// deleteVhost deletes a vhost of thousands of queues. The management API
// gives up on the request after 60 s while the broker goes on deleting, so
// the answer is not waited for: the vhost is polled until it is gone.
func deleteVhost(b *testing.B, br *testbroker.Broker, vh string) {
	b.Helper()
	path := strings.TrimRight(br.URL, "/") + "/api/vhosts/" + url.PathEscape(vh)
	// The management API aborts a request after 60 s, and with it the
	// deletion of a vhost of thousands of queues; the local broker's
	// rabbitmqctl has no such limit.
	if err := exec.Command("../scripts/broker", "ctl", "delete_vhost", vh).Run(); err != nil {
		req, _ := http.NewRequest(http.MethodDelete, path, nil)
		req.SetBasicAuth(br.Username, br.Password)
		if resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req); err == nil {
			resp.Body.Close()
		}
	}
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		req, _ := http.NewRequest(http.MethodGet, path, nil)
		req.SetBasicAuth(br.Username, br.Password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return
		}
	}
	b.Errorf("vhost %s still exists 10 minutes after its deletion", vh)
}
