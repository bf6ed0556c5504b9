package cli

import "github.com/spf13/cobra"

func newRouteCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "route", Hidden: true}
}
