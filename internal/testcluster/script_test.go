package testcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tests' scripts/cluster (StopNode, StartNode) addresses the nodes
// scripts/cluster env was printed for, even when the variables that
// chose them were given only to that command (MQCTL_PORT_OFFSET=3000
// scripts/cluster env): it ran for the default ports, another cluster's
// or none.
func TestScriptAddressesTheClusterOfEnv(t *testing.T) {
	repo, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version, offset, want string
	}{
		{"4.3", "3000", "version=4.3 offset=3000 amqp=8681 mgmt=18681 dir=.cluster"},
		{"4.0", "", "version=4.0 offset=0 amqp=5881 mgmt=15881 dir=.cluster-4.0"},
	} {
		cmd := exec.Command(filepath.Join(repo, "scripts", "cluster"), "env")
		cmd.Env = append(os.Environ(), "MQCTL_RABBITMQ_VERSION="+tc.version, "MQCTL_PORT_OFFSET="+tc.offset, "MQCTL_CLUSTER_DIR=",
			"MQCTL_CLUSTER_AMQP_PORT=", "MQCTL_CLUSTER_AMQPS_PORT=", "MQCTL_CLUSTER_MGMT_PORT=", "MQCTL_CLUSTER_MGMTS_PORT=", "MQCTL_CLUSTER_DIST_PORT=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("scripts/cluster env: %v", err)
		}
		// What eval of the env's output leaves in the tests' environment.
		for _, k := range []string{"MQCTL_PORT_OFFSET", "MQCTL_RABBITMQ_VERSION", "MQCTL_CLUSTER_DIR", "MQCTL_CLUSTER_AMQP_PORT", "MQCTL_CLUSTER_MGMT_PORT"} {
			t.Setenv(k, "")
		}
		for _, l := range strings.Split(string(out), "\n") {
			l, _, _ = strings.Cut(l, "   #")
			if k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "="); ok && strings.HasPrefix(l, "export ") {
				t.Setenv(k, strings.Trim(v, `"`))
			}
		}
		// A stand-in for the script, saying which nodes it would address.
		fake := t.TempDir()
		if err := os.MkdirAll(filepath.Join(fake, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\necho \"version=$MQCTL_RABBITMQ_VERSION offset=${MQCTL_PORT_OFFSET:-0} amqp=$MQCTL_CLUSTER_AMQP_PORT mgmt=$MQCTL_CLUSTER_MGMT_PORT dir=$(basename \"$MQCTL_CLUSTER_DIR\")\"\n"
		if err := os.WriteFile(filepath.Join(fake, "scripts", "cluster"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		c := &Cluster{repo: fake}
		got, err := c.script("stop-node", "1")
		if err != nil || strings.TrimSpace(got) != tc.want {
			t.Errorf("MQCTL_RABBITMQ_VERSION=%s MQCTL_PORT_OFFSET=%s scripts/cluster env, then the tests' stop-node: %q, %v; want the script run for %s", tc.version, tc.offset, got, err, tc.want)
		}
	}
}
