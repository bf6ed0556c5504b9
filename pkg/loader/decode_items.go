package loader

import (
	"fmt"
	"math"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/kinds"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The sections of a vhost that hold items of the generic kinds
// (pkg/kinds): each kind's section, decoded by its fields.

// itemSections returns the vhost fields of the generic kinds.
func itemSections() []string {
	var out []string
	for _, h := range kinds.All() {
		out = append(out, h.Spec().Section)
	}
	return out
}

// addItems records the generic kinds' sections of one file's vhost; a
// section is declared in one file only.
func (fd *fileDecoder) addItems(v *rawVhost, f fieldSet, what string) {
	for _, h := range kinds.All() {
		sec := h.Spec().Section
		n := f.value(sec)
		if n == nil {
			continue
		}
		if prev, ok := v.items[h.Spec().Kind]; ok {
			fd.d.errs.addf(n.pos, "declare it in one file only", "%s: %s is declared again (first at %s)", what, sec, prev.pos)
			continue
		}
		if v.items == nil {
			v.items = map[kind.Kind]*node{}
		}
		v.items[h.Spec().Kind] = n
	}
}

// buildItems decodes rv's generic sections into v.Items.
func (l *load) buildItems(rv *rawVhost, v *topology.Vhost) {
	what := fmt.Sprintf("vhost %q", rv.name)
	for _, h := range kinds.All() {
		n, ok := rv.items[h.Spec().Kind]
		if !ok {
			continue
		}
		sec := label(what, h.Spec().Section)
		switch h.Shape() {
		case kinds.Single:
			if it := l.d.item(h, rv.name, n, sec); it != nil {
				v.Items.Put(it)
			}
		case kinds.Named:
			if n.kind != mapNode {
				l.d.errs.addf(n.pos, "write a mapping from each "+h.Spec().Label+" name to its settings", "%s: expected a mapping of names, got %s", sec, describe(n))
				continue
			}
			for _, e := range n.entries {
				if it := l.d.item(h, e.key.value, e.value, fmt.Sprintf("%s %q", h.Spec().Label, e.key.value)); it != nil {
					it.Pos = e.key.pos
					v.Items.Put(it)
				}
			}
		}
	}
}

// item decodes one item of h's kind from n by h's fields; nil after an
// error.
func (d *decoder) item(h kinds.Handler, name string, n *node, what string) *topology.Item {
	fields := h.Fields()
	known := make([]string, len(fields))
	for i, fl := range fields {
		known[i] = fl.Name
	}
	f, ok := d.fields(n, what, known)
	if !ok {
		return nil
	}
	it := &topology.Item{Kind: h.Spec().Kind, Name: name, Settings: topology.Args{}, Secret: kinds.SecretFields(h)}
	it.Pos = n.pos
	good := true
	for _, fl := range fields {
		e, ok := f[fl.Name]
		if !ok {
			continue
		}
		fw := label(what, fl.Name)
		switch fl.Type {
		case kinds.Int:
			i, ok := d.integer(e.value, fw, fl.Min, math.MaxInt64)
			good = good && ok
			it.Settings[fl.Name] = i
		case kinds.String:
			s, ok := d.str(e.value, fw)
			good = good && ok
			it.Settings[fl.Name] = s
			if name, ok := d.refs[e.value]; ok && fl.Secret {
				if it.Refs == nil {
					it.Refs = map[string]string{}
				}
				it.Refs[fl.Name] = name
			}
		case kinds.Bool:
			b, ok := d.boolean(e.value, fw)
			good = good && ok
			it.Settings[fl.Name] = b
		}
	}
	if !good {
		return nil
	}
	return it
}
