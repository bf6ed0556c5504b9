package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
)

// buildMqctl builds the real binary (signal handling included, which the
// testscript command of TestMain does not have).
func buildMqctl(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "mqctl")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// signalFile declares 10 exchanges and 995 queues with one binding each:
// 2,000 objects.
func signalFile() string {
	var b strings.Builder
	b.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n")
	for i := range 10 {
		fmt.Fprintf(&b, "      e%d: { type: direct }\n", i)
	}
	b.WriteString("    queues:\n")
	for i := range 995 {
		fmt.Fprintf(&b, "      q%04d: { bindings: [{ exchange: e%d, routing_key: k%d }] }\n", i, i%10, i)
	}
	return b.String()
}

// stepRE is a progress line of a step done.
var stepRE = regexp.MustCompile(`^  done: (declare exchange|declare queue|create binding) (.*) in vhost "[^"]*" \(\d`)

// refOf is the ownership entry a step done adds.
func refOf(vhost, op, name string) plan.ObjectRef {
	switch op {
	case "declare exchange":
		return plan.ObjectRef{Kind: kind.Exchange, Vhost: vhost, Name: strings.Trim(name, `"`)}
	case "declare queue":
		return plan.ObjectRef{Kind: kind.Queue, Vhost: vhost, Name: strings.Trim(name, `"`)}
	}
	return plan.ObjectRef{Kind: kind.Binding, Vhost: vhost, Name: name}
}

// Ctrl-C during apply: the steps in flight finish, no new one starts, the
// ownership record lists exactly what was done, the report says
// "interrupted" with counts (no stack trace), exit 1; a re-run converges.
func TestInterruptApply(t *testing.T) {
	t.Parallel()
	t.Run("SIGINT", func(t *testing.T) { interruptApply(t, os.Interrupt) })
	t.Run("SIGTERM", func(t *testing.T) { interruptApply(t, syscall.SIGTERM) })
}

func interruptApply(t *testing.T, sig os.Signal) {
	b := testbroker.New(t)
	vhost := b.Vhost(t)
	bin := buildMqctl(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "topology.yaml")
	if err := os.WriteFile(file, []byte(signalFile()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+dir, "NO_COLOR=1", "VHOST="+vhost,
		"MQCTL_SERVER="+b.URL, "MQCTL_USERNAME="+b.Username, "MQCTL_PASSWORD="+b.Password,
		"MQCTL_AMQP_URL="+strings.TrimSuffix(b.AMQPURL(vhost), "/"+vhost))

	cmd := exec.Command(bin, "apply", "-f", file, "--auto-approve")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		out   strings.Builder
		done  []plan.ObjectRef
		ready = make(chan struct{})
		once  sync.Once
	)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l := sc.Text()
			mu.Lock()
			out.WriteString(l + "\n")
			if m := stepRE.FindStringSubmatch(l); m != nil {
				done = append(done, refOf(vhost, m[1], m[2]))
				if len(done) == 60 {
					once.Do(func() { close(ready) })
				}
			}
			mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case <-ready:
	case <-copied:
		t.Fatalf("apply ended before 60 steps were done:\n%s\n%s", out.String(), stderr.String())
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("apply did not get through 60 steps in 2 minutes")
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { <-copied; exited <- cmd.Wait() }()
	werr := waitStopped(t, cmd, exited, "of Ctrl-C")
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want exit status 1", werr)
	}
	mu.Lock()
	report := out.String()
	mu.Unlock()
	all := report + stderr.String()
	for _, bad := range []string{"goroutine ", "panic", "signal: interrupt", ".go:"} {
		if strings.Contains(all, bad) {
			t.Errorf("output contains %q:\n%s", bad, lastLines(all, 30))
		}
	}
	if !strings.Contains(report, "\nApply did not finish.\n") || !strings.Contains(report, fmt.Sprintf("\nDone (%d steps):\n", len(done))) ||
		!strings.Contains(report, "\nNot done (") {
		t.Errorf("the report does not say what was done and what was not:\n%s", lastLines(report, 30))
	}
	want := fmt.Sprintf("mqctl: apply interrupted after %d of 2000 steps; nothing was lost: run mqctl apply again to finish", len(done))
	// The apply may also have swept a throwaway vhost that a test killing
	// applies left behind (TestPreflightStopped), and said so.
	if errText := dropLeftoverNotes(stderr.String()); !strings.HasPrefix(errText, want) || strings.Count(errText, "\n") != 1 {
		t.Errorf("stderr:\n%s\nwant one line starting %q", stderr.String(), want)
	}
	if len(done) >= 2000 {
		t.Fatalf("all %d steps were done: the interruption came too late to test anything", len(done))
	}

	// The ownership record lists exactly the steps done.
	c, err := broker.Connect(context.Background(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatal(err)
	}
	state, _, err := c.ReadState(context.Background(), []string{vhost})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ownership.Extract(state)
	if err != nil {
		t.Fatal(err)
	}
	var got, exp []string
	if rec := recs[vhost]; rec != nil {
		for ref := range rec.Managed {
			got = append(got, fmt.Sprint(ref))
		}
	}
	for _, ref := range done {
		exp = append(exp, fmt.Sprint(ref))
	}
	sort.Strings(got)
	sort.Strings(exp)
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Errorf("the ownership record lists %d objects, the steps done were %d", len(got), len(exp))
	}
	if n := len(state.Vhosts[vhost].Queues); n != countKind(done, kind.Queue) {
		t.Errorf("the broker holds %d queues, %d declarations were reported done", n, countKind(done, kind.Queue))
	}

	// A re-run converges.
	rerun := exec.Command(bin, "apply", "-f", file, "--auto-approve", "--quiet")
	rerun.Env = env
	if out, err := rerun.CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, lastLines(string(out), 20))
	}
	again := exec.Command(bin, "plan", "-f", file, "--detailed-exitcode")
	again.Env = env
	if out, err := again.CombinedOutput(); err != nil {
		t.Errorf("a second plan is not empty (%v):\n%s", err, lastLines(string(out), 20))
	}
}

func countKind(refs []plan.ObjectRef, k plan.Kind) int {
	n := 0
	for _, r := range refs {
		if r.Kind == k {
			n++
		}
	}
	return n
}

// waitStopped returns how the stopped apply cmd exited (exited tells),
// killing it and failing the test when it does not within a minute
// (after what).
func waitStopped(t *testing.T, cmd *exec.Cmd, exited <-chan error, after string) error {
	t.Helper()
	select {
	case err := <-exited:
		return err
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("apply did not stop within a minute %s", after)
		return nil
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
