package plan

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Print is a fingerprint of one object's definition as the diff compares
// it: two objects of a kind that the diff finds equal have the same print,
// and an object declared again with other settings (a queue with other
// arguments, a policy with another pattern) almost surely another (one in
// 2³² by chance). mqctl's ownership record keeps the print of each object
// next to its name, as mqctl wrote or adopted it, so that a plan deletes
// an object the file dropped only while it is still the one mqctl wrote:
// a name re-used by hand is not ownership.
//
// A binding has no definition beyond its identity; its print is made of
// its ends' prints, so that a binding between objects re-declared by hand
// is not mqctl's either. A permission, topic permission or user limit is
// also checked against its user's record entry when the plan decides
// (differ.leave). A vhost holds its own record, which goes with it: its
// print is a constant.
type Print uint32

// NoPrint is the print of an entry recorded by an older mqctl, which kept
// none, or of an object whose print is not known before the broker is read
// back (a user given a plaintext password: the broker salts its hash).
const NoPrint Print = 0

// hasher is 64-bit FNV-1a over the canonical parts of a definition, each
// ended by 0xff (a byte no UTF-8 text holds): a print is made without
// building those parts as strings first (a no-op plan of 50,000 objects
// prints them all).
type hasher uint64

func newHasher() *hasher {
	h := hasher(14695981039346656037)
	return &h
}

func (h *hasher) WriteByte(c byte) error {
	*h = (*h ^ hasher(c)) * 1099511628211
	return nil
}

func (h *hasher) WriteString(s string) (int, error) {
	x := *h
	for i := 0; i < len(s); i++ {
		x = (x ^ hasher(s[i])) * 1099511628211
	}
	*h = x
	return len(s), nil
}

func (h *hasher) Write(b []byte) (int, error) {
	x := *h
	for _, c := range b {
		x = (x ^ hasher(c)) * 1099511628211
	}
	*h = x
	return len(b), nil
}

// WriteQuoted writes s as its length and its bytes (topology's canonical
// form quotes strings; a hash needs them only unambiguous).
func (h *hasher) WriteQuoted(s string) {
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	h.WriteString(s)
}

// part writes one part and its end.
func (h *hasher) part(s string) *hasher {
	h.WriteString(s)
	h.WriteByte(0xff)
	return h
}

// flag writes a boolean part.
func (h *hasher) flag(b bool) *hasher {
	if b {
		return h.part("1")
	}
	return h.part("0")
}

// args writes an argument table (without the keys of skip) as a part.
func (h *hasher) args(a topology.Args, skip ...string) *hasher {
	a.WriteCanonical(h, skip...)
	h.WriteByte(0xff)
	return h
}

// print folds the hash into a Print (never NoPrint).
func (h *hasher) print() Print {
	p := Print(uint64(*h) ^ uint64(*h)>>32)
	if p == NoPrint {
		return 1
	}
	return p
}

// sum is the print of the canonical parts of a definition.
func sum(parts ...string) Print {
	h := newHasher()
	for _, p := range parts {
		h.part(p)
	}
	return h.print()
}

// vhostPrint is every vhost's print: a vhost's record lives in the vhost
// and goes with it, so an entry for a vhost is always its own.
var vhostPrint = sum("vhost")

// PrintOf is the print of o's definition, as its kind's Definition
// describes it (a queue's x-queue-type is left out of its arguments and
// its type printed on its own).
func PrintOf(o topology.Named) Print { return definitionPrint(o.Typed().Def(), o) }

// definitionPrint is the print of o as def describes it: def.Print, each
// setting (a flag as 1 or 0; a Later setting only when it is not at its
// default, topology.Setting.Printed), then the arguments, those of
// def.Forms in their form (arguments the diff finds equal print alike).
func definitionPrint[T any](def topology.Definition[T], o T) Print {
	h := newHasher().part(def.Print)
	for _, s := range def.Settings {
		v := s.Value(o)
		if !s.Printed(v) {
			continue
		}
		if s.Later {
			// Its key too: the parts of a print tell which settings are there.
			h.part(s.Key)
		}
		switch v := v.(type) {
		case bool:
			h.flag(v)
		case string:
			h.part(v)
		case int:
			h.part(strconv.Itoa(v))
		default:
			h.part(fmt.Sprint(v))
		}
	}
	args := def.Forms.Of(def.Args(o))
	if def.Skip != "" {
		return h.args(args, def.Skip).print()
	}
	return h.args(args).print()
}

// ItemPrint is the print of an object of a generic kind (its settings,
// those that are secrets masked: the record is readable by anyone who may
// read the vhost, and the print of a URI's password would let them test
// guesses). A user's print is its tags and the hash the broker stores (the
// record of users is a global parameter, which only administrators read,
// and they read the hash itself): NoPrint when the file gives a plaintext
// password, whose salted hash only the broker knows.
func ItemPrint(it *topology.Item) Print {
	if it.Kind == kind.User {
		hash, ok := it.Settings[kind.UserPasswordHash].(string)
		if !ok {
			if it.Settings.Has(kind.UserPassword) {
				return NoPrint
			}
			hash = "" // no password: the broker stores an empty hash
		}
		return newHasher().part("user").args(topology.Args{kind.UserTags: it.Settings[kind.UserTags]}).part(hash).print()
	}
	settings := it.Settings
	if spec, ok := kind.Of(it.Kind); ok && len(spec.Secret) > 0 {
		settings = settings.Clone()
		for _, k := range spec.Secret {
			if v, ok := settings[k]; ok {
				settings[k] = topology.MaskSecret(v)
			}
		}
	}
	return newHasher().part(string(it.Kind)).args(settings).print()
}

// BindingPrint is the print of binding b between ends of prints src and
// dst (EndPrint).
func BindingPrint(b *topology.Binding, src, dst Print) Print {
	h := newHasher().part("binding").part(b.Source).part(b.DestinationType).part(b.Destination).part(b.RoutingKey).args(b.Arguments)
	var ends [8]byte
	binary.BigEndian.PutUint32(ends[:4], uint32(src))
	binary.BigEndian.PutUint32(ends[4:], uint32(dst))
	h.Write(ends[:])
	return h.print()
}

// builtin reports whether exchange name is the broker's own (the default
// exchange, amq.*): never read into a state, never declared by a file.
func builtin(name string) bool { return name == "" || strings.HasPrefix(name, "amq.") }

// EndPrint is the print of a binding's end in vhost v (nil: none): the
// exchange or queue of that name, or a constant of its name when v holds
// none (the broker's own exchanges, which no state holds).
func EndPrint(v *topology.Vhost, k Kind, name string) Print {
	if k == kind.Exchange && builtin(name) {
		return sum("absent", string(k), name)
	}
	if o := ObjectIn(v, k, name); o != nil {
		return vhostKinds[k].print(o)
	}
	return sum("absent", string(k), name)
}

// ownedByUser reports whether objects of kind k belong to a user (named
// as the item, kind.Kind.Owner): they go with the user, and are never
// checked as mqctl's own once that user has been changed outside mqctl.
func ownedByUser(k Kind) bool {
	owner, ok := k.Owner()
	return ok && owner == kind.User
}

// Recorded is the ownership record an apply that wrote every object of t
// as it is would keep: each object (of the kinds t declares) with its
// print (NoPrint for a user given a plaintext password).
func Recorded(t *topology.Topology) map[ObjectRef]Print {
	out := map[ObjectRef]Print{}
	for _, c := range Diff(t, Current{}).Changes {
		out[c.Ref()] = c.Print
	}
	return out
}

// RecordedOf is Recorded(t) for the objects of refs only (those t lacks
// with NoPrint).
func RecordedOf(t *topology.Topology, refs map[ObjectRef]bool) map[ObjectRef]Print {
	all := Recorded(t)
	out := make(map[ObjectRef]Print, len(refs))
	for ref, ok := range refs {
		if ok {
			out[ref] = all[ref]
		}
	}
	return out
}
