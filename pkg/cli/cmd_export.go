package cli

import "github.com/spf13/cobra"

func newExportCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "export", Hidden: true}
}
