package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/status"
)

// statusStatsWait bounds how long status waits for the statistics of a
// queue declared a moment ago (the broker reports them every
// collect_statistics_interval, 5 s by default).
const statusStatsWait = 6 * time.Second

func newStatusCmd(g *globals) *cobra.Command {
	var check, strict bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show depth, consumers and rates of the declared queues, and whether shovels and federation links run; --check fails on dead letters",
		Long: `status lists every queue the file declares with its depth (ready and
unacknowledged messages), consumers, and publish and deliver rates as the
broker's management API reports them, and says which queues are DLQs and
which are delay tiers. It then lists the shovels the file declares and the
federation links of the upstreams it declares, with their state.

Rows that need attention start with "!":
  alerts    a DLQ holding dead letters; dead letters a quorum queue keeps
            (at-least-once dead-lettering) because the file's dead-letter
            wiring routes them to no queue (lint's MQ102 or MQ103: the
            note says why and how to fix it); a queue deeper than its
            alert: {max_depth: N}; a declared queue or shovel missing on
            the broker; a shovel or federation link that does not run
            (terminated, in error, or still starting after a few seconds:
            it keeps retrying to connect)
  warnings  a working queue with messages a consumer could take and no
            consumer; dead letters a quorum queue holds on their way to
            the DLQ its dead-letter exchange routes them to; a queue the
            broker reports crashed or stopped; a queue on a node that is
            down (a classic queue on it, whose messages wait there
            uncounted; a quorum queue or stream without a majority of its
            members online; one with a member down, which still runs,
            naming the members down); links whose state the broker does
            not report (no management plugin)

With --check, status exits 1 when there is an alert (or, with --strict, a
warning), so a cron job or a CI step can alert on queue depth. Without
--check it exits 0 whatever the queues hold.

The broker's statistics lag by up to its collect_statistics_interval (5 s
by default).`,
		Example: `  mqctl status
  mqctl status --check            # exit 1 while a DLQ holds messages
  mqctl status --check --strict -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			t, err := g.loadTopology()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			c, err := g.connectAPI(ctx)
			if err != nil {
				return err
			}
			r, err := status.Collect(ctx, t, c, status.Options{Strict: strict, StatsWait: statusStatsWait, Version: c.RabbitMQVersion()})
			if err != nil {
				return err
			}
			r.Server, r.Version = broker.MaskURL(c.Server()), c.Version()
			w := cmd.OutOrStdout()
			if g.output == "json" {
				err = status.WriteJSON(w, r)
			} else {
				err = status.WriteText(w, r, status.TextOptions{Color: g.useColor()})
			}
			if err != nil {
				return fmt.Errorf("write the status: %w", err)
			}
			if !check {
				return nil
			}
			if failing := r.Failing(); len(failing) > 0 {
				return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("status check failed:\n  %s", strings.Join(failing, "\n  "))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "exit 1 when a DLQ holds messages, a quorum queue keeps dead letters its dead-letter exchange routes to no queue, a queue is deeper than its alert.max_depth, a declared queue or shovel is missing, or a shovel or federation link does not run")
	cmd.Flags().BoolVar(&strict, "strict", false, "with --check, fail on warnings too (messages with no consumers, dead letters on their way to a DLQ, a queue not running or on a node that is down)")
	return cmd
}
