package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/internal/shell"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// permWant is one permission a change of the plan needs.
type permWant struct {
	need broker.Need
	what string // the change, `create queue "q" in vhost "v"`
	pos  topology.Pos
	// own: for mqctl's own objects (the lock, the ownership record, the
	// restore lists and the bindings put back from them), which no file
	// declares: leaving objects out of the file does not help.
	own bool
}

// checkPermissions refuses, before anything changes, a plan whose
// exchanges, queues and bindings the user mqctl is connected as may not
// write: RabbitMQ would refuse the first of them only once the changes
// ordered before it were made. A user who is not an administrator cannot
// read its own permissions, so the broker is asked, over AMQP, with
// probes that change nothing (broker.Client.MissingPermissions). The
// administrator tag grants no permissions on a vhost: an administrator
// reads its own (adminWants), and is asked like any user where they do
// not allow everything (before, it was never checked, and was refused
// part way). A check that cannot be made is a note: the broker still
// refuses, part way.
func (e *Engine) checkPermissions(ctx context.Context, p *plan.Plan, l *Live) error {
	user := e.c.Username()
	tagLines, tag := e.policyTags(p)
	var keep func(vh string) bool // nil: every vhost's wants are asked
	var admin *adminVhosts
	if e.c.IsAdmin() {
		admin = e.newAdminVhosts(ctx, p)
		keep = admin.keep
	}
	wants := permissionWants(p, l, e.c.RabbitMQVersion().TopicPermissionsGoWithExchange(), keep)
	var noAccess []string
	if admin != nil {
		noAccess = admin.noAccessSorted()
	}
	if len(wants) == 0 && len(tagLines) == 0 && len(noAccess) == 0 {
		return nil
	}
	e.noteUncheckedTopicKeys(p, l, wants)
	amqpURL, err := e.amqpURL(ctx)
	if err != nil {
		e.note("mqctl could not check before the apply that user %q has the permissions it needs (%v): a missing one stops the apply where the broker refuses it", user, err)
		wants = nil
	}
	vhosts := make([]string, 0, len(wants))
	for vh := range wants {
		vhosts = append(vhosts, vh)
	}
	sort.Strings(vhosts)
	lines := tagLines
	kinds := make([]string, len(tagLines)) // of each line, what it lacks (a format of a count)
	for i := range kinds {
		kinds[i] = "a tag for %d change"
	}
	fixes := lackFixes{tag: tag, tags: e.c.Tags(), admin: e.c.IsAdmin()}
	for _, vh := range noAccess {
		lines = append(lines, "  "+e.c.NoVhostAccess(vh))
		kinds = append(kinds, "permissions on %d vhost")
		fixes.add(vh, broker.Need{})
	}
	for _, vh := range vhosts {
		ws := wants[vh]
		needs := make([]broker.Need, len(ws))
		for i, w := range ws {
			needs[i] = w.need
		}
		missing, err := e.c.MissingPermissions(ctx, amqpURL, vh, needs)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			e.note("mqctl could not check before the apply that user %q has the permissions it needs in vhost %q (%v): a missing one stops the apply where the broker refuses it", user, vh, err)
			continue
		}
		for _, m := range missing {
			var by []permWant
			for _, w := range ws {
				if w.need.Perm == m.Perm && w.need.Kind == m.Kind && w.need.Name == m.Name && (!m.Topic || w.need.TopicKey && w.need.RoutingKey == m.RoutingKey) {
					by = append(by, w)
				}
			}
			if len(by) == 0 {
				continue
			}
			fixes.add(vh, m)
			fixes.fileObjects = fixes.fileObjects || slices.ContainsFunc(by, func(w permWant) bool { return !w.own })
			lines = append(lines, "  "+lackLine(user, vh, m, by))
			what := m.Perm + " on %d " + m.Kind
			if m.Topic {
				what = "the topic permission on %d routing key"
			}
			kinds = append(kinds, what)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return &permissionsError{user: user, lines: shortLackLines(lines, kinds), fix: fixes.String(user)}
}

// noteUncheckedTopicKeys says which topic permissions the check cannot
// ask: RabbitMQ checks the topic permission on a binding's key only on a
// topic exchange that exists (rabbit_channel), and before 4.3.2 a topic
// permission may name an exchange the vhost does not have (from 4.3.2 it
// may not, and goes with the exchange: none can stop the apply there).
// So the keys of the bindings from a topic exchange the apply creates
// (or makes a topic exchange) are not asked, and a topic permission that
// refuses one stops the apply at that binding. Said once per vhost.
func (e *Engine) noteUncheckedTopicKeys(p *plan.Plan, l *Live, wants map[string][]permWant) {
	if e.c.RabbitMQVersion().TopicPermissionNeedsExchange() {
		return
	}
	made := map[plan.ObjectRef]bool{}
	for i := range p.Changes {
		c := &p.Changes[i]
		if x, ok := plan.As[topology.Exchange](c.After); ok && c.Kind == kind.Exchange && x.Type == "topic" &&
			(c.Action == plan.Create || c.Action == plan.Replace) && l.exchangeType(c.Vhost, c.Name) != "topic" {
			made[c.Ref()] = true
		}
	}
	if len(made) == 0 {
		return
	}
	vhosts := make([]string, 0, len(wants))
	for vh := range wants {
		vhosts = append(vhosts, vh)
	}
	sort.Strings(vhosts)
	for _, vh := range vhosts {
		var xs []string
		bindings := 0
		for _, w := range wants[vh] {
			n := w.need
			if n.Perm != "read" || n.Kind != "exchange" || !n.TopicKey || !made[plan.ObjectRef{Kind: kind.Exchange, Vhost: vh, Name: n.Name}] {
				continue
			}
			bindings++
			if !slices.Contains(xs, n.Name) {
				xs = append(xs, n.Name)
			}
		}
		if bindings == 0 {
			continue
		}
		e.note("mqctl could not check before the apply the topic permissions of user %q on the routing keys of %d binding(s) from topic exchange(s) %s in vhost %q, which the apply creates: RabbitMQ %s checks a topic permission only on an exchange that exists, and a topic permission for the exchange whose read regexp does not match a key stops the apply at that binding, after the changes before it", e.c.Username(), bindings, quoteNames(xs), vh, e.c.RabbitMQVersion().Line())
	}
}

// maxLackLines is how many missing permissions a refusal names; the rest
// are counted.
const maxLackLines = 20

// shortLackLines keeps the first maxLackLines of lines, and counts the
// rest by what they lack (kinds, one per line): a user whose regexps
// cover none of 5,000 queues is told in 21 lines, not 5,000.
func shortLackLines(lines, kinds []string) []string {
	if len(lines) <= maxLackLines {
		return lines
	}
	counts := map[string]int{}
	var order []string
	for _, k := range kinds[maxLackLines:] {
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf(k, counts[k])
		if counts[k] > 1 {
			parts[i] = strings.Replace(parts[i], "policy", "policie", 1) + "s"
		}
	}
	return append(lines[:maxLackLines:maxLackLines], fmt.Sprintf("  and %d more: %s", len(lines)-maxLackLines, strings.Join(parts, ", ")))
}

// permissionsError is checkPermissions' refusal: apply's error, a note of
// plan's (a plan needs no more than access to the vhost, and still shows
// what differs).
type permissionsError struct {
	user  string
	lines []string
	fix   string
	plan  bool
}

func (e *permissionsError) Error() string {
	head := "apply refused, nothing was changed"
	if e.plan {
		head = "apply would be refused before any change"
	}
	return fmt.Sprintf("%s: user %q lacks permissions this plan needs, and RabbitMQ would refuse them part way through the apply, after the changes before them:\n%s\n%s",
		head, e.user, strings.Join(e.lines, "\n"), e.fix)
}

// notePermissions tells the user of a plan what checkPermissions found:
// the plan is still shown, and apply refuses it.
func (e *Engine) notePermissions(ctx context.Context, p *plan.Plan, l *Live) error {
	err := e.checkPermissions(ctx, p, l)
	var pe *permissionsError
	if errors.As(err, &pe) {
		pe.plan = true
		e.note("%v", pe)
		return nil
	}
	return err
}

// policyTags refuses the changes of p that the user's tags do not let it
// write (kind.Spec.WriteTag: the management API answers 401 at the first of them,
// after the changes ordered before it: vhost limits, say, are written
// after the queues); tag is the tag that lets it write them all ("" when
// none is missing).
func (e *Engine) policyTags(p *plan.Plan) (lines []string, tag string) {
	if e.c.IsAdmin() {
		return nil, ""
	}
	pm := slices.Contains(e.c.Tags(), "policymaker")
	for i := range p.Changes {
		c := &p.Changes[i]
		need := ""
		switch t := c.Kind.WriteTag(); {
		case t == kind.Administrator:
			need, tag = "the administrator tag", "administrator"
		case t == kind.Policymaker && !pm:
			need = "the policymaker or administrator tag"
			if tag == "" {
				tag = "policymaker"
			}
		}
		if need == "" {
			continue
		}
		line := "  "
		if c.Pos.File != "" {
			line += c.Pos.String() + ": "
		}
		what := fmt.Sprintf("%s %s %q", c.Action, c.Kind.Label(), c.Name)
		if c.Vhost != "" && c.Kind.InVhostByName() {
			what += fmt.Sprintf(" in vhost %q", c.Vhost)
		}
		tags := strings.Join(e.c.Tags(), ", ")
		if tags == "" {
			tags = "none"
		}
		lines = append(lines, line+fmt.Sprintf("%s needs %s, which user %q does not have (tags: %s)", what, need, e.c.Username(), tags))
	}
	return lines, tag
}

// lackLine says what m is missing for, and why.
func lackLine(user, vh string, m broker.Need, by []permWant) string {
	var b strings.Builder
	first := by[0]
	if first.pos.File != "" {
		b.WriteString(first.pos.String())
		b.WriteString(": ")
	}
	b.WriteString(first.what)
	if n := len(by) - 1; n == 1 {
		b.WriteString(" (and 1 more change)")
	} else if n > 1 {
		fmt.Fprintf(&b, " (and %d more changes)", n)
	}
	if m.Topic {
		fmt.Fprintf(&b, " needs the topic permission to read routing key %q on exchange %q: the read regexp of user %q's topic permission for that exchange does not match %q", m.RoutingKey, m.Name, user, m.RoutingKey)
		return b.String()
	}
	name, what := m.Name, fmt.Sprintf("%s %q", m.Kind, m.Name)
	if m.Kind == "exchange" && m.Name == "" {
		// RabbitMQ checks the default exchange's permissions on the
		// name "amq.default" (rabbit_access_control).
		name = "amq.default"
		what = `the default exchange ("amq.default" in permissions)`
	}
	fmt.Fprintf(&b, " needs %s permission on %s: the %s regexp of user %q in vhost %q does not match %q", m.Perm, what, m.Perm, user, vh, name)
	return b.String()
}

// lackFixes gathers what checkPermissions found missing, per vhost, for
// the fix: a vhost's permissions, or the topic permission of an exchange
// on routing keys.
type lackFixes struct {
	admin  bool        // the user is an administrator, which reads its own permissions
	tag    string      // the tag policies need, "" for none
	tags   []string    // the user's tags
	vhosts []string    // whose permissions lack something, in order
	topics []topicLack // in order
	keys   map[topicLack][]string
	// fileObjects: some of what lacks is for objects of the file (not
	// only mqctl's own), which leaving out of it would spare.
	fileObjects bool
}

type topicLack struct{ vhost, exchange string }

func (f *lackFixes) add(vh string, m broker.Need) {
	if !m.Topic {
		if !slices.Contains(f.vhosts, vh) {
			f.vhosts = append(f.vhosts, vh)
		}
		return
	}
	t := topicLack{vh, m.Name}
	if f.keys == nil {
		f.keys = map[topicLack][]string{}
	}
	if _, ok := f.keys[t]; !ok {
		f.topics = append(f.topics, t)
	}
	if !slices.Contains(f.keys[t], m.RoutingKey) {
		f.keys[t] = append(f.keys[t], m.RoutingKey)
	}
}

// String is how to get past the refusal: for each vhost whose permissions
// lack something, set_permissions; for each topic permission, its
// set_topic_permissions (broker.TopicReadFix). A missing tag has no
// command here: its line names the tag.
func (f *lackFixes) String(user string) string {
	var fixes []string
	if f.tag != "" {
		tags := append(slices.Clone(f.tags), f.tag)
		words := make([]string, len(tags))
		for i, t := range tags {
			words[i] = shell.Quote(t)
		}
		fixes = append(fixes, fmt.Sprintf("An administrator can give user %q the %s tag, keeping the tags it has (rabbitmqctl set_user_tags %s %s)", user, f.tag, shell.Quote(user), strings.Join(words, " ")))
	}
	if len(f.vhosts) > 0 {
		cmds := make([]string, len(f.vhosts))
		for i, vh := range f.vhosts {
			cmds[i] = fmt.Sprintf("rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ", shell.Quote(vh), shell.Quote(user))
		}
		fix := fmt.Sprintf("An administrator can extend the regexps to match these names (%s)", strings.Join(cmds, "; "))
		if len(fixes) > 0 {
			fix = "extend the regexps to match these names (" + strings.Join(cmds, "; ") + ")"
		}
		fixes = append(fixes, fix)
	}
	for _, t := range f.topics {
		fix := broker.TopicReadFix(user, t.vhost, t.exchange, f.keys[t])
		if len(fixes) == 0 {
			fix = strings.ToUpper(fix[:1]) + fix[1:]
		}
		fixes = append(fixes, fix)
	}
	leave := ""
	if f.fileObjects {
		leave = "; or leave these objects out of the file"
	}
	rest := "The apply can run as a user that has them" + leave + "."
	if len(fixes) > 0 {
		rest = strings.Join(fixes, "; ") + "; or the apply can run as a user that has them" + leave + "."
	}
	if f.admin {
		return "mqctl read the user's permissions, and asked the broker with operations that change nothing. " + rest
	}
	return "RabbitMQ shows a user that is not an administrator none of its own permissions, so mqctl asked the broker with operations that change nothing. " + rest
}

// adminVhosts says, for an administrator, which may read its own
// permissions, whose vhosts' wants the broker is asked (keep): not those
// where its permissions allow everything (".*" to configure, write and
// read, and no topic permission: the usual case, which needs no probe)
// nor those the plan creates (apply grants it every permission there),
// nor those where it has none (noAccess), which refuse every change.
// Where its permissions cannot be read, or narrow it, the wants stay.
// A vhost's permissions are read once, when permissionWants first has a
// want in it, and the wants of the vhosts left out are never built: at
// 50,002 objects they held 30 MB of a plan's memory, to be dropped.
type adminVhosts struct {
	ctx      context.Context
	e        *Engine
	created  map[string]bool
	kept     map[string]bool // per vhost read, whether its wants are asked
	noAccess []string
}

func (e *Engine) newAdminVhosts(ctx context.Context, p *plan.Plan) *adminVhosts {
	a := &adminVhosts{ctx: ctx, e: e, created: map[string]bool{}, kept: map[string]bool{}}
	for i := range p.Changes {
		if c := &p.Changes[i]; c.Kind.Container() && c.Action == plan.Create {
			a.created[c.Name] = true
		}
	}
	return a
}

func (a *adminVhosts) keep(vh string) bool {
	if a.created[vh] {
		return false
	}
	if k, ok := a.kept[vh]; ok {
		return k
	}
	perm, found, topic, err := a.e.c.OwnPermissions(a.ctx, vh)
	k := false
	switch {
	case err != nil:
		k = true
	case !found:
		a.noAccess = append(a.noAccess, vh)
	case perm.Configure == ".*" && perm.Write == ".*" && perm.Read == ".*" && !topic:
	default:
		k = true
	}
	a.kept[vh] = k
	return k
}

// noAccessSorted are the vhosts where the administrator has no
// permissions, among those permissionWants had wants in.
func (a *adminVhosts) noAccessSorted() []string {
	sort.Strings(a.noAccess)
	return a.noAccess
}

// permissionWants lists, per vhost, the permissions p's exchanges, queues
// and bindings need (RabbitMQ's checks, rabbit_channel): configure on each
// queue and exchange declared, replaced or deleted; read on a queue
// (exchange) declared anew with a dead-letter (alternate) exchange, and
// write on that exchange; write on each binding's destination and read on
// its source (and the topic permission on its key), for a binding created,
// deleted, or put back after a replace; and configure on the apply's lock
// queue and on mqctl's ownership record exchanges, old and new, in each
// vhost it changes. topicGoes (rmqversion's TopicPermissionsGoWithExchange)
// says that the delete of an exchange the plan replaces deletes the topic
// permissions for it: the bindings from it are made after, with no topic
// permission to check their keys against, so theirs are not asked (the
// probe would ask the topic permission the replace deletes). keep, where
// not nil, says which vhosts' wants to list (adminVhosts): the others'
// are not built.
func permissionWants(p *plan.Plan, l *Live, topicGoes bool, keep func(vh string) bool) map[string][]permWant {
	w := newWants(p, l, topicGoes)
	w.keep = keep
	changed := map[string]bool{}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Vhost == "" || !takesLock(c.Kind) {
			continue
		}
		changed[c.Vhost] = true
		if keep == nil || keep(c.Vhost) {
			w.change(c)
		}
	}
	for _, vh := range slices.Sorted(maps.Keys(changed)) {
		w.own(vh)
	}
	w.restoreLists()
	w.leftRestoreLists()
	return w.out
}

// wants gathers permissionWants' answer: what each change needs, what
// apply's own objects need.
type wants struct {
	p         *plan.Plan
	l         *Live
	topicGoes bool
	out       map[string][]permWant
	gone      map[plan.ObjectRef]bool // deleted by the plan
	replaced  map[plan.ObjectRef]bool // replaced; true for an exchange whose topic permissions go with it
	declared  map[plan.ObjectRef]bool // created, updated or replaced by the plan
	// types are the types the plan's exchanges have once it is applied
	// (the file's): RabbitMQ checks topic permissions on the keys of a
	// topic exchange only.
	types map[plan.ObjectRef]string
	recs  map[string]*ownership.Record
	keep  func(vh string) bool // nil: every vhost
}

func newWants(p *plan.Plan, l *Live, topicGoes bool) *wants {
	w := &wants{p: p, l: l, topicGoes: topicGoes, out: map[string][]permWant{},
		gone: map[plan.ObjectRef]bool{}, replaced: map[plan.ObjectRef]bool{}, declared: map[plan.ObjectRef]bool{}, types: map[plan.ObjectRef]string{}}
	for i := range p.Changes {
		c := &p.Changes[i]
		switch c.Action {
		case plan.Delete:
			w.gone[c.Ref()] = true
		case plan.Replace:
			w.replaced[c.Ref()] = c.Kind == kind.Exchange && topicGoes
		}
		if c.Action != plan.Delete {
			w.declared[c.Ref()] = true
		}
		if x, ok := plan.As[topology.Exchange](c.After); ok && c.Kind == kind.Exchange {
			w.types[c.Ref()] = x.Type
		}
	}
	if l != nil {
		w.recs = l.records
	}
	return w
}

func (w *wants) add(vh string, pw permWant) {
	if w.keep != nil && !w.keep(vh) {
		return
	}
	w.out[vh] = append(w.out[vh], pw)
}

// sourceType is the type exchange x of vhost vh has once the plan is
// applied (the file's, or the broker's); "" is not known: its keys are
// probed.
func (w *wants) sourceType(vh, x string) string {
	if t, ok := w.types[plan.ObjectRef{Kind: kind.Exchange, Vhost: vh, Name: x}]; ok {
		return t
	}
	if w.l != nil {
		return w.l.exchangeType(vh, x)
	}
	return ""
}

// binding adds what binding b needs. del: the binding is deleted, before
// the exchanges are (apply.Order), and so while its source's topic
// permissions are there.
func (w *wants) binding(vh, what string, pos topology.Pos, b *topology.Binding, del, own bool) {
	dk := string(b.DestinationKind())
	t := w.sourceType(vh, b.Source)
	topicKey := (t == "" || t == "topic") && (del || !w.replaced[plan.ObjectRef{Kind: kind.Exchange, Vhost: vh, Name: b.Source}])
	w.add(vh, permWant{need: broker.Need{Perm: "write", Kind: dk, Name: b.Destination}, what: what, pos: pos, own: own})
	w.add(vh, permWant{need: broker.Need{Perm: "read", Kind: "exchange", Name: b.Source, ViaKind: dk, Via: b.Destination, RoutingKey: b.RoutingKey, TopicKey: topicKey}, what: what, pos: pos, own: own})
}

// takesLock says whether a change of kind k takes apply's lock and
// record in its vhost: those of queues, exchanges and bindings, the
// changes wants.change lists: of a kind that is an end of a binding
// (kind.Spec.BindingEnd) or named by its ends (NamedByEnds).
func takesLock(k kind.Kind) bool { return k.BindingEnd() || k.NamedByEnds() }

// change adds what change c needs (c is of a kind that takesLock).
func (w *wants) change(c *plan.Change) {
	verb := string(c.Action)
	what := fmt.Sprintf("%s %s %q in vhost %q", verb, c.Kind.Label(), c.Name, c.Vhost)
	switch {
	case c.Kind.BindingEnd():
		w.object(c, what)
	case c.Kind.NamedByEnds():
		obj := c.After
		if c.Action == plan.Delete {
			obj = c.Before
		}
		if b, ok := obj.(plan.BindingObject); ok && b.Binding != nil && b.Source != "" {
			w.binding(c.Vhost, fmt.Sprintf("%s binding %s in vhost %q", verb, plan.BindingName(b.Binding), c.Vhost), c.Pos, b.Binding, c.Action == plan.Delete, false)
		}
	}
}

// object adds what the change c of a queue or exchange needs: configure
// on it; read on it and write on its dead-letter (alternate) exchange;
// the bindings a replace puts back.
func (w *wants) object(c *plan.Change, what string) {
	k := string(c.Kind)
	conf := broker.Need{Perm: "configure", Kind: k, Name: c.Name}
	if q, ok := plan.As[topology.Queue](c.After); ok && c.Action != plan.Delete {
		// One probe asks the three (broker.Need.DeadLetter).
		conf.DeadLetter, conf.HasDeadLetter = q.Arguments.String("x-dead-letter-exchange")
	}
	w.add(c.Vhost, permWant{need: conf, what: what, pos: c.Pos})
	if c.Action == plan.Delete {
		return
	}
	if q, ok := plan.As[topology.Queue](c.After); ok {
		if dlx, ok := q.Arguments.String("x-dead-letter-exchange"); ok {
			why := what + " with dead-letter exchange " + fmt.Sprintf("%q", dlx)
			w.add(c.Vhost, permWant{need: broker.Need{Perm: "read", Kind: k, Name: c.Name}, what: why, pos: c.Pos})
			w.add(c.Vhost, permWant{need: broker.Need{Perm: "write", Kind: "exchange", Name: dlx}, what: why, pos: c.Pos})
		}
	}
	if x, ok := plan.As[topology.Exchange](c.After); ok {
		if ae, ok := x.Arguments.String("alternate-exchange"); ok {
			why := what + " with alternate exchange " + fmt.Sprintf("%q", ae)
			w.add(c.Vhost, permWant{need: broker.Need{Perm: "write", Kind: "exchange", Name: ae}, what: why, pos: c.Pos})
			w.add(c.Vhost, permWant{need: broker.Need{Perm: "read", Kind: k, Name: c.Name, ViaKind: "exchange", Via: ae}, what: why, pos: c.Pos})
		}
	}
	if c.Action == plan.Replace {
		for _, b := range c.Bindings {
			src, dst := plan.BindingEnds(c.Vhost, b)
			if w.gone[src] || w.gone[dst] {
				continue
			}
			w.binding(c.Vhost, fmt.Sprintf("restore binding %s in vhost %q after the replace of %s %q", plan.BindingName(b), c.Vhost, c.Kind.Label(), c.Name), c.Pos, b, false, false)
		}
	}
}

// own adds what apply's own objects in vhost vh need: its lock queue, and
// mqctl's ownership record exchanges, old and new.
func (w *wants) own(vh string) {
	w.add(vh, permWant{need: broker.Need{Perm: "configure", Kind: "queue", Name: lock.QueueName},
		what: fmt.Sprintf("take the apply lock of vhost %q (an exclusive queue)", vh), own: true})
	var gen int64
	var old []string
	if r := w.l.records[vh]; r != nil {
		gen, old = r.Generation, r.Exchanges
	}
	w.add(vh, permWant{need: broker.Need{Perm: "configure", Kind: "exchange", Name: ownership.RecordName(w.p.Owner, gen+1)},
		what: fmt.Sprintf("write mqctl's ownership record of vhost %q (an internal exchange)", vh), own: true})
	for _, name := range old {
		w.add(vh, permWant{need: broker.Need{Perm: "configure", Kind: "exchange", Name: name},
			what: fmt.Sprintf("replace mqctl's ownership record %q of vhost %q", name, vh), own: true})
	}
}

// restoreLists adds the restore list of each vhost where the replaces
// take down bindings the file does not declare, written before the first
// change and deleted at the end (writeRestoreLists): its name is made
// then, one of the same form is asked.
func (w *wants) restoreLists() {
	foreign := foreignTakenDown(w.p, w.recs)
	for _, vh := range slices.Sorted(maps.Keys(foreign)) {
		w.add(vh, permWant{need: broker.Need{Perm: "configure", Kind: "exchange", Name: ownership.RestorePrefix + "1"},
			what: fmt.Sprintf("write down, as an internal exchange %s<n>, the %d binding(s) the replaces in vhost %q take down that the file does not declare", ownership.RestorePrefix, len(foreign[vh]), vh), own: true})
	}
}

// leftRestoreLists adds the restore lists earlier applies stopped during
// a replace left (putBack): apply declares their bindings again and
// deletes them, with changes or without.
func (w *wants) leftRestoreLists() {
	for _, vh := range slices.Sorted(maps.Keys(w.recs)) {
		r := w.recs[vh]
		if vh == "" || r == nil || len(r.RestoreLists) == 0 {
			continue
		}
		for _, b := range r.Restore {
			src, dst := plan.BindingEnds(vh, b)
			if w.gone[src] || w.gone[dst] || !w.declared[src] && !w.l.has(src) || !w.declared[dst] && !w.l.has(dst) {
				continue // not put back (its end is missing): nothing asked
			}
			w.binding(vh, fmt.Sprintf("put back binding %s in vhost %q, taken down by an apply stopped during a replace (restore list %s)", plan.BindingName(b), vh, strings.Join(r.RestoreLists, ", ")), topology.Pos{}, b, false, true)
		}
		for _, name := range r.RestoreLists {
			w.add(vh, permWant{need: broker.Need{Perm: "configure", Kind: "exchange", Name: name},
				what: fmt.Sprintf("delete the restore list %q of vhost %q (an internal exchange), left by an apply stopped during a replace, once its bindings are back", name, vh), own: true})
		}
	}
}
