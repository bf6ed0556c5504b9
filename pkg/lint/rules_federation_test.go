package lint

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
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
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "gone", "dest-uri": "amqp://", "dest-exchange": "nowhere"})
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
		// A shovel's amqp:// is the default vhost, not the shovel's own:
		// measured on 4.3.6, a shovel of vhost x1 with src-uri amqp:// and
		// src-queue work.dlq declared and read queue work.dlq of "/".
		{name: "amqp:// in another vhost's shovel is the default vhost", id: "MQ403", build: func(b *builder) {
			x := b.t.Vhost("x1")
			x.Queues["work.dlq"] = &topology.Queue{Name: "work.dlq", Durable: true}
			x.Exchanges["out"] = &topology.Exchange{Name: "out", Type: "fanout", Durable: true}
			x.Items.Put(&topology.Item{Kind: kind.Shovel, Name: "s", Settings: topology.Args{"src-uri": "amqp://", "src-queue": "work.dlq", "dest-uri": "amqp://", "dest-exchange": "out"}, Meta: topology.Meta{Pos: b.pos()}})
		}, fire: []string{"s", "s"}, contains: []string{
			`shovel "s" of vhost "x1" moves messages from queue "work.dlq" of vhost "/" (src-uri amqp://), but the file declares queue "work.dlq" in vhost "x1"`,
			`src-uri names the default vhost "/"`, `declares queue "work.dlq" in vhost "/" itself`, "Write src-uri: amqp:///x1",
			`to exchange "out" of vhost "/"`, "Write dest-uri: amqp:///x1"}},
		{name: "the default vhost's own shovel with amqp:// is fine", id: "MQ403", build: func(b *builder) {
			b.queue("q", nil)
			b.t.Vhost("x1").Queues["q"] = &topology.Queue{Name: "q", Durable: true}
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "q", "dest-uri": "amqp://", "dest-queue": "q"})
		}},
		{name: "a vhost named with escapes", id: "MQ403", build: func(b *builder) {
			x := b.t.Vhost("team a/b")
			x.Queues["q"] = &topology.Queue{Name: "q", Durable: true}
			x.Items.Put(&topology.Item{Kind: kind.Shovel, Name: "s", Settings: topology.Args{"src-uri": "amqp:///other", "src-queue": "q", "dest-uri": "amqp:///team%20a%2Fb", "dest-queue": "q"}, Meta: topology.Meta{Pos: b.pos()}})
		}, fire: []string{"s"}, contains: []string{`of vhost "other" (src-uri amqp:///other)`, "Write src-uri: amqp:///team%20a%2Fb"}},
		// A local shovel (RabbitMQ 4.2+) is always this broker: its URI
		// gives only the user and the vhost (measured on 4.3.6: a local
		// shovel with src-uri amqp://guest:guest@nohost.invalid:9999/ls1
		// runs, and moves queue a of vhost ls1).
		{name: "a local shovel's URI with a host is this broker", id: "MQ403", build: func(b *builder) {
			b.queue("q", nil)
			b.t.Vhost("x1").Queues["q"] = &topology.Queue{Name: "q", Durable: true}
			b.item(kind.Shovel, "s", topology.Args{"src-protocol": "local", "src-uri": "amqp://u:pw@elsewhere/x1", "src-queue": "q",
				"dest-protocol": "local", "dest-uri": "amqp://u:pw@elsewhere", "dest-queue": "gone"})
		}, fire: []string{"s"}, contains: []string{`to queue "gone" of this vhost (dest-uri amqp://u:***@elsewhere)`}},
		{name: "an amqp091 shovel's URI with a host is another broker's", id: "MQ403", build: func(b *builder) {
			b.item(kind.Shovel, "s", topology.Args{"src-protocol": "local", "src-uri": "amqp://", "src-queue": "gone",
				"dest-uri": "amqp://u:pw@elsewhere", "dest-queue": "gone"})
		}, fire: []string{"s"}, contains: []string{`from queue "gone" of this vhost (src-uri amqp://)`}},
		// amqp:/// is vhost "" (the path's rest), not the default vhost:
		// RabbitMQ refuses such a shovel (the loader does too).
		{name: "amqp:/// is vhost \"\"", id: "MQ403", build: func(b *builder) {
			b.queue("q", nil)
			b.t.Vhost("x1")
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp:///", "src-queue": "q", "dest-uri": "amqp://", "dest-queue": "q"})
		}},
		{name: "URIs naming two vhosts are not checked", id: "MQ403", build: func(b *builder) {
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "q", "dest-uri": []any{"amqp://", "amqp:///other"}, "dest-queue": "gone"})
			b.queue("q", nil)
		}},
		{name: "default exchanges count as declared", id: "MQ403", build: func(b *builder) {
			b.queue("q", nil)
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "q", "dest-uri": "amqp://", "dest-exchange": "amq.topic"})
		}},
		{name: "a shovel that deletes itself", id: "MQ407", build: func(b *builder) {
			b.queue("dlq", nil)
			b.queue("work", nil)
			b.item(kind.Shovel, "replay", topology.Args{"src-uri": "amqp://", "src-queue": "dlq", "dest-uri": "amqp://", "dest-queue": "work", "src-delete-after": "queue-length"})
			b.item(kind.Shovel, "count", topology.Args{"src-uri": "amqp://", "src-queue": "dlq", "dest-uri": "amqp://", "dest-queue": "work", "delete-after": 10})
			b.item(kind.Shovel, "forever", topology.Args{"src-uri": "amqp://", "src-queue": "dlq", "dest-uri": "amqp://", "dest-queue": "work", "src-delete-after": "never"})
			b.item(kind.Shovel, "timed", topology.Args{"src-uri": "amqp://", "src-queue": "dlq", "dest-uri": "amqp://", "dest-queue": "work", "src-delete-after-duration": 600})
		}, fire: []string{"count", "replay", "timed"}, contains: []string{
			`shovel "timed" deletes itself once it has run for 600 seconds (src-delete-after-duration: 600)`,
			`shovel "replay" deletes itself once it has moved the messages its source queue held when it started (src-delete-after: queue-length)`,
			`plan holds it back as finished while the file keeps it as applied, so no apply moves messages out of queue "dlq" again`, "To run it again, change one of its settings or its name",
			`(delete-after: 10)`}},
		{name: "an amqp10 destination's properties, ignored from 4.2", id: "MQ408", build: func(b *builder) {
			b.item(kind.Shovel, "bridge", topology.Args{"src-uri": "amqp://", "src-queue": "q", "dest-protocol": "amqp10", "dest-uri": "amqp://dc2",
				"dest-address": "/queues/q", "dest-properties": map[string]any{"content_type": "application/json"}, "dest-application-properties": map[string]any{"origin": "dc1"}})
			b.item(kind.Shovel, "marks", topology.Args{"src-uri": "amqp://", "src-queue": "q", "dest-protocol": "amqp10", "dest-uri": "amqp://dc2",
				"dest-address": "/queues/q", "dest-add-forward-headers": true})
		}, fire: []string{"bridge"}, contains: []string{
			`shovel "bridge" sets dest-application-properties and dest-properties, which RabbitMQ 4.3 accepts and ignores`,
			"so they arrive without them", "Remove dest-application-properties and dest-properties"}},
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
			run := map[string]func(*Pass) []Finding{"MQ403": runShovelEnds, "MQ404": runUpstreamSetUnknown, "MQ407": runSelfDeletingShovel, "MQ408": runShovelIgnoredSettings}[tt.id]
			var fs []Finding
			for _, name := range b.t.VhostNames() {
				fs = append(fs, run(&Pass{Vhost: b.t.Vhosts[name], Vhosts: b.t.Vhosts, Version: rmqversion.Default})...)
			}
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
			b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "gone", "dest-uri": "amqp://u:pw@dc2/x", "dest-queue": "x"})
		}, fire: []string{"s"}, contains: []string{`shovel "s" moves messages from queue "gone"`}},
		{name: "set naming a declared upstream", id: "MQ404", build: func(b *builder) {
			b.item(kind.FederationUpstream, "dc2", topology.Args{"uri": "amqp://dc2"})
			b.item(kind.FederationUpstreamSet, "all", topology.Args{"upstreams": []any{map[string]any{"upstream": "dc2"}}})
		}},
		{name: "set naming an unknown upstream", id: "MQ404", build: func(b *builder) {
			b.item(kind.FederationUpstreamSet, "all", topology.Args{"upstreams": []any{map[string]any{"upstream": "dc3"}}})
		}, fire: []string{"all"}, contains: []string{`names upstream "dc3"`}},
		{name: "a shovel that deletes itself", id: "MQ407", build: func(b *builder) {
			b.queue("dlq", nil)
			b.item(kind.Shovel, "replay", topology.Args{"src-uri": "amqp://", "src-queue": "dlq", "dest-uri": "amqp://", "dest-queue": "dlq", "src-delete-after": "queue-length"})
		}, fire: []string{"replay"}, contains: []string{"deletes itself"}},
		{name: "a shovel that keeps running", id: "MQ407", build: func(b *builder) {
			b.queue("dlq", nil)
			b.item(kind.Shovel, "keep", topology.Args{"src-uri": "amqp://", "src-queue": "dlq", "dest-uri": "amqp://", "dest-queue": "dlq"})
		}},
	}
}
