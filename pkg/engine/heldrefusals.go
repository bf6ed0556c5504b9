package engine

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// refuseDeclared refuses, before anything changes, what err (the refusals
// of version's table, or of the broker's state, of cause) says the broker
// would refuse of an object p declares (plan.Plan.SplitRefusals). What it
// says of an object the broker already holds exactly as the file declares
// it, which p never writes, refuses nothing: the user is told, in a note,
// what the broker holds and the fix that loses nothing.
func (e *Engine) refuseDeclared(p *plan.Plan, desired *topology.Topology, version rmqversion.Version, err error, cause string) error {
	if err == nil {
		return nil
	}
	refuse, held := p.SplitRefusals(desired, err)
	for _, r := range held {
		e.note("%s", heldRefusalNote(version, r))
	}
	if refuse == nil {
		return nil
	}
	return plan.Refuse(fmt.Errorf("plan refused, nothing was changed: %w", refuse), cause, desired, nil)
}

// heldRefusalNote says of refusal r, whose object the broker holds
// exactly as the file declares it, what that means and the fix that loses
// nothing.
func heldRefusalNote(version rmqversion.Version, r rmqversion.Refusal) string {
	var b strings.Builder
	if r.Pos.File != "" {
		b.WriteString(r.Pos.String())
		b.WriteString(": ")
	}
	if r.StopsNode {
		// Not a refusal to come but a harm already in force: the broker
		// took it, and it takes the node down. The fix changes nothing
		// that holds messages (a policy is updated in place).
		fmt.Fprintf(&b, "%s in vhost %q: %s: the broker holds it exactly as the file declares it, so this plan does not declare it; but it is in force now: %s. Fix it before a stream it applies to rolls a segment: %s, then apply (a policy is updated in place: nothing is replaced, no message at stake)",
			r.Object, r.Vhost, r.Key, r.Reason, r.Fix)
		return b.String()
	}
	verb := "would refuse to declare it again"
	if r.Ignored {
		verb = "would ignore it"
	}
	fmt.Fprintf(&b, "%s in vhost %q: %s: the broker holds it exactly as the file declares it (kept from a version that took it, as an upgrade keeps it), so this plan does not declare it and refuses nothing; but RabbitMQ %s %s: %s. ",
		r.Object, r.Vhost, r.Key, version, verb, r.Reason)
	queue := strings.HasPrefix(r.Object, "queue ")
	if queue && strings.HasPrefix(r.Key, "x-consumer-timeout") {
		fmt.Fprintf(&b, "The broker keeps the queue with the argument, but RabbitMQ %s evaluates a consumer timeout on quorum queues only: nothing times out a consumer of this queue. ", version.Line())
	}
	b.WriteString("It stays as it is while nothing declares it again; it would be refused if it were ever deleted and declared again (a replace of it or of an end it binds, a restore from this file on another broker, a definitions import)")
	if queue || strings.HasPrefix(r.Object, "exchange ") {
		// Changing a queue's or an exchange's arguments or type replaces
		// it: the fix the refusal gives would put the messages at stake.
		what := "messages, consumers and bindings"
		if !queue {
			what = "bindings"
		}
		fmt.Fprintf(&b, ". To lose nothing, leave it in the file as the broker holds it: changing it as the version asks (%s) replaces it, and its %s go with it; to be rid of it, declare a new one under another name as the version takes it, move publishers and consumers (and, for a queue, its messages) to it, then drop this one from the file", r.Fix, what)
	} else {
		fmt.Fprintf(&b, ". To be rid of it (no queue is replaced, no message at stake): %s", r.Fix)
	}
	return b.String()
}
