package engine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/internal/shell"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// restoreTopicPermissions: where the broker keeps a topic permission under
// its exchange (rmqversion TopicPermissionsGoWithExchange: 4.3), the
// delete half of an exchange's replace deletes every user's topic
// permission for that exchange, and the declare half makes the exchange
// without any (measured on 4.3.6). Before, the plan said nothing of them:
// the apply left them deleted, a user's topic restriction on the exchange
// was gone, and the next plan created again those the file declares.
//
// The file's topic permissions for a replaced exchange are written again
// after it (apply writes topic permissions after the exchanges): the
// plan's change of that user's topic permissions in the vhost, made or
// amended, starts from the item as the replace leaves it. Those the file
// does not declare are not mqctl's to write: a note names each, with the
// command that sets it again; where the user may not read topic
// permissions (an administrator's), the note says that the replace of a
// topic exchange deletes them unseen (of an exchange of another type, the
// note would be noise: a topic permission restricts nothing there).
func (e *Engine) restoreTopicPermissions(p *plan.Plan, desired *topology.Topology, l *Live) {
	if !e.c.RabbitMQVersion().TopicPermissionsGoWithExchange() {
		return
	}
	replaced, replacedTopics := replacedExchanges(p)
	for _, vh := range slices.Sorted(maps.Keys(replaced)) {
		xs := replaced[vh]
		if u, unread := l.current.UnreadKind(vh, kind.TopicPermission); unread {
			if topics := replacedTopics[vh]; len(topics) > 0 {
				e.note("the replace of topic exchange(s) %s in vhost %q deletes any topic permissions users have for them (RabbitMQ %s keeps a topic permission under its exchange), and mqctl could not read whether there are any (%s): an administrator can tell (rabbitmqctl list_topic_permissions -p %s) and set them again after the apply (rabbitmqctl set_topic_permissions)",
					quoteNames(topics), vh, e.c.RabbitMQVersion().Line(), u.Reason, shell.Quote(vh))
			}
			continue
		}
		have := l.current.State.Vhosts[vh]
		if have == nil {
			continue
		}
		var want *topology.Vhost
		if desired != nil {
			want = desired.Vhosts[vh]
		}
		for _, user := range have.Items.Names(kind.TopicPermission) {
			it := have.Items.Get(kind.TopicPermission, user)
			var gone []string
			for _, x := range xs {
				if _, ok := it.Settings[x]; ok {
					gone = append(gone, x)
				}
			}
			if len(gone) > 0 {
				e.restoreUserTopicPermissions(p, vh, it, gone, want)
			}
		}
	}
}

// replacedExchanges are the exchanges p replaces, by vhost, and those of
// them that are topic exchanges after the replace: RabbitMQ checks a
// topic permission only on a topic exchange's routing keys (rabbit_channel
// and rabbit_amqp_session check_topic_authorisation at v4.3.5), so one
// for an exchange of another type, deleted with it, restricted nothing and
// would restrict nothing after.
func replacedExchanges(p *plan.Plan) (replaced, topics map[string][]string) {
	replaced, topics = map[string][]string{}, map[string][]string{}
	for i := range p.Changes {
		if c := &p.Changes[i]; c.Kind == kind.Exchange && c.Action == plan.Replace {
			replaced[c.Vhost] = append(replaced[c.Vhost], c.Name)
			if x, ok := plan.As[topology.Exchange](c.After); ok && x.Type == "topic" {
				topics[c.Vhost] = append(topics[c.Vhost], c.Name)
			}
		}
	}
	return replaced, topics
}

// restoreUserTopicPermissions deals with user it's topic permissions in
// vhost vh for the exchanges gone, which their replace deletes: the
// file's (want's) are written again after it, through an update p holds
// or adds; those the file does not declare are noted with the commands
// that set them again.
func (e *Engine) restoreUserTopicPermissions(p *plan.Plan, vh string, it *topology.Item, gone []string, want *topology.Vhost) {
	user := it.Name
	left := &topology.Item{Kind: it.Kind, Name: it.Name, Settings: topology.Args{}}
	for k, v := range it.Settings {
		if !slices.Contains(gone, k) {
			left.Settings[k] = v
		}
	}
	i := slices.IndexFunc(p.Changes, func(c plan.Change) bool {
		return c.Kind == kind.TopicPermission && c.Vhost == vh && c.Name == user
	})
	var declared *topology.Item
	if want != nil {
		declared = want.Items.Get(kind.TopicPermission, user)
	}
	switch {
	case i >= 0 && p.Changes[i].Action == plan.Update:
		c := &p.Changes[i]
		c.Before = plan.ItemObject{Item: left}
		c.Fields = plan.ObjectFields(c.Kind, c.Before, c.After)
	case i >= 0:
		// Deleted before the replace, or created after it.
	case declared != nil:
		c := plan.Change{Action: plan.Update, Kind: kind.TopicPermission, Vhost: vh, Name: user,
			Before: plan.ItemObject{Item: left}, After: plan.ItemObject{Item: declared}, Pos: declared.Pos, Print: plan.ItemPrint(declared),
			Reason: fmt.Sprintf("the replace of exchange(s) %s deletes the topic permissions for them (RabbitMQ %s keeps a topic permission under its exchange): written again after it", quoteNames(gone), e.c.RabbitMQVersion().Line())}
		c.Fields = plan.ObjectFields(c.Kind, c.Before, c.After)
		at := len(p.Changes)
		for j := range p.Changes {
			if p.Changes[j].Vhost == vh {
				at = j + 1
			}
		}
		p.Changes = slices.Insert(p.Changes, at, c)
	default:
		var cmds []string
		for _, x := range gone {
			var s map[string]any
			switch v := it.Settings[x].(type) {
			case map[string]any:
				s = v
			case topology.Args:
				s = v
			}
			w, _ := s["write"].(string)
			r, _ := s["read"].(string)
			cmds = append(cmds, fmt.Sprintf("rabbitmqctl set_topic_permissions -p %s %s %s %s %s", shell.Quote(vh), shell.Quote(user), shell.Quote(x), shell.Quote(w), shell.Quote(r)))
		}
		e.note("the replace of exchange(s) %s in vhost %q deletes user %q's topic permissions for them (RabbitMQ %s keeps a topic permission under its exchange), which the file does not declare, so mqctl does not write them again: set them again after the apply (%s), or declare them in the file",
			quoteNames(gone), vh, user, e.c.RabbitMQVersion().Line(), strings.Join(cmds, "; "))
	}
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
