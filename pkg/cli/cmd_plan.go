package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

func newPlanCmd(g *globals) *cobra.Command {
	var (
		detailed      bool
		out           string
		listUnmanaged bool
	)
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would change on the live broker",
		Long: `plan reads the live broker through the management API, diffs it against the
file and prints the changes apply would make: + create, ~ update, -/+ replace,
- delete, with before → after for every changed field.

Exit codes: 0 success; 1 error; with --detailed-exitcode, 0 no changes,
1 error, 2 changes. --out FILE saves the plan for "mqctl apply FILE".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			desired, c, l, err := g.loadAndRead(ctx)
			if err != nil {
				return err
			}
			p, _, err := planFor(ctx, c, desired, l, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			noteTransientQueues(c, p, cmd.ErrOrStderr())
			if hasStakes(p) {
				err := refreshStakesOver(ctx, c, p)
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "mqctl: note: %v; the messages at stake shown come from the management API's statistics, which lag by a few seconds\n", err)
				}
			}
			w := cmd.OutOrStdout()
			if g.output == "json" {
				err = plan.WriteJSON(w, p)
			} else {
				err = plan.WriteText(w, p, plan.RenderOptions{Color: g.useColor(), ListUnmanaged: listUnmanaged})
			}
			if err != nil {
				return err
			}
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("save the plan: %w", err)
				}
				if err := plan.WriteJSON(f, p); err != nil {
					f.Close()
					return fmt.Errorf("save the plan to %s: %w", out, err)
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("save the plan to %s: %w", out, err)
				}
				if g.output != "json" {
					fmt.Fprintf(w, "\nSaved the plan to %s: run \"mqctl apply %s\" to apply exactly these changes.\n", out, out)
				}
			}
			if detailed && !p.Empty() {
				return &ExitCodeError{Code: ExitChanges}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&detailed, "detailed-exitcode", false, "exit 2 when there are changes, 0 when there are none")
	cmd.Flags().StringVar(&out, "out", "", "save the plan to FILE for a later \"mqctl apply FILE\"")
	cmd.Flags().BoolVar(&listUnmanaged, "list-unmanaged", false, "list every unmanaged object instead of counting them")
	return cmd
}

// peeks are AMQP connections that read exact queue depths for a plan;
// unlike apply's, they take no lock.
type peeks struct {
	opts  lock.Options
	conns map[string]*lock.Lock
}

// refreshStakesOver reads the messages at stake over AMQP, which is exact
// where the management API's statistics lag.
func refreshStakesOver(ctx context.Context, c *broker.Client, p *plan.Plan) error {
	amqpURL, err := c.AMQPURL(ctx, "")
	if err != nil {
		return err
	}
	pk := newPeeks(c, amqpURL)
	defer pk.close()
	return refreshStakes(ctx, p, pk.inspect)
}

func newPeeks(c *broker.Client, amqpURL string) *peeks {
	opts := lock.Options{URL: amqpURL, Name: lock.DefaultName("plan")}
	if strings.HasPrefix(amqpURL, "amqps:") {
		opts.TLS = c.TLSConfig()
	}
	return &peeks{opts: opts, conns: map[string]*lock.Lock{}}
}

func (p *peeks) inspect(_ context.Context, vhost, queue, queueType string) (lock.QueueState, error) {
	conn, ok := p.conns[vhost]
	if !ok {
		var err error
		if conn, err = lock.Peek(vhost, p.opts); err != nil {
			return lock.QueueState{}, err
		}
		p.conns[vhost] = conn
	}
	if queueType == topology.QueueStream {
		// plan does not read streams: the probe would show as a consumer
		// in the statistics for a few seconds and make an apply that
		// follows refuse the stream's delete. apply reads it.
		return lock.QueueState{Exists: true}, nil
	}
	return conn.Inspect(queue)
}

func (p *peeks) close() {
	for vh, c := range p.conns {
		_ = c.Release()
		delete(p.conns, vh)
	}
}
