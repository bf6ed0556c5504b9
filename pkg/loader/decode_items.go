package loader

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The sections of a vhost that hold items of the generic kinds
// (kind.VhostItems): each kind's section, decoded by its fields
// (kind.ItemSpec).

// itemSections returns the vhost fields of the generic kinds.
func itemSections() []string {
	var out []string
	for _, s := range kind.VhostItems() {
		out = append(out, s.Section)
	}
	return out
}

// addItems records the generic kinds' sections of one file's vhost; a
// section is declared in one file only.
func (fd *fileDecoder) addItems(v *rawVhost, f fieldSet, what string) {
	for _, s := range kind.VhostItems() {
		sec := s.Section
		n := f.value(sec)
		if n == nil {
			continue
		}
		if prev, ok := v.items[s.Kind]; ok {
			fd.d.errs.addf(n.pos, "declare it in one file only", "%s: %s is declared again (first at %s)", what, sec, prev.pos)
			continue
		}
		if v.items == nil {
			v.items = map[kind.Kind]*node{}
		}
		v.items[s.Kind] = n
	}
}

// buildItems decodes rv's generic sections into v.Items.
func (l *load) buildItems(rv *rawVhost, v *topology.Vhost) {
	what := fmt.Sprintf("vhost %q", rv.name)
	for _, s := range kind.VhostItems() {
		n, ok := rv.items[s.Kind]
		if !ok {
			continue
		}
		sec := label(what, s.Section)
		switch s.Item.Shape {
		case kind.Single:
			// An empty one is none, as the broker holds it (limits: {}
			// is no limit), and as a user's limits are.
			if it := l.d.item(s, rv.name, n, sec); it != nil && len(it.Settings) > 0 {
				v.Items.Put(it)
			}
		case kind.Named:
			if n.kind != mapNode {
				l.d.errs.addf(n.pos, "write a mapping from each "+s.Label+" name to its settings", "%s: expected a mapping of names, got %s", sec, describe(n))
				continue
			}
			for _, e := range n.entries {
				if !l.d.itemNamed(s, e.key) {
					continue
				}
				if it := l.d.item(s, e.key.value, e.value, fmt.Sprintf("%s %q", s.Label, e.key.value)); it != nil {
					it.Pos = e.key.pos
					v.Items.Put(it)
				}
			}
		}
	}
}

// itemNamed reports an item of kind s whose name (key) is empty: the
// management API has no path for it (HTTP 405 on every version).
func (d *decoder) itemNamed(s kind.Spec, key *node) bool {
	if key.value != "" {
		return true
	}
	d.errs.addf(key.pos, "give the "+s.Label+" a name", "%s name must not be empty", s.Label)
	return false
}

// item decodes one item of kind s from n by its fields (by its members'
// fields, a list of mappings, when it has a kind.ListSpec), then checks it
// with its Validate; nil after an error.
func (d *decoder) item(s kind.Spec, name string, n *node, what string) *topology.Item {
	it, _ := d.itemFields(s, name, n, what, nil)
	return it
}

// itemFields is item where n may also hold the sections named in extra
// (those of the kinds nested in the item, and sugar): it returns n's
// fields, with those sections, as well; nil when n is not a mapping.
func (d *decoder) itemFields(s kind.Spec, name string, n *node, what string, extra []string) (*topology.Item, fieldSet) {
	it := &topology.Item{Kind: s.Kind, Name: name, Secret: kind.SecretFields(s.Kind)}
	it.Pos = n.pos
	if ls := s.Item.List; ls != nil {
		l, ok := d.members(ls, n, what)
		if !ok {
			return nil, nil
		}
		if ls.By == "" {
			it.Settings = topology.Args{ls.Key: l}
			// Each member's place, by its index: upstreams[0].
			for i, e := range n.items {
				memberPos(it, fmt.Sprintf("%s[%d]", ls.Key, i), e)
			}
			return it, nil
		}
		it.Settings = topology.Args{}
		for i, m := range l {
			by, rest := ls.Entry(m.(map[string]any))
			it.Settings[by] = rest
			// Each entry's place, by what it is for (a topic
			// permission's exchange).
			if i < len(n.items) {
				memberPos(it, by, n.items[i])
			}
		}
		return it, nil
	}
	settings, f, failed, ok := d.settings(s.Item.Fields, n, what, it, extra...)
	if f == nil {
		return nil, nil
	}
	it.Settings = settings
	if validate := s.Item.Validate; validate != nil && !d.problems(validate(settings), f, failed, n, what) {
		return nil, f
	}
	if !ok {
		return nil, f
	}
	return it, f
}

// members decodes a list-shaped item: a list of mappings, each by ls's
// fields and checked by its Validate.
func (d *decoder) members(ls *kind.ListSpec, n *node, what string) ([]any, bool) {
	fields := ls.Fields
	if n.isNull() {
		return []any{}, true
	}
	if n.kind != seqNode {
		hint := "write a list of mappings: [{" + fields[0].Name + ": …}]"
		if ls.By != "" {
			hint = "write a list of " + braced(fields)
		}
		d.errs.addf(n.pos, hint, "%s: expected a list, got %s", what, describe(n))
		return nil, false
	}
	out := make([]any, 0, len(n.items))
	good := true
	seen := map[string]bool{} // ls.By's values
	for i, e := range n.items {
		ew := fmt.Sprintf("%s[%d]", what, i)
		if e.kind != mapNode {
			d.errs.addf(e.pos, "write a mapping: {"+fields[0].Name+": …}", "%s: expected a mapping, got %s", ew, describe(e))
			good = false
			continue
		}
		settings, f, failed, ok := d.settings(fields, e, ew, nil)
		if f != nil && !d.problems(ls.Validate(settings), f, failed, e, ew) {
			ok = false
		}
		if by, _ := settings[ls.By].(string); ls.By != "" && ok {
			if seen[by] {
				d.errs.addf(f.valuePos(ls.By), "give each "+ls.By+" once", "%s: %s %q is listed twice", ew, ls.By, by)
				good = false
				continue
			}
			seen[by] = true
		}
		good = good && ok
		out = append(out, map[string]any(settings))
	}
	return out, good
}

// problems reports the problems a Validate found, each at its field's value
// (at the entry of a list it names; the mapping's own position for the
// item as a whole), but those of a field whose value was already reported
// (failed) and those of a secret whose variables are not set (the value
// is not known offline); false when there is one.
func (d *decoder) problems(ps []kind.Problem, f fieldSet, failed map[string]bool, n *node, what string) bool {
	bad := false
	for _, p := range ps {
		at := problemNode(p, f)
		if failed[p.Field] || (at != nil && d.unset[at] != nil) {
			continue
		}
		bad = true
		pos, w := n.pos, what
		if p.Field != "" {
			w = label(what, p.Field)
			if f.has(p.Field) {
				pos = f.valuePos(p.Field)
			}
			if p.Item > 0 && at != nil {
				w, pos = fmt.Sprintf("%s[%d]", w, p.Item-1), at.pos
			}
		}
		d.errs.addf(pos, p.Hint, "%s: %s", w, p.Msg)
	}
	return !bad
}

// problemNode is the value problem p concerns: its field's, or the entry
// of that list it names; nil for none.
func problemNode(p kind.Problem, f fieldSet) *node {
	v := f.value(p.Field)
	if p.Item == 0 || v == nil {
		return v
	}
	if p.Item <= len(v.items) {
		return v.items[p.Item-1]
	}
	return nil
}

// settings decodes mapping n by fields, each left out set to its default
// (kind.Field.Default). it, when not nil, receives the variables secret
// fields were taken from (exactly ${VAR}). failed names the fields whose
// values were wrong (reported, and in settings as their type's zero); f
// is nil when n is not a mapping. n may also hold the keys in extra, which
// f holds and settings does not.
func (d *decoder) settings(fields []kind.Field, n *node, what string, it *topology.Item, extra ...string) (settings topology.Args, f fieldSet, failed map[string]bool, good bool) {
	known := append(kind.Names(fields), extra...)
	f, ok := d.fields(n, what, known)
	if !ok {
		return nil, nil, nil, false
	}
	settings = topology.Args{}
	failed = map[string]bool{}
	good = len(d.unknown(n, known)) == 0
	for _, fl := range fields {
		e, ok := f.get(fl.Name)
		if !ok {
			if v, ok := fl.DefaultOf(); ok {
				settings[fl.Name] = v
			}
			continue
		}
		secret := it != nil && it.IsSecret(fl.Name)
		v, ok := d.fieldValue(fl, secret, e.value, label(what, fl.Name))
		if !ok {
			good, failed[fl.Name] = false, true
		}
		settings[fl.Name] = v
		if it != nil {
			settingPos(it, fl.Name, e.value)
		}
		if secret {
			d.secretRef(it, fl.Name, e.value)
			// A list of URIs: each item may be a ${VAR} of its own.
			for i, el := range e.value.items {
				d.secretRef(it, topology.RefKey(fl.Name, i), el)
			}
		}
	}
	return settings, f, failed, good
}

// secretRef records in it where the file took secret setting key (or list
// item, topology.RefKey), scalar n, from: a variable (${VAR}, Item.Refs),
// or a variable with a default written in the file (${VAR:-default},
// Item.Defaults).
func (d *decoder) secretRef(it *topology.Item, key string, n *node) {
	if h, ok := d.errs.hidden[n]; ok {
		h.Secret = true
		d.errs.hidden[n] = h
	}
	if name, ok := d.refs[n]; ok {
		addRef(it, key, name)
		return
	}
	h, ok := d.errs.hidden[n]
	raw := h.Raw
	if !ok || !strings.HasPrefix(raw, "${") || !strings.HasSuffix(raw, "}") || strings.Count(raw, "${") != 1 {
		return
	}
	name, def, ok := strings.Cut(raw[2:len(raw)-1], ":-")
	if !ok || !validVarName(name) {
		return
	}
	if it.Defaults == nil {
		it.Defaults = map[string]topology.VarDefault{}
	}
	it.Defaults[key] = topology.VarDefault{Var: name, Default: def}
}

// settingPos records in it.ArgPos where the file writes setting key (n),
// and each entry of a table-valued one as key.entry (src-queue-args.x-max-length).
func settingPos(it *topology.Item, key string, n *node) {
	if it.ArgPos == nil {
		it.ArgPos = topology.NewArgPositions(0)
	}
	it.ArgPos.Set(key, n.pos)
	if n.kind == mapNode {
		for _, e := range n.entries {
			it.ArgPos.Set(key+"."+e.key.value, e.value.pos)
		}
	}
}

// memberPos records in it.ArgPos, as key, where the file writes list
// member n.
func memberPos(it *topology.Item, key string, n *node) {
	if it.ArgPos == nil {
		it.ArgPos = topology.NewArgPositions(0)
	}
	it.ArgPos.Set(key, n.pos)
}

// addRef records that secret setting key (or list item, topology.RefKey)
// of it was taken from variable name.
func addRef(it *topology.Item, key, name string) {
	if it.Refs == nil {
		it.Refs = map[string]string{}
	}
	it.Refs[key] = name
}

// unknown lists the keys of mapping n that are not in known (fields
// reported them).
func (d *decoder) unknown(n *node, known []string) []string {
	var out []string
	if n == nil || n.kind != mapNode {
		return nil
	}
	for _, e := range n.entries {
		if !slices.Contains(known, e.key.value) {
			out = append(out, e.key.value)
		}
	}
	return out
}

// fieldValue decodes n as a value of field fl; fw names it in errors. A
// secret's value is never quoted in an error.
func (d *decoder) fieldValue(fl kind.Field, secret bool, n *node, fw string) (any, bool) {
	switch fl.Type {
	case kind.FieldInt:
		return d.integer(n, fw, fl.Min, math.MaxInt64)
	case kind.FieldString:
		return d.stringField(fl, secret, n, fw)
	case kind.FieldBool:
		return d.boolean(n, fw)
	case kind.FieldNumber:
		return d.number(n, fw)
	case kind.FieldStrings:
		return d.stringList(secret, n, fw)
	case kind.FieldStringOrInt:
		return d.stringOrInt(n, fw)
	case kind.FieldTable:
		return d.table(n, fw)
	case kind.FieldNames:
		return d.names(fl, n, fw)
	}
	d.errs.addf(n.pos, "", "%s: mqctl cannot read a field of type %s: this is a bug in mqctl, please report it", fw, fl.Type)
	return nil, false
}

// stringField decodes a FieldString value: one of fl.Enum when it has
// one, a string otherwise.
func (d *decoder) stringField(fl kind.Field, secret bool, n *node, fw string) (any, bool) {
	if fl.Enum != nil {
		// Its values are public, even in a secret field: a variable in
		// it is needed offline too.
		return d.enum(n, fw, fl.Enum...)
	}
	if secret && d.unsetSecret(n, fw) {
		return n.value, true
	}
	if secret && !n.bad && !textual(n) {
		d.errs.addf(n.pos, "", "%s: expected a string, got %s", fw, describeSecret(n))
		return "", false
	}
	return d.str(n, fw)
}

// number decodes a FieldNumber value: an integer, or a finite float.
func (d *decoder) number(n *node, fw string) (any, bool) {
	if n.bad {
		return nil, false
	}
	if n.kind == scalarNode && typedTag(n) == tagInt {
		return d.integer(n, fw, math.MinInt64, math.MaxInt64)
	}
	if n.kind == scalarNode && typedTag(n) == tagFloat {
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			d.errs.addf(n.pos, "", "%s: %s is not a finite number", fw, n.value)
			return nil, false
		}
		return topology.Normalize(f), true
	}
	d.errs.addf(n.pos, quoteHintNumber(n), "%s: expected a number, got %s", fw, describe(n))
	return nil, false
}

// stringList decodes a FieldStrings value: one string, or a list of them.
func (d *decoder) stringList(secret bool, n *node, fw string) (any, bool) {
	if secret && d.unsetSecret(n, fw) {
		return n.value, true
	}
	if n.bad {
		return nil, false
	}
	if textual(n) {
		return n.value, true
	}
	if n.kind != seqNode {
		d.errs.addf(n.pos, "write one string, or a list of strings: [\"amqp://a\", \"amqp://b\"]", "%s: expected a string or a list of strings, got %s", fw, describeSecret(n))
		return nil, false
	}
	out := make([]any, 0, len(n.items))
	good := true
	for i, e := range n.items {
		if secret && d.unsetSecret(e, fmt.Sprintf("%s[%d]", fw, i)) {
			out = append(out, e.value)
			continue
		}
		if e.bad {
			good = false
			continue
		}
		if !textual(e) {
			d.errs.addf(e.pos, "quote it", "%s[%d]: expected a string, got %s", fw, i, describeSecret(e))
			good = false
			continue
		}
		out = append(out, e.value)
	}
	return out, good
}

// stringOrInt decodes a FieldStringOrInt value.
func (d *decoder) stringOrInt(n *node, fw string) (any, bool) {
	if n.bad {
		return nil, false
	}
	if n.kind == scalarNode && typedTag(n) == tagInt {
		return d.integer(n, fw, math.MinInt64, math.MaxInt64)
	}
	if textual(n) {
		return n.value, true
	}
	d.errs.addf(n.pos, "", "%s: expected a string or an integer, got %s", fw, describe(n))
	return nil, false
}

// table decodes a FieldTable value: a mapping, as arguments are.
func (d *decoder) table(n *node, fw string) (any, bool) {
	if n.bad {
		return nil, false
	}
	if n.kind != mapNode {
		d.errs.addf(n.pos, "write a mapping such as {x-queue-type: quorum}", "%s: expected a mapping, got %s", fw, describe(n))
		return nil, false
	}
	args, _, ok := d.args(n, fw, "{x-queue-type: quorum}")
	if args == nil {
		args = topology.Args{}
	}
	return map[string]any(args), ok
}

// names decodes a FieldNames value: a list of names, or one name, held
// as kind.TagList holds them.
func (d *decoder) names(fl kind.Field, n *node, fw string) (any, bool) {
	var nodes []*node
	switch n.kind {
	case seqNode:
		nodes = n.items
	case scalarNode:
		nodes = []*node{n}
	default:
		d.errs.addf(n.pos, fmt.Sprintf("write %s as a list, e.g. [%s]", fl.Name, fl.Example), "%s: expected a list of %s, got %s", fw, fl.Name, describe(n))
		return []any{}, false
	}
	var out []string
	good := true
	for i, e := range nodes {
		what := fw
		if n.kind == seqNode {
			what = fmt.Sprintf("%s[%d]", fw, i)
		}
		s, ok := d.name(e, what, "write a "+strings.TrimSuffix(fl.Name, "s")+" such as "+fl.Example)
		if ok {
			ok = d.joinable(s, e, what)
		}
		if ok {
			out = append(out, s)
		} else {
			good = false
		}
	}
	return kind.TagList(out), good
}

// joinable reports a name of a FieldNames value the broker would not
// keep as written: RabbitMQ takes the names joined by commas, splits them
// at each comma and trims each (measured on 4.3.6: tags ["a,b", " c"]
// are stored as a, b and c), so the next plan would change them again.
func (d *decoder) joinable(s string, n *node, what string) bool {
	switch {
	case strings.Contains(s, ","):
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		d.errs.addf(n.pos, "write each as its own list item: ["+strings.Join(parts, ", ")+"]",
			"%s: %q holds a comma, and RabbitMQ splits it there into several", what, s)
		return false
	case strings.TrimSpace(s) != s:
		d.errs.addf(n.pos, fmt.Sprintf("write %q", strings.TrimSpace(s)),
			"%s: %q starts or ends with a space, which RabbitMQ strips", what, s)
		return false
	}
	return true
}

// describeSecret is describe without the value: the value of a secret
// field is not shown even when it has the wrong type.
func describeSecret(n *node) string {
	switch {
	case n.kind == mapNode:
		return "a mapping"
	case n.kind == seqNode:
		return "a list"
	case n.tag == tagNull:
		return "null"
	case n.tag == tagBool:
		return "a boolean"
	case n.tag == tagInt:
		return "an integer"
	case n.tag == tagFloat:
		return "a number"
	}
	return "a string"
}
