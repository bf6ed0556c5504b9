package lint

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

func itemFinding(it *topology.Item, format string, args ...any) Finding {
	return Finding{Object: Object{string(it.Kind), it.Name}, Pos: it.Pos, objMeta: it.Meta, Message: fmt.Sprintf(format, args...)}
}

// MQ403: a shovel whose source or destination on this broker, in a vhost
// the file declares, is not declared in the file.
func runShovelEnds(p *Pass) []Finding {
	var out []Finding
	v := p.Vhost
	for _, name := range v.Items.Names(kind.Shovel) {
		it := v.Items.Get(kind.Shovel, name)
		check := func(uriKey, key, what string) {
			obj, ok := it.Settings.String(key)
			if !ok || obj == "" {
				return
			}
			vn, local := kind.ShovelLocalVhost(it.Settings, uriKey)
			if !local || vn == "" {
				return // vhost "": RabbitMQ refuses the shovel, and the loader says so
			}
			if vn != v.Name && declares(v, what, obj) && !declares(p.Vhosts[vn], what, obj) {
				out = append(out, itemFinding(it,
					"shovel %q of vhost %q moves messages %s %s %q of vhost %q (%s %s), but the file declares %s %q in vhost %q: %s names %s, whatever vhost the shovel is in, so the shovel %s. "+
						"Write %s: %s to use this vhost's %s",
					name, v.Name, map[bool]string{true: "from", false: "to"}[strings.HasPrefix(key, "src")], what, obj, vn, uriKey, topology.MaskSecret(it.Settings[uriKey]),
					what, obj, v.Name, uriKey, uriVhostLabel(vn),
					map[string]string{
						"queue":    fmt.Sprintf("declares queue %q in vhost %q itself and uses that one", obj, vn),
						"exchange": fmt.Sprintf("stops when exchange %q is missing from vhost %q (NOT_FOUND), and nothing moves", obj, vn),
					}[what],
					uriKey, "amqp:///"+url.PathEscape(v.Name), what).at(key))
				return
			}
			end, where := v, "this vhost"
			if vn != v.Name {
				if end = p.Vhosts[vn]; end == nil {
					return // a vhost this file does not speak for
				}
				where = fmt.Sprintf("vhost %q", vn)
			}
			if declares(end, what, obj) {
				return
			}
			out = append(out, itemFinding(it,
				"shovel %q moves messages %s %s %q of %s (%s %s), which the file does not declare: %s. Declare it, or fix the name%s",
				name, map[bool]string{true: "from", false: "to"}[strings.HasPrefix(key, "src")], what, obj, where, uriKey, topology.MaskSecret(it.Settings[uriKey]),
				map[string]string{
					"queue":    "the shovel declares a missing queue itself, as a durable classic queue mqctl does not manage (a later plan of the file would not know it)",
					"exchange": "a missing exchange stops the shovel (its channel is closed with NOT_FOUND) and nothing moves",
				}[what], endHint(end, what, obj)).at(key))
		}
		check("src-uri", "src-queue", "queue")
		check("src-uri", "src-exchange", "exchange")
		check("dest-uri", "dest-queue", "queue")
		check("dest-uri", "dest-exchange", "exchange")
	}
	return out
}

// MQ404: an upstream set naming an upstream the vhost does not declare.
func runUpstreamSetUnknown(p *Pass) []Finding {
	var out []Finding
	v := p.Vhost
	for _, name := range v.Items.Names(kind.FederationUpstreamSet) {
		it := v.Items.Get(kind.FederationUpstreamSet, name)
		for i, m := range kind.UpstreamSetMembers(it.Settings) {
			up, _ := m["upstream"].(string)
			if up == "" || v.Items.Get(kind.FederationUpstream, up) != nil {
				continue
			}
			out = append(out, itemFinding(it,
				"federation upstream set %q names upstream %q (member %d), which the vhost's federation_upstreams do not declare: the broker takes the set, and a policy using it makes no link to that upstream. Declare the upstream, or fix the name",
				name, up, i+1).at(fmt.Sprintf("%s[%d]", kind.UpstreamSetList, i)))
		}
	}
	return out
}

// declares reports whether vhost v (nil: one the file does not declare)
// has queue or exchange obj; the amq.* exchanges every vhost has.
func declares(v *topology.Vhost, what, obj string) bool {
	switch {
	case v == nil:
		return false
	case what == "queue":
		return v.Queues[obj] != nil
	}
	return v.Exchanges[obj] != nil || strings.HasPrefix(obj, "amq.")
}

// uriVhostLabel says which vhost a local shovel URI names.
func uriVhostLabel(vhost string) string {
	if vhost == "/" {
		return `the default vhost "/" (amqp:// without a path)`
	}
	return fmt.Sprintf("vhost %q", vhost)
}

// MQ407: a shovel that deletes itself (src-delete-after, or its pre-3.7
// name delete-after, other than never) declared in the file. RabbitMQ
// deletes its parameter once it has moved what it was set to (measured on
// 4.3.6: gone seconds after it moved a queue's one message). The plan
// holds it back then (engine keepFinishedShovels: plan.HeldFinished), so
// that no deploy replays a DLQ into its work queue again; the finding says
// how to run it again, and what would still create it again.
func runSelfDeletingShovel(p *Pass) []Finding {
	var out []Finding
	v := p.Vhost
	for _, name := range v.Items.Names(kind.Shovel) {
		it := v.Items.Get(kind.Shovel, name)
		if key, val := kind.DeletesItself(it.Settings); key != "" {
			what := "moved the messages it was set to move"
			switch {
			case val == "queue-length":
				what = "moved the messages its source queue held when it started"
			case key == "src-delete-after-duration":
				what = fmt.Sprintf("run for %v seconds", val)
			}
			from := ""
			if q, ok := it.Settings.String("src-queue"); ok && q != "" {
				from = fmt.Sprintf(" out of queue %q", q)
			}
			out = append(out, itemFinding(it,
				"shovel %q deletes itself once it has %s (%s: %v). mqctl creates it once: once it is gone, plan holds it back as finished while the file keeps it as applied, so no apply moves messages%s again. "+
					"To run it again, change one of its settings or its name; mqctl without its ownership record (a vhost recreated, another tool's apply) would create it again, so a one-off shovel is safest removed from the file once it has run; for a shovel that keeps running, remove %s",
				name, what, key, val, from, key))
		}
	}
	return out
}

// ignoredAMQP10Keys are the amqp10 destination keys RabbitMQ 4.2+ accepts
// and ignores (rmqversion.Version.ShovelIgnoresAMQP10Properties).
var ignoredAMQP10Keys = []string{"dest-application-properties", "dest-message-annotations", "dest-properties"}

// MQ408: an amqp10 shovel destination that sets message properties,
// annotations or application properties on a version that ignores them.
func runShovelIgnoredSettings(p *Pass) []Finding {
	if !p.Version.ShovelIgnoresAMQP10Properties() {
		return nil
	}
	var out []Finding
	for _, name := range p.Vhost.Items.Names(kind.Shovel) {
		it := p.Vhost.Items.Get(kind.Shovel, name)
		if kind.ShovelProtocol(it.Settings, "dest") != "amqp10" {
			continue
		}
		var set []string
		for _, k := range ignoredAMQP10Keys {
			if _, ok := it.Settings[k]; ok {
				set = append(set, k)
			}
		}
		if len(set) == 0 {
			continue
		}
		keys := strings.Join(set, " and ")
		out = append(out, itemFinding(it,
			"shovel %q sets %s, which RabbitMQ %s accepts and ignores: from 4.2 a shovel leaves the messages it moves as they are (the bare message is immutable), so they arrive without them. "+
				"Remove %s; set what consumers need where the messages are published (dest-add-forward-headers and dest-add-timestamp-header still mark a moved message, in its message annotations)",
			name, keys, p.Version.Line(), keys))
	}
	return out
}
