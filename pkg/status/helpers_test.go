package status

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// load expands a one-vhost file body (under "vhosts: {/: …}").
func load(t *testing.T, body string) *topology.Topology {
	t.Helper()
	src := "version: 1\nvhosts:\n  /:\n" + indent(body, "    ")
	top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
	if err != nil {
		t.Fatalf("load:\n%s\n%v", src, err)
	}
	return top
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}
