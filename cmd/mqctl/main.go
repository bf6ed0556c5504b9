// Command mqctl keeps a RabbitMQ broker's topology as code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mqctl/mqctl/pkg/cli"
)

func main() {
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
