package lint

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The rules about users' access (SPEC §9): access sugar naming an object
// the file does not declare (MQ801) and permission regexps that match more
// than they name (MQ802).

// accessAnalyzers are the catalogue entries of this file.
func accessAnalyzers() []*Analyzer {
	return []*Analyzer{
		{ID: "MQ801", Name: "access-undeclared-object", Severity: Warning,
			Summary: "a user's access names a queue or exchange the vhost does not declare (amq.* exchanges and the default exchange count as declared), or a topic permission is for such an exchange", Run: runAccessUndeclared},
		{ID: "MQ803", Name: "literal-password", Severity: Error,
			Summary: "a user's password, or the password in a shovel's or federation upstream's URI, written in the file instead of taken from the environment (${VAR})", RunBroker: runLiteralPassword},
		{ID: "MQ802", Name: "permission-unanchored", Severity: Warning,
			Summary: "a permission or topic permission regexp that is not anchored (^…$), or that matches every name for a user who is not an administrator: it grants more than it names", Run: runPermissionUnanchored},
	}
}

func permissionFinding(it *topology.Item, pos topology.Pos, format string, args ...any) Finding {
	return Finding{Object: Object{string(it.Kind), it.Name}, Pos: pos, objMeta: it.Meta, Message: fmt.Sprintf(format, args...)}
}

// MQ801: access naming an object the vhost does not declare.
func runAccessUndeclared(p *Pass) []Finding {
	v := p.Vhost
	var out []Finding
	for _, user := range v.Items.Names(kind.Permission) {
		it := v.Items.Get(kind.Permission, user)
		a := loader.AccessOf(it)
		if a == nil {
			continue
		}
		for _, n := range a.Consume {
			if _, ok := v.Queues[n.Name]; ok {
				continue
			}
			fix := fmt.Sprintf("Declare queue %q in vhost %q, or correct the name%s", n.Name, v.Name, closestHint(n.Name, p.queueNamesOf()))
			if _, isX := v.Exchanges[n.Name]; isX || p.exchangeDeclared(n.Name) {
				fix = fmt.Sprintf("%q is an exchange: consume names queues, so list the queue%s the user reads from", n.Name, boundQueuesHint(v, n.Name))
			}
			out = append(out, permissionFinding(it, n.Pos,
				"user %q consumes queue %q, which vhost %q does not declare: it is granted read on a queue nothing here creates, so its consumer fails with NOT_FOUND unless something else declares the queue (unmanaged), and if the name is misspelt the real queue stays unreadable (ACCESS_REFUSED). %s",
				user, n.Name, v.Name, fix))
		}
		for _, n := range a.Publish {
			if p.exchangeDeclared(n.Name) {
				continue
			}
			fix := fmt.Sprintf("Declare exchange %q in vhost %q, or correct the name%s", n.Name, v.Name, closestHint(n.Name, p.exchangeNamesOf()))
			if _, isQ := v.Queues[n.Name]; isQ {
				fix = fmt.Sprintf("%q is a queue: messages are published to exchanges; to send straight to the queue, publish to the default exchange (publish: [\"\"]) with routing key %q, or publish to an exchange bound to it", n.Name, n.Name)
			}
			out = append(out, permissionFinding(it, n.Pos,
				"user %q publishes to exchange %q, which vhost %q does not declare: its publishes fail with NOT_FOUND and close the channel. %s",
				user, n.Name, v.Name, fix))
		}
		for _, n := range a.Declare {
			_, isQ := v.Queues[n.Name]
			if isQ || p.exchangeDeclared(n.Name) {
				continue
			}
			out = append(out, permissionFinding(it, n.Pos,
				"user %q may declare %q (configure), but vhost %q declares no queue or exchange of that name: what the user creates there is not managed by the file (no plan shows it, no dead-letter or binding of the file reaches it). Declare it in the file, or correct the name%s",
				user, n.Name, v.Name, closestHint(n.Name, append(p.queueNamesOf(), p.exchangeNamesOf()...))))
		}
	}
	return append(out, p.topicPermissionsUndeclared()...)
}

// topicPermissionsUndeclared is MQ801 for topic permissions: one for an
// exchange the vhost does not declare. From 4.3.2 RabbitMQ refuses it
// unless the exchange exists (plan refuses it then, when the broker does
// not hold one of that name either); before, it takes a permission that
// applies to nothing until something declares the exchange.
func (p *Pass) topicPermissionsUndeclared() []Finding {
	v := p.Vhost
	var out []Finding
	for _, user := range v.Items.Names(kind.TopicPermission) {
		it := v.Items.Get(kind.TopicPermission, user)
		for _, x := range slices.Sorted(maps.Keys(it.Settings)) {
			if p.exchangeDeclared(x) {
				continue
			}
			judged := "RabbitMQ 4.3.2 and later refuse it (no_such_exchange) unless an exchange of that name exists"
			if p.Version.TopicPermissionNeedsExchange() {
				judged = fmt.Sprintf("RabbitMQ %s refuses it (no_such_exchange) unless an exchange of that name exists", p.Version.Line())
			}
			out = append(out, permissionFinding(it, it.PosOf(x),
				"topic permission of user %q is for exchange %q, which vhost %q does not declare: %s, and if the name is misspelt the real exchange stays unrestricted. Declare exchange %q in the file, or correct the name%s",
				user, x, v.Name, judged, x, closestHint(x, p.exchangeNamesOf())))
		}
	}
	return out
}

func (p *Pass) queueNamesOf() []string {
	out := make([]string, 0, len(p.Vhost.Queues))
	for n := range p.Vhost.Queues {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (p *Pass) exchangeNamesOf() []string {
	out := make([]string, 0, len(p.Vhost.Exchanges))
	for n := range p.Vhost.Exchanges {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// boundQueuesHint names the queues bound to exchange x: " (orders.audit or
// orders.shipping, bound to it)".
func boundQueuesHint(v *topology.Vhost, x string) string {
	seen := map[string]bool{}
	var qs []string
	for _, b := range v.Bindings {
		if b.Source == x && b.DestinationType == topology.DestQueue && !seen[b.Destination] {
			seen[b.Destination] = true
			qs = append(qs, b.Destination)
		}
	}
	if len(qs) == 0 {
		return ""
	}
	sort.Strings(qs)
	return fmt.Sprintf(" (%s, bound to it)", strings.Join(quoteAll(qs), " or "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// permissionOps says what each permission lets a user do, for messages.
var permissionOps = map[string]string{
	"configure": "declare and delete",
	"write":     "publish to (exchanges) and bind to (queues)",
	"read":      "consume from and purge (queues) and bind from (exchanges)",
}

// accessOp is the access list that writes each permission.
var accessOp = map[string]string{"configure": "declare", "write": "publish", "read": "consume"}

// MQ803: a password written in the file itself.
func runLiteralPassword(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.Broker.Names(kind.User) {
		u := p.Broker.Get(kind.User, name)
		if _, has := u.Settings[kind.UserPassword]; !has {
			continue
		}
		if _, ref := u.Refs[kind.UserPassword]; ref {
			continue
		}
		if d, ok := u.Defaults[kind.UserPassword]; ok {
			if d.Default != "" {
				out = append(out, Finding{Object: Object{string(kind.User), name}, Pos: u.Pos, objMeta: u.Meta,
					Message: fmt.Sprintf("the password of user %q has a default written in the file (${%s:-…}): whoever reads the file, or its history, has it, it is the password wherever %s is not set, and a saved plan cannot be made of it. Drop the default: password: \"${%s}\" (a single variable, nothing around it), and set %s where mqctl runs", name, d.Var, d.Var, d.Var, d.Var)})
			}
			continue
		}
		out = append(out, Finding{Object: Object{string(kind.User), name}, Pos: u.Pos, objMeta: u.Meta,
			Message: fmt.Sprintf("the password of user %q is written in the file: whoever reads the file, or its history, has it, and a saved plan cannot be made of it. Take it from the environment: password: \"${%s}\" (a single variable, nothing around it)", name, kind.PasswordVariable(name))})
	}
	return append(out, p.literalURIPasswords()...)
}

// literalURIPasswords reports the URIs of the vhosts' items (shovels,
// federation upstreams) whose credentials hold a password written in the
// file rather than taken from a ${VAR}, each shown masked.
func (p *Pass) literalURIPasswords() []Finding {
	var out []Finding
	for _, vn := range slices.Sorted(maps.Keys(p.Vhosts)) {
		items := p.Vhosts[vn].Items
		for _, k := range slices.Sorted(maps.Keys(items)) {
			for _, name := range items.Names(k) {
				it := items.Get(k, name)
				out = append(out, p.uriDefaults(vn, k, it)...)
				for _, part := range it.SecretParts() {
					if _, defaulted := it.Defaults[topology.RefKey(part.Key, part.Index)]; part.Ref != "" || defaulted {
						continue
					}
					where, variable, v := part.Key, kind.VariableName(vn, string(k), name, part.Key), it.Settings[part.Key]
					write := fmt.Sprintf("%s: \"${%s}\"", part.Key, variable)
					if part.Index >= 0 {
						variable = kind.VariableName(vn, string(k), name, part.Key, strconv.Itoa(part.Index+1))
						where = fmt.Sprintf("%s[%d]", part.Key, part.Index)
						v = v.([]any)[part.Index]
						write = fmt.Sprintf("%s: [..., \"${%s}\", ...]", part.Key, variable)
					}
					msg := fmt.Sprintf("%s %q of vhost %q has a password written in the file, in %s (%s): whoever reads the file, or its history, has it, and a saved plan cannot be made of it. Take the URI from the environment: %s (a single variable, nothing around it)",
						k.Label(), name, vn, where, topology.MaskSecret(v), write)
					if s, ok := v.(string); ok && !hasScheme(s) {
						// Masked whole, as what cannot be read may hold a
						// secret, but no password is seen in it: most often
						// a placeholder a deployment fills in
						// (BiobankLab__sensitive-data-archive's
						// CEGA_CONNECTION), which RabbitMQ refuses as it is.
						msg = fmt.Sprintf("%s %q of vhost %q has in %s a value that is no URI (%s: it has no scheme, and RabbitMQ refuses it as \"not a valid URI\"), and no password is seen in it. If it stands for a URI a deployment fills in, take it from the environment: %s (a single variable, nothing around it); else write the URI there, its password from a variable",
							k.Label(), name, vn, where, topology.MaskSecret(v), write)
					}
					out = append(out, Finding{Object: Object{string(k), name}, Vhost: vn, Pos: it.Pos, objMeta: it.Meta, Message: msg})
				}
			}
		}
	}
	return out
}

// uriDefaults reports the secret settings of item it (of kind k, in vhost
// vn) written as a variable with a default, ${VAR:-default}, whose default
// holds a password (or is no URI, masked whole): the default is written in
// the file, and the fix is to drop it, not to name another variable.
func (p *Pass) uriDefaults(vn string, k kind.Kind, it *topology.Item) []Finding {
	var out []Finding
	for _, key := range slices.Sorted(maps.Keys(it.Defaults)) {
		d := it.Defaults[key]
		if d.Default == "" || fmt.Sprint(topology.MaskSecret(d.Default)) == d.Default {
			continue // no password in the default: amqp://localhost
		}
		what := "a password"
		if !hasScheme(d.Default) {
			what = "a value that is no URI (it has no scheme, and RabbitMQ refuses it as \"not a valid URI\")"
		}
		write := fmt.Sprintf("%s: \"${%s}\"", key, d.Var)
		if name, _, isList := strings.Cut(key, "["); isList {
			write = fmt.Sprintf("%s: [..., \"${%s}\", ...]", name, d.Var)
		}
		out = append(out, Finding{Object: Object{string(k), it.Name}, Vhost: vn, Pos: it.Pos, objMeta: it.Meta,
			Message: fmt.Sprintf("%s %q of vhost %q takes %s from ${%s}, but its default, written in the file, holds %s (%s): whoever reads the file, or its history, has it, it is used wherever %s is not set, and a saved plan cannot be made of it. Drop the default: %s (a single variable, nothing around it), and set %s where mqctl runs",
				k.Label(), it.Name, vn, key, d.Var, what, topology.MaskSecret(d.Default), d.Var, write, d.Var)})
	}
	return out
}

// administrator reports whether the file gives user the administrator tag.
func (p *Pass) administrator(user string) bool {
	u := p.Broker.Get(kind.User, user)
	if u == nil {
		return false
	}
	tags, _ := u.Settings[kind.UserTags].([]any)
	for _, t := range tags {
		if t == "administrator" {
			return true
		}
	}
	return false
}

// MQ802: a permission regexp that matches more than it names (an
// administrator's match-all excepted).
func runPermissionUnanchored(p *Pass) []Finding {
	v := p.Vhost
	var out []Finding
	for _, user := range v.Items.Names(kind.Permission) {
		it := v.Items.Get(kind.Permission, user)
		if loader.AccessOf(it) != nil {
			continue // mqctl wrote exact regexps
		}
		for _, field := range []string{"configure", "write", "read"} {
			re, _ := it.Settings.String(field)
			s, ok := shapeOf(re)
			if !ok {
				continue
			}
			what := fmt.Sprintf("%s regexp %q of user %q", field, re, user)
			switch {
			case s.all && p.administrator(user):
				// An administrator's full access is meant: it can grant
				// itself any permission anyway.
			case s.all:
				out = append(out, permissionFinding(it, it.Pos,
					"%s matches every name: it lets the user %s every queue and exchange of vhost %q, including those created later. %s",
					what, permissionOps[field], v.Name, accessAdvice(p, user, field)))
			case !s.anchored():
				out = append(out, permissionFinding(it, it.Pos,
					"%s %s, so it also matches %s. %s",
					what, s.where("name"), s.alsoMatches(p.declaredNames(), "names"), s.fix("name")))
			}
		}
	}
	for _, user := range v.Items.Names(kind.TopicPermission) {
		it := v.Items.Get(kind.TopicPermission, user)
		exchanges := make([]string, 0, len(it.Settings))
		for x := range it.Settings {
			exchanges = append(exchanges, x)
		}
		sort.Strings(exchanges)
		for _, x := range exchanges {
			if typ := topicPermissionExchangeType(v, x); typ != "" {
				// RabbitMQ checks topic permissions only on topic exchanges
				// (rabbit_channel check_topic_authorisation matches
				// type = topic, at v3.10.8, v4.0.5 and v4.3.5): on another
				// exchange no key the entry names restricts anything.
				name := fmt.Sprintf("exchange %q", x)
				if x == "" {
					name = "the default exchange (\"\")"
				}
				out = append(out, permissionFinding(it, it.Pos,
					"topic permissions of user %q on %s restrict nothing, whatever keys they name: %s is a %s exchange, and RabbitMQ checks topic permissions only on topic exchanges. Name the topic exchange whose keys the user should be limited to (%s), or remove the entry",
					user, name, name, typ, topicExchangesOf(v)))
				continue
			}
			m, _ := it.Settings[x].(map[string]any)
			for _, field := range []string{"write", "read"} {
				re, _ := m[field].(string)
				s, ok := shapeOf(re)
				if !ok {
					continue
				}
				what := fmt.Sprintf("topic permission %s regexp %q of user %q on exchange %q", field, re, user, x)
				switch {
				case s.all:
					out = append(out, permissionFinding(it, it.Pos,
						"%s matches every routing key: it restricts nothing (a user without topic permissions may already use every key). Name the keys it may %s, e.g. %s, or remove the entry",
						what, map[string]string{"write": "publish with", "read": "bind with"}[field], topicExample(v, x)))
				case !s.anchored():
					out = append(out, permissionFinding(it, it.Pos,
						"%s %s, so it also matches %s. %s",
						what, s.where("routing key"), s.alsoMatches(nil, "routing keys"), s.fix("routing key")))
				}
			}
		}
	}
	return out
}

// declaredNames are the queue and exchange names of the vhost, labelled.
func (p *Pass) declaredNames() []labelled {
	var out []labelled
	for _, n := range p.queueNamesOf() {
		out = append(out, labelled{"queue", n})
	}
	for _, n := range p.exchangeNamesOf() {
		out = append(out, labelled{"exchange", n})
	}
	return out
}

type labelled struct{ kind, name string }

// accessAdvice is how access sugar would grant field narrowly to user.
func accessAdvice(p *Pass, user, field string) string {
	var names []string
	noun, nouns, verb := "queue", "queues", "consumes"
	switch field {
	case "write":
		names, noun, nouns, verb = p.exchangeNamesOf(), "exchange", "exchanges", "publishes to"
	case "configure":
		// A regexp grants a name, whatever it names: a queue and an
		// exchange of one name are listed once.
		names, noun, nouns, verb = append(p.queueNamesOf(), p.exchangeNamesOf()...), "queue or exchange", "queues and exchanges", "declares"
		seen := map[string]bool{}
		names = slices.DeleteFunc(names, func(n string) bool { dup := seen[n]; seen[n] = true; return dup })
	default:
		names = p.queueNamesOf()
	}
	vn := p.Vhost.Name
	if len(names) == 0 {
		// Then the names it uses are made elsewhere, most often by its
		// own applications at run time: "^$" would lock them out.
		return fmt.Sprintf("The file declares no %s in vhost %q, so the ones %s uses are made elsewhere (most often by its applications at run time): limit %s to their names, or to a prefix they share such as '%s'; grant \"^$\" only if it uses none",
			noun, vn, user, field, "^"+regexp.QuoteMeta(user)+`\.`)
	}
	shown := names
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], ", …"
	}
	op := accessOp[field]
	return fmt.Sprintf("If %s only %s some of the vhost's %s (%s%s), replace its permissions on vhost %q with access: { %q: { %s: [the ones it uses] } }: mqctl then writes exact regexps (for all of them, %s: %s)",
		user, verb, nouns, strings.Join(shown, ", "), more, vn, vn, op, field, accessRegexpFor(p, field, names))
}

// accessRegexpFor is the regexp access writes for field when its list is
// names (with what the operations need besides, for declare).
func accessRegexpFor(p *Pass, field string, names []string) string {
	var g loader.AccessGrant
	switch field {
	case "read":
		g = loader.ExpandAccess(p.Vhost, names, nil, nil)
		return loader.ExactRegexp(g.Read)
	case "write":
		g = loader.ExpandAccess(p.Vhost, nil, names, nil)
		return loader.ExactRegexp(g.Write)
	}
	g = loader.ExpandAccess(p.Vhost, nil, nil, names)
	return loader.ExactRegexp(g.Configure)
}

// topicExample is a narrow topic regexp to suggest for exchange x: the
// file's binding keys on it when they have no wildcard, else an example.
func topicExample(v *topology.Vhost, x string) string {
	var keys []string
	for _, b := range v.Bindings {
		if b.Source == x && b.RoutingKey != "" && !strings.ContainsAny(b.RoutingKey, "*#") {
			keys = append(keys, b.RoutingKey)
		}
	}
	if len(keys) > 0 && len(keys) <= 5 {
		return loader.ExactRegexp(keys)
	}
	return `^order\.(?:created|paid)$`
}

// regexpShape is what a permission regexp matches, as far as lint judges.
type regexpShape struct {
	re         *regexp.Regexp
	all        bool // matches every name
	start, end bool // anchored at the start, at the end
	// literal is the name the regexp spells without its anchors, an
	// unescaped . read as a dot; isLiteral when it spells one.
	literal   string
	isLiteral bool
	bareDot   bool // the literal has an unescaped .
	// core is the regexp without its anchors; splitAnchors when anchors
	// bound single alternatives (^a|b$).
	core         string
	splitAnchors bool
	// literals are the names an alternation of plain names spells.
	literals []string
}

func (s regexpShape) anchored() bool { return s.start && s.end }

// shapeOf judges re; false when there is nothing to say (empty, "^$", or
// a regexp Go cannot read, which lint leaves to the broker).
func shapeOf(re string) (regexpShape, bool) {
	if re == "" || re == "^$" {
		return regexpShape{}, false // RabbitMQ reads "" as ^$: nothing
	}
	compiled, err := regexp.Compile(re)
	if err != nil {
		return regexpShape{}, false
	}
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return regexpShape{}, false
	}
	s := regexpShape{re: compiled}
	s.all = compiled.MatchString("mqctl.lint-probe_7") && compiled.MatchString("z")
	s.core = textCore(re)
	if parsed.Op == syntax.OpAlternate {
		// ^a|b$ is (^a)|(b$): each anchor binds to one alternative only.
		lits := []string{}
		for _, alt := range parsed.Sub {
			bare := stripAnchors(alt)
			s.splitAnchors = s.splitAnchors || bare != alt
			if l, ok, dot := literalOf(bare); ok && l != "" && lits != nil {
				lits = append(lits, l)
				s.bareDot = s.bareDot || dot
			} else {
				lits = nil
			}
		}
		s.literals = lits
		return s, true
	}
	subs := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpConcat {
		subs = parsed.Sub
	}
	if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		s.start, subs = true, subs[1:]
	}
	if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		s.end, subs = true, subs[:len(subs)-1]
	}
	// A regexp that starts or ends with .* (or .+) matches any beginning or
	// end by design: "^job\..*" grants every name that starts with "job.",
	// as "^(?:job\..*)$" would. Only the other end needs an anchor.
	if len(subs) > 0 && anyRun(subs[len(subs)-1]) {
		s.end = true
	}
	if len(subs) > 0 && anyRun(subs[0]) {
		s.start = true
	}
	var core *syntax.Regexp
	switch len(subs) {
	case 0:
		core = &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case 1:
		core = subs[0]
	default:
		core = &syntax.Regexp{Op: syntax.OpConcat, Sub: subs, Flags: parsed.Flags}
	}
	s.literal, s.isLiteral, s.bareDot = literalOf(core)
	if s.isLiteral && s.literal == "" {
		s.isLiteral = false
	}
	return s, true
}

// anyRun reports whether re is .* or .+: any run of characters.
func anyRun(re *syntax.Regexp) bool {
	if (re.Op != syntax.OpStar && re.Op != syntax.OpPlus) || len(re.Sub) != 1 {
		return false
	}
	return re.Sub[0].Op == syntax.OpAnyCharNotNL || re.Sub[0].Op == syntax.OpAnyChar
}

// textCore is re without a leading ^ and a trailing unescaped $.
func textCore(re string) string {
	core := strings.TrimPrefix(re, "^")
	if strings.HasSuffix(core, "$") {
		n := 0 // backslashes before the $
		for i := len(core) - 2; i >= 0 && core[i] == '\\'; i-- {
			n++
		}
		if n%2 == 0 {
			core = core[:len(core)-1]
		}
	}
	return core
}

// stripAnchors is r without a leading ^ and a trailing $.
func stripAnchors(r *syntax.Regexp) *syntax.Regexp {
	if r.Op != syntax.OpConcat {
		if r.Op == syntax.OpBeginText || r.Op == syntax.OpEndText {
			return &syntax.Regexp{Op: syntax.OpEmptyMatch}
		}
		return r
	}
	subs := r.Sub
	if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		subs = subs[1:]
	}
	if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		subs = subs[:len(subs)-1]
	}
	if len(subs) == len(r.Sub) {
		return r
	}
	if len(subs) == 1 {
		return subs[0]
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: subs, Flags: r.Flags}
}

// literalOf spells r when it is a plain name: literals and bare dots.
func literalOf(r *syntax.Regexp) (string, bool, bool) {
	switch r.Op {
	case syntax.OpLiteral:
		if r.Flags&syntax.FoldCase != 0 {
			return "", false, false
		}
		return string(r.Rune), true, false
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return ".", true, true
	case syntax.OpConcat:
		var sb strings.Builder
		dot := false
		for _, sub := range r.Sub {
			l, ok, d := literalOf(sub)
			if !ok {
				return "", false, false
			}
			sb.WriteString(l)
			dot = dot || d
		}
		return sb.String(), true, dot
	}
	return "", false, false
}

// alsoMatches describes what s matches beyond the name it spells: the
// other declared objects it matches, and made-up names it matches too.
func (s regexpShape) alsoMatches(declared []labelled, nouns string) string {
	var parts []string
	seeds := []string{}
	if s.isLiteral {
		seeds = append(seeds, s.literal)
		for _, d := range declared {
			if d.name != s.literal && s.re.MatchString(d.name) && len(parts) < 4 {
				parts = append(parts, fmt.Sprintf("%s %q", d.kind, d.name))
			}
		}
		if len(parts) > 0 {
			parts[len(parts)-1] += " (declared here)"
		}
	} else {
		for _, d := range declared {
			if s.re.MatchString(d.name) {
				seeds = append(seeds, d.name)
			}
		}
	}
	var examples []string
	for _, seed := range seeds {
		for _, e := range []string{"old-" + seed, seed + "2", strings.ReplaceAll(seed, ".", "X")} {
			if e != seed && s.re.MatchString(e) && !slices.Contains(examples, fmt.Sprintf("%q", e)) && len(examples) < 3 {
				examples = append(examples, fmt.Sprintf("%q", e))
			}
		}
	}
	if len(examples) > 0 {
		parts = append(parts, nouns+" such as "+strings.Join(examples, ", "))
	}
	if len(parts) == 0 {
		return "more than it spells"
	}
	return strings.Join(parts, ", ")
}

// where says how RabbitMQ matches s against a name (or routing key).
func (s regexpShape) where(noun string) string {
	switch {
	case s.start && s.isLiteral:
		return fmt.Sprintf("is anchored at the start only: RabbitMQ matches every %s that starts with %q", noun, s.literal)
	case s.end && s.isLiteral:
		return fmt.Sprintf("is anchored at the end only: RabbitMQ matches every %s that ends with %q", noun, s.literal)
	}
	return "is not anchored: RabbitMQ matches it anywhere in a " + noun
}

// fix is the anchored form to write instead.
func (s regexpShape) fix(noun string) string {
	if s.isLiteral {
		dot := ""
		if s.bareDot {
			dot = " (escaped: an unescaped . matches any character)"
		}
		exact := loader.ExactRegexp([]string{s.literal})
		q := regexp.QuoteMeta(s.literal)
		switch {
		case s.start:
			return fmt.Sprintf("To grant exactly the %s %q, write %s%s; if every %s starting with it is meant, say so: ^%s.*$", noun, s.literal, exact, dot, noun, q)
		case s.end:
			return fmt.Sprintf("To grant exactly the %s %q, write %s%s; if every %s ending with it is meant, say so: ^.*%s$", noun, s.literal, exact, dot, noun, q)
		}
		return fmt.Sprintf("To grant exactly the %s %q, write %s%s", noun, s.literal, exact, dot)
	}
	split := ""
	if s.splitAnchors {
		split = "The ^ and $ bind to the first and last alternatives only. "
	}
	if len(s.literals) > 0 {
		dot := ""
		if s.bareDot {
			dot = " (escaped: an unescaped . matches any character)"
		}
		return fmt.Sprintf("%sTo grant exactly the %ss %s, write %s%s", split, noun, strings.Join(quoteAll(s.literals), ", "), loader.ExactRegexp(s.literals), dot)
	}
	return fmt.Sprintf("%sTo match only whole %ss, anchor the whole regexp: ^(?:%s)$", split, noun, s.core)
}

// topicPermissionExchangeType is the type of exchange x of vhost v when
// it is known not to be a topic exchange (the default exchange, a built-in
// amq.* exchange of another type, an exchange the file declares), else "".
func topicPermissionExchangeType(v *topology.Vhost, x string) string {
	if e := v.Exchanges[x]; e != nil {
		if e.Type != "topic" {
			return e.Type
		}
		return ""
	}
	switch x {
	case "", "amq.direct":
		return "direct"
	case "amq.fanout":
		return "fanout"
	case "amq.headers", "amq.match":
		return "headers"
	}
	return ""
}

// topicExchangesOf lists amq.topic and the topic exchanges vhost v
// declares, for advice.
func topicExchangesOf(v *topology.Vhost) string {
	names := []string{"amq.topic"}
	for _, n := range slices.Sorted(maps.Keys(v.Exchanges)) {
		if v.Exchanges[n].Type == "topic" {
			names = append(names, n)
		}
	}
	if len(names) > 6 {
		names = append(names[:6], "…")
	}
	return strings.Join(names, ", ")
}

// hasScheme reports whether s starts with a URI scheme (amqp://, amqps://,
// or another RabbitMQ would name).
func hasScheme(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}
