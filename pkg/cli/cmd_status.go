package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/status"
	"github.com/mqctl/mqctl/pkg/topology"
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
		Args: noArgs,
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
			view := statusView{json: g.output == "json", w: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(), color: g.useColor()}
			view.restores(pendingRestores(ctx, c, t))
			if err := view.report(r); err != nil {
				return err
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

// pendingRestore is what an apply stopped in the middle of a replace left
// to put back in a vhost: the bindings it took down (missing) and its
// restore lists; or, err, a restore list that could not be read.
type pendingRestore struct {
	vhost   string
	lists   []string
	missing []string
	err     error
}

// pendingRestores finds the bindings that an apply stopped in the middle
// of a replace took down and left to put back (its restore list,
// ownership/restore.go), in the vhosts of t: the queues it replaced show
// as missing, but these bindings, of queues or exchanges the file does not
// declare, show nowhere else. A vhost that cannot be read is left to the
// rest of the status to report.
func pendingRestores(ctx context.Context, c *broker.Client, t *topology.Topology) []pendingRestore {
	var out []pendingRestore
	for _, vh := range t.VhostNames() {
		var xs []struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := c.GetJSON(ctx, &xs, fmt.Sprintf("list the exchanges of vhost %q", vh), vh, "exchanges", vh); err != nil {
			continue
		}
		var lists []string
		var pending []*topology.Binding
		for _, x := range xs {
			if !ownership.IsRestore(x.Name) {
				continue
			}
			bs, err := ownership.RestoreBindings(vh, &topology.Exchange{Name: x.Name, Arguments: x.Arguments})
			if err != nil {
				out = append(out, pendingRestore{vhost: vh, err: err})
				continue
			}
			lists = append(lists, x.Name)
			pending = append(pending, bs...)
		}
		if len(pending) == 0 {
			continue
		}
		var have []*topology.Binding
		if err := c.GetJSON(ctx, &have, fmt.Sprintf("list the bindings of vhost %q", vh), vh, "bindings", vh); err != nil {
			continue
		}
		bound := map[string]bool{}
		for _, b := range have {
			bound[b.Key()] = true
		}
		var missing []string
		seen := map[string]bool{}
		for _, b := range pending {
			if k := b.Key(); !bound[k] && !seen[k] {
				seen[k] = true
				missing = append(missing, bindingText(b))
			}
		}
		if len(missing) > 0 {
			out = append(out, pendingRestore{vhost: vh, lists: lists, missing: missing})
		}
	}
	return out
}

func bindingText(b *topology.Binding) string {
	s := fmt.Sprintf("%s -> %s %s", b.Source, b.DestinationType, b.Destination)
	if b.RoutingKey != "" {
		s += fmt.Sprintf(" [%s]", b.RoutingKey)
	}
	return s
}
