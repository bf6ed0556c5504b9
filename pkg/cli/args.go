package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/internal/shell"
)

// noArgs is cobra.NoArgs with what to write instead: cobra's own answer
// to "mqctl lint topology.yaml" was `unknown command "topology.yaml" for
// "mqctl lint"`, which reads as though lint were unknown and says nothing
// of -f. A file goes to -f (a definitions file to export's --from), and
// route's exchange and routing key to their flags.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	path := cmd.CommandPath()
	fix := fmt.Sprintf("see %s --help", path)
	switch {
	case cmd.Name() == "export" && looksLikeFile(args[0]):
		fix = fmt.Sprintf("a RabbitMQ definitions file is read with --from: %s --from %s", path, shell.Quote(args[0]))
	case looksLikeFile(args[0]):
		fix = fmt.Sprintf("give the topology file with -f: %s -f %s", path, strings.Join(shell.Words(args), " -f "))
	case cmd.Name() == "route" && len(args) <= 2:
		fix = fmt.Sprintf("give the exchange and the routing key as flags: %s --exchange %s --routing-key %s", path, shell.Quote(args[0]), shell.Quote(append(args, "KEY")[1]))
	}
	return fmt.Errorf("%s takes no arguments, and was given %s: %s", path, strings.Join(shell.Words(args), " "), fix)
}

// looksLikeFile reports whether arg names a topology or definitions file
// (or a directory of them): one that exists, or a name that ends as one.
func looksLikeFile(arg string) bool {
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(strings.ToLower(arg), ext) {
			return true
		}
	}
	_, err := os.Stat(arg)
	return err == nil
}
