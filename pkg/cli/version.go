package cli

import (
	"runtime/debug"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
)

// Version is stamped by the linker (-X github.com/mqctl/mqctl/pkg/cli.Version=…);
// "dev" when it is not, and mqctl then reports what the Go toolchain
// recorded in the binary (buildVersion).
var Version = "dev"

// buildVersion is the version mqctl reports (mqctl version, mqctl
// --version, lint's SARIF): Version when the linker stamped it, else the
// build information of the binary.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return formatVersion(Version, info)
}

// formatVersion is the version of a build stamped with stamped ("dev" or
// "" when not) and whose build information is info (nil when there is
// none): stamped itself; else the main module's version (v1.2.3 for
// `go install …@v1.2.3`; "(devel)" for a build in a checkout, whose
// pseudo-version only repeats the revision), then the VCS revision (short),
// the commit's time and "(modified)" when the work tree had changes:
// "(devel) 5db2386 2026-12-02T01:20:48Z (modified)".
func formatVersion(stamped string, info *debug.BuildInfo) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	if info == nil {
		return "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	version := strings.TrimSuffix(info.Main.Version, "+dirty")
	if version == "" || (rev != "" && pseudoVersion(version)) {
		version = "(devel)"
	}
	parts := []string{version}
	if rev != "" {
		parts = append(parts, rev[:min(len(rev), 7)])
	}
	if at != "" {
		parts = append(parts, at)
	}
	if modified {
		parts = append(parts, "(modified)")
	}
	return strings.Join(parts, " ")
}

// pseudoVersion reports whether v is a Go pseudo-version: a base version,
// the commit's time and revision (v0.0.0-20261202012048-5db238607d1b,
// v1.2.4-0.20261202012048-5db238607d1b, v1.2.3-rc.1.0.20261202012048-…),
// and maybe build metadata (+incompatible).
func pseudoVersion(v string) bool {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || !isDigits(v[i+1:], "0123456789abcdef", 12) {
		return false
	}
	rest := v[:i]
	j := strings.LastIndexAny(rest, "-.")
	return j >= 0 && isDigits(rest[j+1:], "0123456789", 14)
}

// isDigits reports whether s is n characters of digits.
func isDigits(s, digits string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune(digits, r) {
			return false
		}
	}
	return true
}

// addVersion gives root a --version flag (without cobra's -v) and a
// version command, which print the same line through the same template:
// "mqctl v1.2.3".
func addVersion(root *cobra.Command) {
	root.Version = buildVersion()
	root.SetVersionTemplate("mqctl {{.Version}}\n")
	root.Flags().Bool("version", false, "print mqctl's version")
	root.AddCommand(&cobra.Command{
		Use:     "version",
		Short:   "Print mqctl's version",
		Example: `  mqctl version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := template.New("version").Parse(cmd.Root().VersionTemplate())
			if err != nil {
				return err
			}
			return t.Execute(cmd.OutOrStdout(), cmd.Root())
		},
	})
}
