package rmqversion_test

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestCheckURIVhosts: a URI without a host naming a vhost the file does
// not declare is judged by the broker's answer; a host, or a vhost of
// the file, is not asked about; an upstream's URI only from 4.3.3, where
// its vhost "" is refused without asking.
func TestCheckURIVhosts(t *testing.T) {
	top := topology.New()
	v := top.Vhost("orders")
	top.Vhost("billing")
	put := func(k kind.Kind, name string, s topology.Args) {
		v.Items.Put(&topology.Item{Kind: k, Name: name, Settings: s})
	}
	put(kind.Shovel, "in", topology.Args{"src-uri": "amqp:///legacy", "src-queue": "q", "dest-uri": "amqp:///billing", "dest-queue": "q"})
	put(kind.Shovel, "twice", topology.Args{"src-uri": []any{"amqp:///legacy", "amqp://h/gone"}, "src-queue": "q", "dest-uri": "amqp://", "dest-queue": "q"})
	put(kind.FederationUpstream, "up", topology.Args{"uri": []any{"amqp:///", "amqp:///legacy"}})
	var asked []string
	judge := func(vhost string) string {
		asked = append(asked, vhost)
		if vhost == "legacy" {
			return "no such vhost"
		}
		return ""
	}
	for _, c := range []struct {
		version string
		want    []string
	}{
		{"4.3.2", []string{`shovel "in" in vhost "orders": src-uri`, `shovel "twice" in vhost "orders": src-uri`}},
		{"4.3.3", []string{`shovel "in" in vhost "orders": src-uri`, `shovel "twice" in vhost "orders": src-uri`,
			`federation upstream "up" in vhost "orders": uri: RabbitMQ 4.3 refuses a federation upstream whose URI without a host names a vhost the user writing it cannot connect to (HTTP 400 may not connect to vhost), and uri names vhost "": no broker has vhost ""; write amqp:// in uri for the default vhost "/"`,
			`federation upstream "up" in vhost "orders": uri: RabbitMQ 4.3 refuses a federation upstream whose URI without a host names a vhost the user writing it cannot connect to (HTTP 400 may not connect to vhost), and uri names vhost "legacy": no such vhost`}},
	} {
		asked = nil
		err := rmqversion.MustParse(c.version).CheckURIVhosts(top, judge)
		if err == nil {
			t.Fatalf("%s: no refusal", c.version)
		}
		lines := strings.Split(strings.TrimSpace(err.Error()), "\n")[1:]
		if len(lines) != len(c.want) {
			t.Fatalf("%s: %d refusals, want %d:\n%v", c.version, len(lines), len(c.want), err)
		}
		for i, w := range c.want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("%s: refusal %d:\n%s\nwant it to say %s", c.version, i, lines[i], w)
			}
		}
		for _, a := range asked {
			if a != "legacy" && a != "/" { // amqp:// is the default vhost, which the file does not declare
				t.Errorf("%s: asked the broker about vhost %q", c.version, a)
			}
		}
	}
}
