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
	// Memory policy: mqctl's heap is mostly short-lived parse trees (YAML,
	// definitions JSON). A soft limit of 76 MiB bounds it: at 50,000
	// objects the file's node tree holds some 34 MB while the file is
	// read, its topology 20 MB and the broker's decoded definitions some
	// 19 MB, and the collector's headroom above that pushed a plan past
	// 100 MB. 80 MiB left a 50,002-object replace plan at 96-101 MB on
	// RabbitMQ 4.3.6; 76 MiB at 95-99 MB, in the same time (5 runs each).
	// Remeasured on a no-op plan of 50,002 objects (4.3.6, 6 runs each,
	// user+sys CPU median and peak RSS): 64 MiB 0.83 s, 78-89 MB; 76 MiB
	// 0.51 s, 86-90 MB; 96 MiB 0.49 s, 102-105 MB; no limit 0.45 s,
	// 108-144 MB. Under the limit the collector may run rarely (GOGC=200),
	// which halves the time to load a 1,000-object file. Past the limit
	// it runs more often instead of growing the heap; nothing fails when a
	// larger topology needs more. GOGC and GOMEMLIMIT in the environment
	// still win. The figures are in bench/results.md.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(76 << 20)
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
