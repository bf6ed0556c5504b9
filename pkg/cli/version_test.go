package cli

import (
	"regexp"
	"runtime/debug"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	vcs := func(version, rev, at, modified string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/mqctl/mqctl", Version: version}}
		for _, s := range []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}} {
			if s.Value != "" {
				info.Settings = append(info.Settings, s)
			}
		}
		return info
	}
	const rev, at = "5db238607d1bece18025eecc9a82b83e1094acb5", "2026-12-02T01:20:48Z"
	tests := []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		{"stamped by the Makefile", "v1.2.3", vcs("(devel)", rev, at, "true"), "v1.2.3"},
		{"stamped with git describe of a checkout", "5db2386-dirty", nil, "5db2386-dirty"},
		{"go build in a checkout with changes", "dev", vcs("v0.0.0-20261202012048-5db238607d1b+dirty", rev, at, "true"), "(devel) 5db2386 " + at + " (modified)"},
		{"go build in a clean checkout", "dev", vcs("v0.0.0-20261202012048-5db238607d1b", rev, at, "false"), "(devel) 5db2386 " + at},
		{"go build after a tag", "dev", vcs("v1.2.4-0.20261202012048-5db238607d1b", rev, at, "false"), "(devel) 5db2386 " + at},
		{"go build at a tag", "dev", vcs("v1.2.3", rev, at, "false"), "v1.2.3 5db2386 " + at},
		{"go build at a tag, with changes", "dev", vcs("v1.2.3+dirty", rev, at, "true"), "v1.2.3 5db2386 " + at + " (modified)"},
		{"go build -buildvcs=false", "dev", vcs("(devel)", "", "", ""), "(devel)"},
		{"go install of a release", "dev", vcs("v1.2.3", "", "", ""), "v1.2.3"},
		{"go install of a commit: the pseudo-version is all there is", "dev", vcs("v0.0.0-20261202012048-5db238607d1b", "", "", ""), "v0.0.0-20261202012048-5db238607d1b"},
		{"no module version (a test binary)", "", vcs("", "", "", ""), "(devel)"},
		{"no build information", "dev", nil, "(devel)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatVersion(tt.stamped, tt.info); got != tt.want {
				t.Errorf("formatVersion(%q, …) = %q, want %q", tt.stamped, got, tt.want)
			}
		})
	}
}

func TestPseudoVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.0.0-20261202012048-5db238607d1b":        true,
		"v1.2.4-0.20261202012048-5db238607d1b":      true,
		"v1.2.3-rc.1.0.20261202012048-5db238607d1b": true,
		"v1.2.3":                                          false,
		"v1.2.3-rc.1":                                     false,
		"(devel)":                                         false,
		"v0.0.0-2026120201204-5db238607d1b":               false, // 13 digits
		"v0.0.0-20261202012048-5db238607d1":               false, // 11 hex digits
		"v0.0.0-20261202012048-5DB238607D1B":              false,
		"20261202012048-5db238607d1b":                     false,
		"v1.2.3-beta-20261202012048x-5db238607d1b":        false,
		"v2.0.0-20261202012048-5db238607d1b+incompatible": true,
	} {
		if got := pseudoVersion(v); got != want {
			t.Errorf("pseudoVersion(%q) = %t, want %t", v, got, want)
		}
	}
}

// TestVersionFlag: mqctl --version and mqctl version print the same line,
// on stdout, and exit 0.
func TestVersionFlag(t *testing.T) {
	flagOut, flagErr, flagCode := runMain(nil, "--version")
	cmdOut, cmdErr, cmdCode := runMain(nil, "version")
	if flagCode != 0 || cmdCode != 0 || flagErr != "" || cmdErr != "" {
		t.Fatalf("--version: exit %d, stderr %q; version: exit %d, stderr %q", flagCode, flagErr, cmdCode, cmdErr)
	}
	if flagOut != cmdOut {
		t.Errorf("--version prints %q, version prints %q", flagOut, cmdOut)
	}
	if want := "mqctl " + buildVersion() + "\n"; cmdOut != want || !regexp.MustCompile(`^mqctl \S[^\n]*\n$`).MatchString(cmdOut) {
		t.Errorf("version prints %q, want %q", cmdOut, want)
	}
	// The flag is the root's: a command does not take it, and -v is not
	// its shorthand.
	if _, stderr, code := runMain(nil, "-v"); code != 1 || stderr != "mqctl: unknown shorthand flag: 'v' in -v\n" {
		t.Errorf("-v: exit %d, stderr %q", code, stderr)
	}
}
