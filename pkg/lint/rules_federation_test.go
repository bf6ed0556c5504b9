package lint

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

func (b *builder) item(k kind.Kind, name string, settings topology.Args) {
	it := &topology.Item{Kind: k, Name: name, Settings: settings, Meta: topology.Meta{Pos: b.pos()}}
	b.v.Items.Put(it)
}

func TestShovelAndFederationRules(t *testing.T) {
	tests := []struct {
		name     string
		id       string
		build    func(b *builder)
		fire     []string // messages' first words (the object names) that must be found
		contains []string
	}{
		{name: "local shovel, both ends declared", id: "MQ403", build: func(b *builder) {
			b.queue("src", nil)
			b.exchange("dst", "direct")
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "src", "dest-uri": []any{"amqp:///%2F"}, "dest-exchange": "dst"})
		}},
		{name: "local shovel, source queue and destination exchange missing", id: "MQ403", build: func(b *builder) {
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp:///", "src-queue": "gone", "dest-uri": "amqp://", "dest-exchange": "nowhere"})
		}, fire: []string{"s", "s"}, contains: []string{`shovel "s" moves messages from queue "gone"`, `to exchange "nowhere"`, "NOT_FOUND"}},
		{name: "remote ends are not this file's", id: "MQ403", build: func(b *builder) {
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://u:pw@other/x", "src-queue": "gone", "dest-uri": []any{"amqp://", "amqp://dc2"}, "dest-queue": "gone"})
		}},
		{name: "another vhost of this broker that the file does not declare is not this file's", id: "MQ403", build: func(b *builder) {
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp:///other", "src-queue": "gone", "dest-uri": "amqp:///other", "dest-queue": "gone"})
		}},
		{name: "another vhost the file declares is checked there", id: "MQ403", build: func(b *builder) {
			b.queue("here", nil) // in this vhost, not in "other"
			o := b.t.Vhost("other")
			o.Queues["there"] = &topology.Queue{Name: "there", Durable: true}
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp:///other", "src-queue": "there", "dest-uri": "amqp:///other", "dest-queue": "here"})
		}, fire: []string{"s"}, contains: []string{`to queue "here" of vhost "other" (dest-uri amqp:///other)`}},
		{name: "URIs naming two vhosts are not checked", id: "MQ403", build: func(b *builder) {
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "q", "dest-uri": []any{"amqp:///", "amqp:///other"}, "dest-queue": "gone"})
			b.queue("q", nil)
		}},
		{name: "default exchanges count as declared", id: "MQ403", build: func(b *builder) {
			b.queue("q", nil)
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "q", "dest-uri": "amqp://", "dest-exchange": "amq.topic"})
		}},
		{name: "set naming a declared upstream", id: "MQ404", build: func(b *builder) {
			b.item(kind.FederationUpstream, "dc2", topology.Args{"uri": "amqp://dc2"})
			b.item(kind.FederationUpstreamSet, "all", topology.Args{"upstreams": []any{map[string]any{"upstream": "dc2"}}})
		}},
		{name: "set naming an unknown upstream", id: "MQ404", build: func(b *builder) {
			b.item(kind.FederationUpstream, "dc2", topology.Args{"uri": "amqp://dc2"})
			b.item(kind.FederationUpstreamSet, "all", topology.Args{"upstreams": []any{map[string]any{"upstream": "dc2"}, map[string]any{"upstream": "dc3"}}})
		}, fire: []string{"all"}, contains: []string{`federation upstream set "all" names upstream "dc3" (member 2)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			// Not yet in the catalogue (analyzers.go): registering them
			// takes cases in ruleCases and new format goldens.
			run := map[string]func(*Pass) []Finding{"MQ403": runShovelEnds, "MQ404": runUpstreamSetUnknown}[tt.id]
			fs := run(&Pass{Vhost: b.v, Vhosts: b.t.Vhosts})
			if len(fs) != len(tt.fire) {
				t.Fatalf("want %d findings of %s, got %+v", len(tt.fire), tt.id, fs)
			}
			var all []string
			for i, f := range fs {
				if f.Object.Name != tt.fire[i] || f.Pos.IsZero() {
					t.Errorf("finding %d is of %q at %v, want %q at its declaration", i, f.Object.Name, f.Pos, tt.fire[i])
				}
				all = append(all, f.Message)
			}
			for _, c := range tt.contains {
				if !strings.Contains(strings.Join(all, "\n"), c) {
					t.Errorf("no finding says %q:\n%s", c, strings.Join(all, "\n"))
				}
			}
		})
	}
}

// federationRuleCases are MQ403's and MQ404's cases in TestRules' form.
func federationRuleCases() []ruleCase {
	return []ruleCase{
		{name: "local shovel, both ends declared", id: "MQ403", build: func(b *builder) {
			b.queue("src", nil)
			b.exchange("dst", "direct")
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "src", "dest-uri": []any{"amqp:///%2F"}, "dest-exchange": "dst"})
		}},
		{name: "local shovel, source queue missing", id: "MQ403", build: func(b *builder) {
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp:///", "src-queue": "gone", "dest-uri": "amqp://u:pw@dc2/x", "dest-queue": "x"})
		}, fire: []string{"s"}, contains: []string{`shovel "s" moves messages from queue "gone"`}},
		{name: "set naming a declared upstream", id: "MQ404", build: func(b *builder) {
			b.item(kind.FederationUpstream, "dc2", topology.Args{"uri": "amqp://dc2"})
			b.item(kind.FederationUpstreamSet, "all", topology.Args{"upstreams": []any{map[string]any{"upstream": "dc2"}}})
		}},
		{name: "set naming an unknown upstream", id: "MQ404", build: func(b *builder) {
			b.item(kind.FederationUpstreamSet, "all", topology.Args{"upstreams": []any{map[string]any{"upstream": "dc3"}}})
		}, fire: []string{"all"}, contains: []string{`names upstream "dc3"`}},
	}
}
