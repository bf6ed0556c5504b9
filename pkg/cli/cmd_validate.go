package cli

import (
	"github.com/spf13/cobra"
)

func newValidateCmd(g *globals) *cobra.Command {
	var expanded bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Load, expand and check the topology file(s)",
		Long: `validate loads the topology files, expands sugar (defaults, dead_letter.queue,
retry.delays, retry.backoff) and checks every field, and what the target RabbitMQ
version would refuse or ignore (--rabbitmq-version, default 4.3). Each problem
is printed as file:line:col with what would be accepted; the exit status is 1
when there is any.

  mqctl validate -f topology.yaml
  mqctl validate -f topology/ --expanded     # print the expanded topology as YAML
  mqctl validate -f - -o json < topology.yaml  # print it as JSON

-o json prints the expanded topology as a versioned document (format_version,
docs/validate-json.md), each object with the file, line and column where it is
declared when they are known.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
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
			// What the target broker would refuse is a file error too.
			if err := version.Check(t); err != nil {
				return judgedFor(err, version)
			}
			view := validateView{json: g.output == "json", expanded: expanded, w: cmd.OutOrStdout(), files: g.topologyFiles()}
			return view.write(t)
		},
	}
	g.addTargetVersionFlag(cmd)
	cmd.Flags().BoolVar(&expanded, "expanded", false, "print the expanded topology (sugar written out as plain objects) as YAML")
	return cmd
}
