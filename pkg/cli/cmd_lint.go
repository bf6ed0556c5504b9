package cli

import "github.com/spf13/cobra"

func newLintCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "lint", Hidden: true}
}
