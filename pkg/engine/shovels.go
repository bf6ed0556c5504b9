package engine

import (
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
)

// keepFinishedShovels holds back the creation of every shovel that mqctl
// created, that deleted itself once done (kind.DeletesItself: the broker
// deletes a src-delete-after shovel's parameter when it has moved what it
// was to move), and that the file declares as mqctl created it: created
// again, it would move its messages again, at every apply. Its record is
// kept (it is not stale), so that the next plan holds it back too. A
// shovel the file changes is a new one, and created; one the file drops
// leaves the record.
func (e *Engine) keepFinishedShovels(p *plan.Plan, l *Live) {
	stale := map[plan.ObjectRef]bool{}
	for _, ref := range p.Stale {
		if ref.Kind == kind.Shovel {
			stale[ref] = true
		}
	}
	if len(stale) == 0 {
		return
	}
	finished := map[plan.ObjectRef]bool{}
	p.HoldBack(func(c *plan.Change) (string, string) {
		ref := c.Ref()
		it, ok := c.After.(plan.ItemObject)
		if c.Action != plan.Create || !stale[ref] || !ok {
			return "", ""
		}
		key, value := kind.DeletesItself(it.Settings)
		rec, recorded := l.current.Managed[c.Vhost][ref]
		if key == "" || !recorded || rec == plan.NoPrint || rec != plan.ItemPrint(it.Item) {
			return "", ""
		}
		finished[ref] = true
		return plan.HeldFinished, fmt.Sprintf("mqctl created it (or adopted it, made by hand, as the file declared it), and it deleted itself once done (%s: %v): created again it would move its messages again; to run it again, change one of its settings or its name, and to forget it, remove it from the file", key, value)
	})
	p.Stale = slices.DeleteFunc(p.Stale, func(ref plan.ObjectRef) bool { return finished[ref] })
}
