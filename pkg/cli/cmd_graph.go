package cli

import (
	"bytes"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/graph"
)

func newGraphCmd(g *globals) *cobra.Command {
	format := graph.FormatMermaid
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Draw the topology as a Mermaid or Graphviz DOT diagram",
		Long: `Draw the expanded topology: exchanges (hexagons), queues (cylinders; dead-letter
queues red, delay tiers yellow), bindings labelled with their routing keys, alternate
exchanges, dead-letter edges (dashed) and delay-tier return edges (dotted, "after 10s").
Each vhost is drawn as its own subgraph. The diagram is written to stdout.`,
		Example: `  mqctl graph > topology.mmd                      # Mermaid, e.g. for a README
  mqctl graph --format dot | dot -Tsvg > topology.svg
  mqctl graph -f examples/orders --vhost /`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := graph.CheckFormat(format); err != nil {
				return err
			}
			if err := g.checkOutput("text"); err != nil {
				return err
			}
			version, err := g.targetVersion()
			if err != nil {
				return err
			}
			t, err := g.loadOffline()
			if err != nil {
				return err
			}
			// A value the file took from the environment (a binding's key
			// or header, ${VAR}) may be a secret: the diagram shows what
			// the file wrote, in its quotes.
			var buf bytes.Buffer
			rerr := graph.Render(&buf, t, format, version)
			if _, err := io.WriteString(cmd.OutOrStdout(), t.Env.Quoted(buf.String())); err != nil {
				return err
			}
			return rerr
		},
	}
	cmd.Flags().StringVar(&format, "format", format, "diagram format: "+strings.Join(graph.Formats(), " or "))
	g.addTargetVersionFlag(cmd)
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return graph.Formats(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}
