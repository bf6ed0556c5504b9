package plan

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ObjectSum is one object of the broker's state as read, and the sum of
// its print (broker.ObjectSums): Access for the kinds about users and
// their access, which a plan of a file without a users section does not
// depend on.
type ObjectSum struct {
	ObjectRef
	Access bool
	Sum    uint64
}

// ObjectPrint is what a saved plan keeps of one object of the broker as
// read: its kind and vhost, a hash of its kind, vhost and name (ID), and
// the sum of its print (Sum). Apply compares them with the broker's when
// the fingerprint differs, to name what changed (StaleObjects). The saved
// plan writes 16 bytes an object, with its kind and vhost once for all of
// them: no name, and no value, is kept.
type ObjectPrint struct {
	Kind    Kind
	Vhost   string
	ID, Sum uint64
}

// refID is the ID of ref in an ObjectPrint.
func refID(r ObjectRef) uint64 {
	h := sha256.New()
	for _, s := range []string{string(r.Kind), r.Vhost, r.Name} {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// PrintsOf are the prints a saved plan keeps of objs, sorted by ID: all
// of them with access, those of kinds not about users otherwise (the
// fingerprint it keeps beside them, Live.Fingerprint or
// VhostsFingerprint, covers the same).
func PrintsOf(objs []ObjectSum, access bool) []ObjectPrint {
	out := make([]ObjectPrint, 0, len(objs))
	for _, o := range objs {
		if o.Access && !access {
			continue
		}
		out = append(out, ObjectPrint{Kind: o.Kind, Vhost: o.Vhost, ID: refID(o.ObjectRef), Sum: o.Sum})
	}
	slices.SortFunc(out, func(a, b ObjectPrint) int {
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Vhost, b.Vhost); c != 0 {
			return c
		}
		return cmpUint(a.ID, b.ID)
	})
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// savedPrints are the prints of the objects of one kind in one vhost,
// as a saved plan writes them: 16 bytes each (ID, Sum), in base64.
type savedPrints struct {
	Kind   Kind   `json:"kind"`
	Vhost  string `json:"vhost,omitempty"`
	Prints string `json:"prints"`
}

// encodePrints is prints (sorted by kind and vhost: PrintsOf) as a saved
// plan writes them.
func encodePrints(prints []ObjectPrint) []savedPrints {
	var out []savedPrints
	for i := 0; i < len(prints); {
		j := i
		b := make([]byte, 0, 16)
		for ; j < len(prints) && prints[j].Kind == prints[i].Kind && prints[j].Vhost == prints[i].Vhost; j++ {
			b = binary.BigEndian.AppendUint64(b, prints[j].ID)
			b = binary.BigEndian.AppendUint64(b, prints[j].Sum)
		}
		out = append(out, savedPrints{Kind: prints[i].Kind, Vhost: prints[i].Vhost, Prints: base64.StdEncoding.EncodeToString(b)})
		i = j
	}
	return out
}

// decodePrints reads what encodePrints wrote.
func decodePrints(saved []savedPrints) ([]ObjectPrint, error) {
	var out []ObjectPrint
	for _, g := range saved {
		b, err := base64.StdEncoding.DecodeString(g.Prints)
		if err != nil || len(b)%16 != 0 {
			return nil, fmt.Errorf("objects: not the prints of objects (%s in vhost %q)", g.Kind, g.Vhost)
		}
		for i := 0; i < len(b); i += 16 {
			out = append(out, ObjectPrint{Kind: g.Kind, Vhost: g.Vhost, ID: binary.BigEndian.Uint64(b[i:]), Sum: binary.BigEndian.Uint64(b[i+8:])})
		}
	}
	return out, nil
}

// What happened to an object since a saved plan was made (StaleObject.What).
const (
	StaleCreated = "created"
	StaleDeleted = "deleted"
	StaleChanged = "changed"
	// StaleUnread: the broker would not let mqctl read it now (its kind in
	// its vhost, or the vhost), which it did when the plan was made.
	StaleUnread = "no longer readable by this user"
)

// StaleObject is an object of the broker that is not as it was when a
// saved plan was made.
type StaleObject struct {
	ObjectRef
	What string
	// Record is true for the stand-in of mqctl's ownership records in
	// the vhost (their exchanges, named anew by each apply): another
	// apply wrote them since.
	Record bool
}

// Stale is what changed on the broker since a saved plan was made: the
// objects, and those deleted whose name neither the saved plan nor
// mqctl's records tell (Unnamed: how many of a kind in a vhost, in the
// order of the saved prints). Unknown is true when the saved plan keeps
// no prints of objects (saved by an older mqctl).
type Stale struct {
	Objects []StaleObject
	Unnamed []Unnamed
	// Unseen are the vhosts the broker no longer shows the user, each
	// with how many of the objects the plan saw there (itself included):
	// said once, not object by object.
	Unseen  []Unnamed
	Unknown bool
}

// Unnamed counts the objects of a kind in a vhost deleted since a saved
// plan was made whose names it does not keep.
type Unnamed struct {
	Kind  Kind
	Vhost string
	N     int
	// Unread: not deleted, as far as mqctl can tell, but no longer
	// readable by the user (StaleUnread).
	Unread bool
}

// StaleObjects compares the prints saved (Plan.ObjectPrints) with the
// broker's objects now (the same kinds: access as the saved fingerprint
// says). A deleted object is named by the first of known with its ID (the
// saved plan's and the records' objects); the others are counted. One
// whose kind in its vhost, or whose vhost, the broker would not let mqctl
// read now (unread, topology.Live.Unread) is not called deleted: it may
// be there still (StaleUnread).
func StaleObjects(saved []ObjectPrint, now []ObjectSum, access bool, known []ObjectRef, unread map[string][]topology.Unread) Stale {
	unreadable := func(k Kind, vhost string) bool {
		return slices.ContainsFunc(unread[vhost], func(u topology.Unread) bool { return u.Kind == k || u.Kind == kind.Vhost })
	}
	unseen := func(vhost string) bool {
		return slices.ContainsFunc(unread[vhost], func(u topology.Unread) bool { return u.Kind == kind.Vhost })
	}
	if len(saved) == 0 {
		return Stale{Unknown: true}
	}
	was := make(map[uint64]uint64, len(saved))
	for _, p := range saved {
		was[p.ID] = p.Sum
	}
	var s Stale
	seen := make(map[uint64]bool, len(now))
	for _, o := range now {
		if o.Access && !access {
			continue
		}
		id := refID(o.ObjectRef)
		seen[id] = true
		switch sum, ok := was[id]; {
		case !ok:
			s.Objects = append(s.Objects, StaleObject{ObjectRef: o.ObjectRef, What: StaleCreated})
		case sum != o.Sum:
			s.Objects = append(s.Objects, StaleObject{ObjectRef: o.ObjectRef, What: StaleChanged})
		}
	}
	gone := map[uint64]bool{}
	for _, p := range saved {
		switch {
		case seen[p.ID]:
		case p.Vhost != "" && unseen(p.Vhost):
			if n := len(s.Unseen); n > 0 && s.Unseen[n-1].Vhost == p.Vhost {
				s.Unseen[n-1].N++
			} else if i := slices.IndexFunc(s.Unseen, func(u Unnamed) bool { return u.Vhost == p.Vhost }); i >= 0 {
				s.Unseen[i].N++
			} else {
				s.Unseen = append(s.Unseen, Unnamed{Kind: kind.Vhost, Vhost: p.Vhost, N: 1, Unread: true})
			}
		default:
			gone[p.ID] = true
		}
	}
	for _, r := range known {
		if id := refID(r); gone[id] {
			what := StaleDeleted
			if unreadable(r.Kind, r.Vhost) {
				what = StaleUnread
			}
			s.Objects = append(s.Objects, StaleObject{ObjectRef: r, What: what})
			delete(gone, id)
		}
	}
	for _, p := range saved {
		if !gone[p.ID] {
			continue
		}
		u := unreadable(p.Kind, p.Vhost)
		if n := len(s.Unnamed); n > 0 && s.Unnamed[n-1].Kind == p.Kind && s.Unnamed[n-1].Vhost == p.Vhost {
			s.Unnamed[n-1].N++
			continue
		}
		s.Unnamed = append(s.Unnamed, Unnamed{Kind: p.Kind, Vhost: p.Vhost, N: 1, Unread: u})
	}
	slices.SortStableFunc(s.Objects, func(a, b StaleObject) int {
		switch {
		case refLess(a.ObjectRef, b.ObjectRef):
			return -1
		case refLess(b.ObjectRef, a.ObjectRef):
			return 1
		}
		return 0
	})
	return s
}

// staleShown is how many objects Stale.String names; the others are
// counted.
const staleShown = 5

// String says what changed, for apply's refusal of a stale saved plan:
// the first objects (kind, name, vhost, and created, deleted or changed),
// a count of the rest. Names only: no value of an object.
func (s Stale) String() string {
	if s.Unknown {
		return "the plan was saved by an older mqctl, which kept no print of each object to tell which changed"
	}
	var parts []string
	for i, o := range s.Objects {
		if i == staleShown {
			break
		}
		if o.Record {
			why := " (another apply ran since)"
			if o.What == StaleUnread {
				why = ""
			}
			parts = append(parts, fmt.Sprintf("mqctl's ownership record of vhost %q %s%s", o.Vhost, o.What, why))
			continue
		}
		where := ""
		if o.Vhost != "" && o.Kind.InVhostByName() {
			where = fmt.Sprintf(" in vhost %q", o.Vhost)
		}
		parts = append(parts, fmt.Sprintf("%s %s%s %s", o.Kind, shownName(o.Kind, o.Name), where, o.What))
	}
	if n := len(s.Objects) - staleShown; n > 0 {
		parts = append(parts, fmt.Sprintf("%d more %s", n, plural("object", n)))
	}
	for _, u := range s.Unseen {
		parts = append(parts, fmt.Sprintf("vhost %q and what the plan saw in it (%d %s) %s", u.Vhost, u.N, plural("object", u.N), StaleUnread))
	}
	for _, u := range s.Unnamed {
		what := string(u.Kind)
		if u.N != 1 {
			what = u.Kind.Plural()
		}
		where := ""
		if u.Vhost != "" && u.Kind.InVhostByName() {
			where = fmt.Sprintf(" in vhost %q", u.Vhost)
		}
		if u.Unread {
			parts = append(parts, fmt.Sprintf("%d %s%s %s (the plan keeps no name of %s)", u.N, what, where, StaleUnread, plural2("it", "them", u.N)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s%s deleted (the plan keeps no name of %s)", u.N, what, where, plural2("it", "them", u.N)))
	}
	if len(parts) == 0 {
		return "mqctl cannot tell which object"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// KnownRefs are the objects the saved plan names: those it changes,
// adopts, leaves alone or records, which name the objects deleted since
// it was made (StaleObjects).
func (p *Plan) KnownRefs() []ObjectRef {
	var out []ObjectRef
	for i := range p.Changes {
		out = append(out, p.Changes[i].Ref())
	}
	for _, l := range [][]ObjectRef{p.Adopt, p.Unmanaged, p.Preexisting, p.Kept, p.Stale} {
		out = append(out, l...)
	}
	for ref := range p.Prints {
		out = append(out, ref)
	}
	for _, o := range p.ChangedOutside {
		out = append(out, o.ObjectRef)
	}
	for _, o := range p.Others {
		out = append(out, o.ObjectRef)
	}
	for _, h := range p.Held {
		out = append(out, h.ObjectRef)
	}
	return out
}
