package kind_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// offline are the packages that work on files and models only: validate,
// lint, graph, export and a plan's diff run without a broker, so none of
// them may depend, however indirectly, on a network client.
var offline = []string{
	"github.com/mqctl/mqctl/pkg/plan",
	"github.com/mqctl/mqctl/pkg/loader",
	"github.com/mqctl/mqctl/pkg/lint",
	"github.com/mqctl/mqctl/pkg/export",
	"github.com/mqctl/mqctl/pkg/route",
	"github.com/mqctl/mqctl/pkg/pattern",
	"github.com/mqctl/mqctl/pkg/graph",
	"github.com/mqctl/mqctl/pkg/topology",
	"github.com/mqctl/mqctl/pkg/kind",
	"github.com/mqctl/mqctl/pkg/definitions",
	"github.com/mqctl/mqctl/pkg/rmqversion",
	"github.com/mqctl/mqctl/pkg/ownership",
	"github.com/mqctl/mqctl/pkg/flow",
	"github.com/mqctl/mqctl/pkg/gitref",
	"github.com/mqctl/mqctl/pkg/planjson",
	"github.com/mqctl/mqctl/pkg/routejson",
}

// network are the packages that talk to a broker, and net, under them
// (an offline package parses a host and port with net/url and net/netip).
var network = []string{
	"net",
	"net/http",
	"github.com/michaelklishin/rabbit-hole/v2",
	"github.com/rabbitmq/amqp091-go",
}

// TestOfflinePackagesStayOffline fails, naming the chain of imports, when
// an offline package depends on a network client (pkg/broker's I/O
// belongs in pkg/broker).
func TestOfflinePackagesStayOffline(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the packages' imports with")
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, offline...)
	out, err := exec.Command(goBin, args...).Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderrOf(err))
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	for _, root := range offline {
		if _, ok := imports[root]; !ok {
			t.Errorf("go list did not list %s", root)
		}
		for _, bad := range network {
			if chain := importChain(imports, root, bad); chain != nil {
				t.Errorf("%s depends on %s, a network client, which it must not (broker I/O belongs in pkg/broker): %s", root, bad, strings.Join(chain, " → "))
			}
		}
	}
}

// importChain is a shortest chain of imports from "from" to "to" (both
// included), nil when from does not depend on to.
func importChain(imports map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, next := range imports[p] {
			if _, seen := prev[next]; !seen {
				prev[next] = p
				queue = append(queue, next)
			}
		}
	}
	return nil
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
