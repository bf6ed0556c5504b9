package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/lint"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

func newLintCmd(g *globals) *cobra.Command {
	var format, failOn string
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Find mistakes that make messaging fail silently",
		Long: fmt.Sprintf(`lint runs mqctl's rule catalogue over the expanded topology: dead letters that
go nowhere, delay queues that send retries to the wrong place, unbounded queues,
bindings to undeclared objects, arguments a queue type refuses, and more.

Rules that depend on the RabbitMQ version judge the file for
--rabbitmq-version (env %s, default %s) and say so: on
4.x a quorum queue without a dead-letter exchange and a policy with ha-*
keys are errors.

Severities can be changed in the file (lint: {rules: {MQ101: off}}), and one
finding is silenced with a "# mqctl:ignore MQ101" comment on its object.
lint exits 1 when a finding is at or above --fail-on.`, rmqversion.EnvVar, rmqversion.Default),
		Example: `  mqctl lint
  mqctl lint -f topology.yaml --format sarif > mqctl.sarif
  mqctl lint --format github --fail-on warning
  mqctl lint --rabbitmq-version 3.10`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := lintFormat(cmd, g, format)
			if err != nil {
				return err
			}
			min, err := parseFailOn(failOn)
			if err != nil {
				return err
			}
			ver, err := g.targetVersion()
			if err != nil {
				return err
			}
			t, err := g.loadOffline()
			if err != nil {
				return err
			}
			findings, err := lint.Run(t, lint.Options{Version: ver})
			if err != nil {
				return err
			}
			if err := lint.Write(cmd.OutOrStdout(), f, findings, nil, cmd.Root().Version); err != nil {
				return fmt.Errorf("writing findings: %w", err)
			}
			if lint.AtLeast(findings, min) {
				return &ExitCodeError{Code: ExitError}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "output format: text, json, sarif or github (default text; -o json is the same as --format json)")
	cmd.Flags().StringVar(&failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: error, warning, info or none")
	g.addTargetVersionFlag(cmd)
	return cmd
}

// lintFormat resolves --format and the global -o (an alias for text and json).
func lintFormat(cmd *cobra.Command, g *globals, format string) (lint.Format, error) {
	outputSet := cmd.Flags().Changed("output")
	if format == "" {
		if !outputSet {
			return lint.FormatText, nil
		}
		if err := g.checkOutput("text", "json"); err != nil {
			return "", fmt.Errorf("%w (or --format text|json|sarif|github)", err)
		}
		return lint.Format(g.output), nil
	}
	f, err := lint.ParseFormat(format)
	if err != nil {
		return "", fmt.Errorf("--format: %w", err)
	}
	if outputSet && g.output != string(f) {
		return "", fmt.Errorf("--format %s and -o %s disagree: give only one of them", format, g.output)
	}
	return f, nil
}

func parseFailOn(s string) (lint.Severity, error) {
	if strings.EqualFold(s, "none") {
		return lint.Off, nil
	}
	sev, err := lint.ParseSeverity(strings.ToLower(s))
	if err != nil || sev == lint.Off {
		return lint.Off, fmt.Errorf("--fail-on %q: use error, warning, info or none", s)
	}
	return sev, nil
}
