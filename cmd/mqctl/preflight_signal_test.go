package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/preflight"
)

// An apply stopped while its preflight runs: on Ctrl-C it deletes its
// throwaway vhost and changes nothing; killed (SIGKILL), it cannot, and
// the next apply deletes the vhost it left behind once the grace is over,
// and says so.
func TestPreflightStopped(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	bin := buildMqctl(t)
	c, err := broker.Connect(context.Background(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		sig  os.Signal
	}{{"SIGINT", os.Interrupt}, {"SIGKILL", syscall.SIGKILL}} {
		t.Run(tc.name, func(t *testing.T) {
			// Another test's apply may sweep the killed apply's leftover
			// first, in the moment after the guard's release when the
			// applies here and theirs may all find it unguarded; the
			// scenario then starts again.
			for try := 1; ; try++ {
				if !stopInPreflight(t, b, c, bin, tc.sig) {
					return
				}
				if try == 5 {
					t.Fatalf("%d tries: each time another apply swept the leftover first", try)
				}
				t.Logf("try %d: another test's apply swept the leftover first; again", try)
			}
		})
	}
}

// stopInPreflight starts an apply of 400 queue shapes, stops it with sig
// while its throwaway vhost is up, and checks what follows (see
// TestPreflightStopped). taken reports that another apply swept the
// leftover of a killed apply before the one here could.
func stopInPreflight(t *testing.T, b *testbroker.Broker, c *broker.Client, bin string, sig os.Signal) (taken bool) {
	t.Helper()
	vhost := b.Vhost(t)
	dir := t.TempDir()
	// 400 queue shapes of this run's own: the throwaway vhost
	// holding them is this apply's, whatever else runs.
	base := 2_000_000 + time.Now().UnixNano()%1_000_000*1000
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n")
	for i := range 400 {
		fmt.Fprintf(&sb, "      q%d: { arguments: { x-max-length: %d } }\n", i, base+int64(i))
	}
	file := filepath.Join(dir, "topology.yaml")
	if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+dir, "NO_COLOR=1", "VHOST="+vhost,
		"MQCTL_SERVER="+b.URL, "MQCTL_USERNAME="+b.Username, "MQCTL_PASSWORD="+b.Password,
		"MQCTL_AMQP_URL="+strings.TrimSuffix(b.AMQPURL(vhost), "/"+vhost))
	cmd := exec.Command(bin, "apply", "-f", file, "--auto-approve", "--quiet")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	name := ""
	for deadline := time.Now().Add(time.Minute); name == "" && time.Now().Before(deadline); {
		select {
		case err := <-exited:
			t.Fatalf("apply ended (%v) before its throwaway vhost was seen:\n%s\n%s", err, stdout.String(), stderr.String())
		default:
		}
		name = testbroker.ThrowawayHolding(c, base)
		time.Sleep(2 * time.Millisecond)
	}
	if name == "" {
		_ = cmd.Process.Kill()
		t.Fatal("no throwaway vhost holding this apply's shapes within a minute")
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	werr := waitStopped(t, cmd, exited, "of the signal")
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		t.Fatalf("apply exited %v, want a failure", werr)
	}
	if v, _, err := c.ReadState(context.Background(), []string{vhost}); err != nil || len(v.Vhosts[vhost].Queues) != 0 {
		t.Errorf("an apply stopped in its preflight changed the vhost (%v)", err)
	}
	_, gerr := c.GetVhost(context.Background(), name)
	if sig != syscall.SIGKILL {
		if ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "preflight interrupted, nothing was changed") || strings.Contains(stderr.String(), "goroutine ") {
			t.Errorf("exit %d, stderr:\n%s", ee.ExitCode(), stderr.String())
		}
		if !errors.Is(gerr, broker.ErrNotFound) {
			t.Errorf("the throwaway vhost %s is still there after Ctrl-C (%v)", name, gerr)
		}
		return false
	}
	if gerr != nil {
		t.Fatalf("the killed apply's throwaway vhost %s is gone already (%v): nothing left to sweep", name, gerr)
	}
	// Past the grace, the next apply sweeps it: any apply that
	// changes something, here one queue. Until then the test holds
	// a connection to it, as a live apply does, so that the applies
	// of other tests leave it to this one.
	guard, err := broker.DialAMQP(context.Background(), broker.AMQPDial{URL: strings.TrimSuffix(b.AMQPURL(vhost), "/"+vhost), Vhost: name, Name: "test guard"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(preflight.Grace + 2*time.Second)
	guard.Close()
	// The connections listing lags (3.10.8: its statistics): until it
	// shows none, an apply leaves the vhost alone. The applies here
	// follow each other without a pause, so that the first to find it
	// unguarded is one of them rather than another test's; each adds a
	// queue, as an apply sweeps when it changes something.
	var small strings.Builder
	small.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n")
	smallFile := filepath.Join(dir, "small.yaml")
	for i, deadline := 0, time.Now().Add(30*time.Second); ; i++ {
		fmt.Fprintf(&small, "      one%d: {}\n", i)
		if err := os.WriteFile(smallFile, []byte(small.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		again := exec.Command(bin, "apply", "-f", smallFile, "--auto-approve", "--quiet")
		again.Env = env
		out, err := again.CombinedOutput()
		if err != nil {
			t.Fatalf("apply %d after the kill: %v\n%s", i+1, err, lastLines(string(out), 20))
		}
		said := strings.Contains(string(out), "deleted the throwaway vhosts that killed mqctl applies left behind: ") && strings.Contains(string(out), name)
		_, gerr := c.GetVhost(context.Background(), name)
		gone := errors.Is(gerr, broker.ErrNotFound)
		switch {
		case strings.Contains(string(out), "could not be deleted"):
			t.Errorf("apply %d after the kill could not delete the leftover %s:\n%s", i+1, name, lastLines(string(out), 20))
			return false
		case said && !gone:
			t.Errorf("apply %d says it deleted %s, which is still there (%v)", i+1, name, gerr)
			return false
		case said:
			return false
		case gone:
			return true
		case time.Now().After(deadline):
			t.Fatalf("after %d applies in 30 s the killed apply's throwaway vhost %s is still there:\n%s", i+1, name, lastLines(string(out), 20))
		}
	}
}
