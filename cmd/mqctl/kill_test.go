package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/brokerstate"
	"github.com/mqctl/mqctl/internal/faultproxy"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
)

const killBefore = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: direct }
    queues:
      q: { bindings: [{ exchange: ex, routing_key: k }] }
`

// An apply killed -9 between the two halves of an exchange's replace
// (the exchange deleted, with every binding on it, and not yet declared
// again): the next apply declares the exchange again, puts back the
// bindings the file declares, and also those of a queue the file does not
// name (another team's), which only the killed apply knew: it wrote them
// down on the broker before the replace began (a restore list). plan and
// status say so in between; after the resume the list is gone, a third plan is empty,
// and the ownership record does not claim the other team's binding.
// Before, that binding was gone for good and nothing said so (kill -9 at
// random points of an apply replacing an exchange, 4.3.6). The kill comes
// while the management API holds the exchange's declaration (a proxy
// stalls it), so where it lands does not depend on timing.
func TestKilledBetweenTheHalvesOfAReplace(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vhost := b.Vhost(t)
	bin := buildMqctl(t)
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.yaml"), filepath.Join(dir, "after.yaml")
	for f, text := range map[string]string{before: killBefore, after: strings.Replace(killBefore, "direct", "topic", 1)} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proxy, err := faultproxy.NewHTTP(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	env := func(server string) []string {
		return append(os.Environ(), "HOME="+dir, "NO_COLOR=1", "VHOST="+vhost,
			"MQCTL_SERVER="+server, "MQCTL_USERNAME="+b.Username, "MQCTL_PASSWORD="+b.Password,
			"MQCTL_AMQP_URL="+strings.TrimSuffix(b.AMQPURL(vhost), "/"+vhost))
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env(b.URL)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("apply", "-f", before, "--auto-approve"); err != nil {
		t.Fatalf("first apply: %v\n%s", err, out)
	}
	vh := url.PathEscape(vhost)
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPut, "queues/" + vh + "/theirs", `{"durable": true}`},
		{http.MethodPost, "bindings/" + vh + "/e/ex/q/theirs", `{"routing_key": "t"}`},
	} {
		if status, answer, err := b.API(r.method, r.path, []byte(r.body)); err != nil || status/100 != 2 {
			t.Fatalf("%s %s: %d %v %s", r.method, r.path, status, err, answer)
		}
	}
	theirs := func() []string {
		var bs []struct {
			Source     string `json:"source"`
			RoutingKey string `json:"routing_key"`
		}
		if err := json.Unmarshal(b.GetAPI(t, "queues/"+vh+"/theirs/bindings"), &bs); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range bs {
			if b.Source != "" {
				out = append(out, b.Source+" "+b.RoutingKey)
			}
		}
		return out
	}

	// The replace: the proxy holds the declaration of ex, the kill comes
	// once the broker has it.
	proxy.Add(faultproxy.Rule{Match: faultproxy.Method("exchanges/"+vhost+"/ex", http.MethodPut), Fault: faultproxy.Stall})
	cmd := exec.Command(bin, "apply", "-f", after, "--auto-approve", "--allow-replace", "--no-preflight")
	cmd.Env = env(proxy.URL)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	held := func() bool {
		return proxy.Count(func(e faultproxy.Entry) bool {
			return e.Method == http.MethodPut && e.Path == "exchanges/"+vhost+"/ex" && e.Fault == faultproxy.Stall
		}) > 0
	}
	for deadline := time.Now().Add(time.Minute); !held(); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("apply ended (%v) before it declared ex again:\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("apply did not declare ex again within a minute:\n%s", out.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	if got := theirs(); len(got) != 0 {
		t.Fatalf("queue theirs is still bound from %q: the kill did not come between the halves of the replace", got)
	}

	// plan says what is missing and who puts it back.
	planOut, err := run("plan", "-f", after)
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, planOut)
	}
	for _, want := range []string{"an apply stopped in the middle of a replace", "ex -> queue theirs [t]", "the next apply declares it again"} {
		if !strings.Contains(planOut, want) {
			t.Errorf("the plan after the kill does not say %q:\n%s", want, planOut)
		}
	}

	// So does status, whose rows show only the queues of the file.
	statusOut, _ := run("status", "-f", after)
	for _, want := range []string{"an apply stopped in the middle of a replace", "ex -> queue theirs [t]", "run mqctl apply: it declares it again once its ends exist"} {
		if !strings.Contains(statusOut, want) {
			t.Errorf("status after the kill does not say %q:\n%s", want, statusOut)
		}
	}

	// The resume puts everything back.
	if out, err := run("apply", "-f", after, "--auto-approve", "--allow-replace"); err != nil {
		t.Fatalf("apply after the kill: %v\n%s", err, out)
	} else if !strings.Contains(out, "ex -> queue theirs [t]") {
		t.Errorf("the apply after the kill does not say it put back the binding of queue theirs:\n%s", out)
	}
	if got := theirs(); strings.Join(got, ",") != "ex t" {
		t.Errorf("queue theirs is bound from %q, want from ex with key t", got)
	}
	if out, err := run("plan", "-f", after, "--detailed-exitcode"); err != nil {
		t.Errorf("a third plan is not empty (%v):\n%s", err, out)
	}
	c, err := broker.Connect(context.Background(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatal(err)
	}
	v, rec, err := brokerstate.Read(context.Background(), c, vhost)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || len(rec.RestoreLists) > 0 {
		t.Errorf("record %+v: want one, and no restore list left", rec)
	}
	for ref := range rec.Managed {
		if strings.Contains(ref.Name, "theirs") {
			t.Errorf("mqctl's record claims %s, the other team's", ref)
		}
	}
	if v.Exchanges["ex"] == nil || v.Exchanges["ex"].Type != "topic" {
		t.Errorf("exchange ex: %+v, want a topic exchange", v.Exchanges["ex"])
	}
}
