// Command mqctl keeps a RabbitMQ broker's topology as code.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/mqctl/mqctl/pkg/cli"
)

func main() {
	// mqctl's heap is mostly short-lived parse trees (YAML, definitions
	// JSON): collecting at 50% growth instead of 100% cuts the peak memory
	// of a 50,000-object plan by a sixth for no measurable time. GOGC in
	// the environment still wins.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
	// A soft limit on top: at 50,000 objects the YAML library's node tree
	// alone holds some 45 MB while the file is read, and the collector's
	// headroom above that is what pushed a plan past 100 MB. Past 80 MiB
	// the collector runs more often instead of growing the heap; nothing
	// fails when a larger topology needs more. GOMEMLIMIT still wins. The
	// figures are in bench/results.md.
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(80 << 20)
	}
	// The first Ctrl-C (or SIGTERM, as a CI cancel sends) cancels the
	// context: apply finishes the steps in flight, writes its ownership
	// record and reports. Once cancelled, the signals are released, so a
	// second Ctrl-C ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Main(ctx, os.Args[1:], cli.OSEnv())
	stop()
	os.Exit(code)
}
