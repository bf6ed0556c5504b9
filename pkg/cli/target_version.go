package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// addTargetVersionFlag gives an offline command --rabbitmq-version: the
// RabbitMQ version it judges the file for (live commands use the version
// the broker reports).
func (g *globals) addTargetVersionFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&g.rabbitmqVersion, "rabbitmq-version", "",
		fmt.Sprintf("RabbitMQ version to judge the file for: 3.10, 4.0, 4.1, 4.2 or 4.3 (env %s; default %s)", rmqversion.EnvVar, rmqversion.Default))
}

// targetVersion is --rabbitmq-version, else MQCTL_RABBITMQ_VERSION, else
// rmqversion.Default.
func (g *globals) targetVersion() (rmqversion.Version, error) {
	raw, from := g.rabbitmqVersion, "--rabbitmq-version"
	if raw == "" {
		if v, ok := g.env.LookupEnv(rmqversion.EnvVar); ok && v != "" {
			raw, from = v, rmqversion.EnvVar
		}
	}
	if raw == "" {
		return rmqversion.Default, nil
	}
	v, err := rmqversion.Parse(raw)
	if err != nil {
		return rmqversion.Version{}, fmt.Errorf("%s: %w", from, err)
	}
	if !v.Supported() {
		return rmqversion.Version{}, fmt.Errorf("%s %s: mqctl judges files for RabbitMQ %s to %d.x; give one of those", from, raw, rmqversion.Oldest, rmqversion.Newest.Major)
	}
	return v, nil
}

// judgedFor is err, what the target version refuses of a file (an offline
// command's rmqversion.Version.Check or Prepare), with the version it was
// judged for and how to choose another.
func judgedFor(err error, v rmqversion.Version) error {
	return fmt.Errorf("%w\n(judged for RabbitMQ %s: --rabbitmq-version or %s chooses another)", err, v, rmqversion.EnvVar)
}
