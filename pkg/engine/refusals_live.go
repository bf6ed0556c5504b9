package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
)

// vhostReach is rmqversion.Version.CheckURIVhosts's judge of a vhost the
// file does not declare that a shovel's or an upstream's URI names: why the user
// mqctl connects as cannot connect to it ("" when it can, or when the
// broker would not say). It asks the broker only when asked, once per
// vhost: the vhosts the user can see, and its permissions in the one
// named. It judges the access the user has now: mqctl never changes or
// deletes its own user's permissions (keepOwnUser), and one the file gives
// it in the same apply does not count.
func (e *Engine) vhostReach(ctx context.Context) func(vhost string) string {
	var (
		listed  bool
		visible []string
		listErr error
		said    = map[string]string{}
	)
	user := e.c.Username()
	return func(vhost string) string {
		if why, ok := said[vhost]; ok {
			return why
		}
		if !listed {
			visible, listErr = e.c.VhostNames(ctx)
			listed = true
		}
		why := ""
		switch {
		case listErr != nil:
			// Not told: the broker judges when the shovel is written.
		case !slices.Contains(visible, vhost):
			why = fmt.Sprintf("the broker has no vhost %q that user %q can see", vhost, user)
		default:
			ok, err := e.c.HasPermissions(ctx, vhost, user)
			if (err == nil && !ok) || errors.Is(err, broker.ErrNotFound) {
				why = fmt.Sprintf("user %q has no permission in vhost %q", user, vhost)
			}
		}
		said[vhost] = why
		return why
	}
}

// endExists is rmqversion.Version.CheckBindingEnds's judge of a binding's
// end the file does not declare: whether the broker may hold it, and
// whether it was seen there. The state read answers first (an end of a
// kind mqctl could not read counts as there, unseen); one it lacks is
// asked of the broker itself, once: the definitions export leaves
// exclusive queues out, and an end may have been declared since. An answer
// other than "not found" counts as there, unseen: the broker judges when
// the binding is written.
func (e *Engine) endExists(ctx context.Context, l *Live) func(vhost string, k kind.Kind, name string) (there, seen bool) {
	type key struct {
		vhost string
		k     kind.Kind
		name  string
	}
	type answer struct{ there, seen bool }
	said := map[key]answer{}
	return func(vhost string, k kind.Kind, name string) (bool, bool) {
		if _, unread := l.current.UnreadKind(vhost, k); unread {
			return true, false
		}
		if l.current.State.Vhosts[vhost] == nil && !e.c.IsAdmin() {
			return true, false // a vhost the user is not shown: the plan holds it back (keepUnseenVhosts)
		}
		if l.has(plan.ObjectRef{Kind: k, Vhost: vhost, Name: name}) {
			return true, true
		}
		at := key{vhost, k, name}
		if a, done := said[at]; done {
			return a.there, a.seen
		}
		ok, err := e.c.Exists(ctx, k, vhost, name)
		said[at] = answer{ok || err != nil, ok && err == nil}
		return said[at].there, said[at].seen
	}
}
