package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
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
		Args: cobra.NoArgs,
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
			w := cmd.OutOrStdout()
			switch {
			case g.output == "json":
				if err := writeValidateJSON(w, t); err != nil {
					return fmt.Errorf("writing JSON: %w", err)
				}
				return nil
			case expanded:
				return export.WriteYAML(w, t, export.Options{Sugar: false, MaskSecrets: true})
			default:
				return writeValidateSummary(w, validateFiles(g), t)
			}
		},
	}
	g.addTargetVersionFlag(cmd)
	cmd.Flags().BoolVar(&expanded, "expanded", false, "print the expanded topology (sugar written out as plain objects) as YAML")
	return cmd
}

// validateFiles is the -f list as the user gave it, or the default file.
func validateFiles(g *globals) []string {
	if len(g.files) == 0 {
		return []string{"topology.yaml"}
	}
	return g.files
}

// writeValidateSummary prints "<files>: OK — 1 vhost, 2 exchanges, …".
func writeValidateSummary(w io.Writer, files []string, t *topology.Topology) error {
	var exchanges, queues, bindings, policies int
	for _, v := range t.Vhosts {
		exchanges += len(v.Exchanges)
		queues += len(v.Queues)
		bindings += len(v.Bindings)
		for _, k := range kind.PolicyKinds() {
			policies += len(v.PoliciesOf(k))
		}
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f
		if f == "-" {
			names[i] = loader.StdinName
		}
	}
	_, err := fmt.Fprintf(w, "%s: OK — %s, %s, %s, %s, %s\n", strings.Join(names, ", "),
		pluralCount(len(t.Vhosts), "vhost"), pluralCount(exchanges, "exchange"), pluralCount(queues, "queue"),
		pluralCount(bindings, "binding"), pluralCount(policies, "policy"))
	return err
}

func pluralCount(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	default:
		return fmt.Sprintf("%d %ss", n, noun)
	}
}
