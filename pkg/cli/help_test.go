package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasAnExample: each command's --help says what it does
// and shows how to run it (plan, apply and dlq showed no example), and
// every flag an example passes is one the command takes.
func TestEveryCommandHasAnExample(t *testing.T) {
	root := NewRootCmd(Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub)
		}
		if c == root {
			return
		}
		path := c.CommandPath()
		if c.Short == "" {
			t.Errorf("%s: no short description", path)
		}
		examples := c.Example
		if examples == "" {
			examples = c.Long // validate and diff show theirs in the text
		}
		var lines []string
		for _, l := range strings.Split(examples, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, path+" ") || l == path {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			t.Errorf("%s --help shows no example (a line %q)", path, path+" …")
		}
		for _, l := range lines {
			if i := strings.Index(l, " #"); i >= 0 {
				l = l[:i]
			}
			if i := strings.Index(l, " &&"); i >= 0 {
				l = l[:i]
			}
			words := strings.Fields(l)[1:]
			run, _, err := root.Find(words) // the subcommand the example runs
			if err != nil {
				t.Errorf("%s: example %q: %v", path, l, err)
				continue
			}
			for _, w := range words {
				if !strings.HasPrefix(w, "--") {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
				if run.Flags().Lookup(name) == nil && run.InheritedFlags().Lookup(name) == nil {
					t.Errorf("%s: example %q passes --%s, which %s does not take", path, l, name, run.CommandPath())
				}
			}
		}
	}
	walk(root)
}
