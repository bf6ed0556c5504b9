package cli

import "github.com/spf13/cobra"

func newGraphCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "graph", Hidden: true}
}
