package cli

import "github.com/spf13/cobra"

func newValidateCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "validate", Hidden: true}
}
