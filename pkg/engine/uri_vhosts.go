package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/broker"
)

// vhostReach is rmqversion.Version.CheckURIVhosts's judge of a vhost the
// file does not declare that a shovel's or an upstream's URI names: why the user
// mqctl connects as cannot connect to it ("" when it can, or when the
// broker would not say). It asks the broker only when asked, once per
// vhost: the vhosts the user can see, and its permissions in the one
// named. mqctl never writes its own user's permissions (keepOwnUser), so
// the file cannot give it access in the same apply.
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
