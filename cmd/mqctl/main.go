// Command mqctl keeps a RabbitMQ broker's topology as code.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/mqctl/mqctl/pkg/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], cli.OSEnv())
	stop()
	os.Exit(code)
}
