// Package ownership keeps mqctl's record of what it manages on the broker
// itself, so there is no local state file to lose or share.
//
// The record of a vhost is an internal exchange in that vhost named
// "mqctl.ownership.<generation>" whose arguments list the managed objects.
// An exchange is used because any user who may configure the vhost may
// declare one (no administrator tag needed), it survives restarts when
// durable, nobody can publish to an internal exchange, and it shows up,
// self-describing, in the management UI. Exchange arguments cannot change,
// so a new record is declared under the next generation before the old one
// is deleted: a crash in between leaves two records, and the newest wins.
// One record is one exchange, declared in one request, so it is written
// whole or not at all.
//
// Three formats exist (x-mqctl-format):
//
//   - 1 lists every object as a string "kind:name" in x-mqctl-managed.
//     It added 30-40% to the size of a vhost's definitions; it is still read,
//     and the next apply rewrites it in format 3.
//   - 2 holds the same sorted list, front-coded (each entry is the length
//     of the prefix it shares with the one before, then the rest) and
//     gzipped, as base64 in x-mqctl-managed-gzip: a list of strings of at
//     most ChunkSize characters, to be concatenated. x-mqctl-count is the
//     number of entries, checked on reading. It is 1-3% of the size of the
//     vhost's definitions (1k to 50k objects of the bench's topology).
//     Still read; the next apply rewrites it in format 3.
//   - 3 (written now) is format 2 with each entry followed by the print
//     of the object as mqctl wrote or adopted it (plan.Print, 4 bytes), so
//     that a plan tells mqctl's object from one declared again by hand
//     under the same name. Formats 1 and 2 kept no print: their entries
//     read as plan.NoPrint, which no plan deletes.
package ownership

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Prefix starts the name of every record exchange.
const Prefix = "mqctl.ownership."

// Argument names inside a record exchange.
const (
	ArgFormat = "x-mqctl-format"
	// ArgManaged is the plain list of format 1.
	ArgManaged = "x-mqctl-managed"
	// ArgCompressed is the compressed list of format 2.
	ArgCompressed = "x-mqctl-managed-gzip"
	// ArgCount is the number of entries of format 2.
	ArgCount = "x-mqctl-count"
)

// Formats of the record.
const (
	// FormatPlain is format 1, read but no longer written.
	FormatPlain = int64(1)
	// FormatCompressed is format 2, read but no longer written.
	FormatCompressed = int64(2)
	// FormatPrinted is format 3, the one written.
	FormatPrinted = int64(3)
	format        = FormatPrinted
)

// ChunkSize is the largest string of the compressed list's base64 text
// (RabbitMQ 3.10 and 4.0 take single arguments of several megabytes;
// short strings keep the management UI and definitions exports readable).
const ChunkSize = 64 << 10

// maxEntry bounds one decoded entry, so that a damaged record cannot make
// the reader allocate without limit.
const maxEntry = 1 << 20

// Record is the ownership record of one vhost, kept by one owner.
type Record struct {
	Vhost string
	// Owner is the owner whose record it is: the file's "owner:" ("" for
	// a file without one). Two teams that apply their own files to one
	// vhost each keep their own record (RecordName), and neither deletes
	// or changes what the other's lists.
	Owner string
	// Absorbed are the record objects of another owner whose record this
	// one took over (a file's owner: renamed or added, see
	// engine.PlanOptions.TakeOverFrom): exchanges of a vhost's record, or
	// the global parameter of the broker's own objects. Apply deletes them
	// once this record is written, listing what they listed.
	Absorbed []string
	// Generation of the newest record exchange (0 when there is none).
	Generation int64
	// Format of the newest record exchange (0 when there is none).
	Format int64
	// Exchanges are the names of every record exchange found (old
	// generations left by an interrupted write included).
	Exchanges []string
	// Managed holds the managed objects of the vhost, each with its print
	// (plan.NoPrint in a record of format 1 or 2).
	Managed map[plan.ObjectRef]plan.Print
	// Created are the objects of SPEC §9 the record lists that mqctl
	// created (ArgCreated): of the broker-level record's (Vhost ""), users
	// and user limits; of a vhost's, its limits, shovels, federation
	// upstreams and sets, permissions and topic permissions. Another such
	// entry was recorded by an mqctl that also recorded those a file named
	// that were on the broker before it (an applied export: guest, the
	// user mqctl logs in as, an operator's shovel), or adopted as a shovel
	// that deletes itself is: mqctl cannot tell whether it made it, and
	// deletes it only when asked (plan.Current.Created).
	Created map[plan.ObjectRef]bool
	// Kept are the objects of SPEC §9 the owner's file names that were on
	// the broker before mqctl (ArgKept, plan.Plan.Preexisting): users and
	// user limits in the broker-level record; a vhost's limits, shovels,
	// federation upstreams and sets, permissions and topic permissions in
	// the vhost's. Never mqctl's, so not in Managed and never deleted, but
	// listed so that other owners' plans see that this owner's file
	// declares them (plan.Current.Others), as an object both records list.
	Kept map[plan.ObjectRef]bool
	// RestoreLists are the names of the restore list exchanges found
	// (restore.go): each left by an apply that took bindings down with a
	// replace, not yet deleted.
	RestoreLists []string
	// Restore are the bindings they list (each once): taken down by an
	// interrupted replace, and not known to be back.
	Restore []*topology.Binding
}

// Outdated reports whether the record exists in a format older than the
// one written now: the next apply rewrites it.
func (r *Record) Outdated() bool {
	return r != nil && len(r.Exchanges) > 0 && r.Format < format
}

// IsRecord reports whether an exchange name belongs to a record, of any
// owner.
func IsRecord(name string) bool {
	_, _, ok := ParseRecordName(name)
	return ok
}

// RecordName is the name of the record exchange of owner, generation gen:
// "mqctl.ownership.<gen>" for the owner "" (a file without "owner:", as
// every mqctl before owners wrote it), "mqctl.ownership.<owner>.<gen>"
// otherwise.
func RecordName(owner string, gen int64) string {
	if owner == "" {
		return Prefix + strconv.FormatInt(gen, 10)
	}
	return Prefix + owner + "." + strconv.FormatInt(gen, 10)
}

// ParseRecordName reads a record exchange's owner and generation.
func ParseRecordName(name string) (owner string, gen int64, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found {
		return "", 0, false
	}
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		owner, rest = rest[:i], rest[i+1:]
		if topology.ValidOwner(owner) != nil {
			return "", 0, false
		}
	}
	if rest == "" || rest[0] == '+' || rest[0] == '-' {
		return "", 0, false
	}
	gen, err := strconv.ParseInt(rest, 10, 64)
	return owner, gen, err == nil
}

// Extract removes the record exchanges of every owner from t (they are
// mqctl's own bookkeeping, not part of the topology) and returns each
// vhost's record of the owner "" (a file without "owner:"). A record that
// cannot be read is an error naming it.
func Extract(t *topology.Topology) (map[string]*Record, error) {
	all, err := ExtractAll(t)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Record, len(all))
	for vn, byOwner := range all {
		out[vn] = byOwner[""]
	}
	return out, nil
}

// ExtractAll removes the record exchanges of every owner from t and
// returns, per vhost, each owner's record; the owner "" always has one
// (empty when there is none). A record that cannot be read is an error
// naming it.
func ExtractAll(t *topology.Topology) (map[string]map[string]*Record, error) {
	return ExtractAllWith(t, nil)
}

// ExtractAllWith is ExtractAll taking the records pre decoded beside the
// read (nil for none) instead of decoding them again.
func ExtractAllWith(t *topology.Topology, pre *Predecoded) (map[string]map[string]*Record, error) {
	out := map[string]map[string]*Record{}
	for _, vn := range t.VhostNames() {
		v := t.Vhosts[vn]
		byOwner := map[string]*Record{"": {Vhost: vn, Managed: map[plan.ObjectRef]plan.Print{}}}
		out[vn] = byOwner
		newest := map[string]*topology.Exchange{}
		for _, en := range v.ExchangeNames() {
			owner, gen, ok := ParseRecordName(en)
			if !ok {
				continue
			}
			rec := byOwner[owner]
			if rec == nil {
				rec = &Record{Vhost: vn, Owner: owner, Managed: map[plan.ObjectRef]plan.Print{}}
				byOwner[owner] = rec
			}
			rec.Exchanges = append(rec.Exchanges, en)
			if newest[owner] == nil || gen > rec.Generation {
				newest[owner], rec.Generation = v.Exchanges[en], gen
			}
		}
		for _, rec := range byOwner {
			for _, en := range rec.Exchanges {
				delete(v.Exchanges, en)
			}
		}
		lists, restore, err := extractRestores(vn, v)
		if err != nil {
			return nil, err
		}
		// The restore lists are the vhost's, whoever's apply wrote them:
		// every owner's next apply puts their bindings back.
		for _, rec := range byOwner {
			rec.RestoreLists, rec.Restore = lists, restore
		}
		// Bindings to or from a record exchange (or a restore list) are
		// not part of the topology either.
		mine := func(x string) bool { return IsRecord(x) || IsRestore(x) }
		kept := v.Bindings[:0]
		for _, b := range v.Bindings {
			if mine(b.Source) || (b.DestinationType == topology.DestExchange && mine(b.Destination)) {
				continue
			}
			kept = append(kept, b)
		}
		v.Bindings = kept
		for owner, e := range newest {
			rec := byOwner[owner]
			f, managed, ok := pre.take(vn, e)
			if ok {
				// Decoded into a map of its own, as decode makes one for
				// rec's, which nothing has filled yet.
				rec.Managed = managed
			} else {
				var err error
				if f, err = decode(vn, e, &rec.Managed, func(why string) error { return unreadable(vn, e.Name, owner, why) }); err != nil {
					return nil, err
				}
			}
			rec.Format, rec.Kept, rec.Created = f, readRefs(vn, e.Arguments[ArgKept]), readRefs(vn, e.Arguments[ArgCreated])
		}
	}
	return out, nil
}

// unreadable is the error of owner's record exchange name in vhost that
// cannot be read: it names whose it is, since only that owner's file can
// rebuild it (another team's plan refuses while it cannot be read, and
// its own file would not rebuild it).
func unreadable(vhost, name, owner, why string) error {
	who := plan.OwnerName(owner)
	return fmt.Errorf("ownership record %q in vhost %q, %s's, is unreadable (%s): delete that exchange, then apply %s's file again: that apply rebuilds the record from the file (until then every owner's plan for this vhost is refused: none can tell what the record lists)",
		name, vhost, who, why, who)
}

// decode reads the record exchange e of vhost into *into and returns its
// format; an empty *into is made anew, sized for the record (a record
// lists every object of a vhost, and growing the map to 10,000 entries
// was most of its decoding).
// bad makes the error of a record that cannot be read, saying why.
func decode(vhost string, e *topology.Exchange, into *map[plan.ObjectRef]plan.Print, bad func(why string) error) (int64, error) {
	f, ok := e.Arguments.Int(ArgFormat)
	if !ok || f < FormatPlain || f > FormatPrinted {
		return 0, bad(fmt.Sprintf("%s is %v, this mqctl reads %d to %d", ArgFormat, e.Arguments[ArgFormat], FormatPlain, FormatPrinted))
	}
	var entries []entry
	if f == FormatPlain {
		list, ok := e.Arguments[ArgManaged].([]any)
		if !ok && e.Arguments[ArgManaged] != nil {
			return 0, bad(ArgManaged + " is not a list")
		}
		for _, item := range list {
			s, ok := item.(string)
			if !ok {
				return 0, bad(fmt.Sprintf("entry %v is not a string", item))
			}
			entries = append(entries, entry{name: s})
		}
	} else {
		var err error
		if entries, err = decodeCompressed(e.Arguments, f == FormatPrinted); err != nil {
			return 0, bad(err.Error())
		}
	}
	if len(*into) == 0 {
		*into = make(map[plan.ObjectRef]plan.Print, len(entries))
	}
	for _, en := range entries {
		kind, name, ok := strings.Cut(en.name, ":")
		if !ok {
			return 0, bad(fmt.Sprintf("entry %q has no kind", en.name))
		}
		(*into)[plan.ObjectRef{Kind: plan.Kind(kind), Vhost: vhost, Name: name}] = en.print
	}
	return f, nil
}

// entry is one entry of a record: "kind:name" and the object's print.
type entry struct {
	name  string
	print plan.Print
}

// decodeCompressed reads the entries of a format 2 record, or of a format
// 3 one (printed).
func decodeCompressed(args topology.Args, printed bool) ([]entry, error) {
	count, ok := args.Int(ArgCount)
	if !ok || count < 0 {
		return nil, fmt.Errorf("%s is %v, not a count", ArgCount, args[ArgCount])
	}
	text, err := joinChunks(ArgCompressed, args[ArgCompressed])
	if err != nil {
		return nil, err
	}
	if len(text) == 0 {
		if count != 0 {
			return nil, fmt.Errorf("%s is empty but %s is %d", ArgCompressed, ArgCount, count)
		}
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%s is not base64: %v", ArgCompressed, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s is not gzip: %v", ArgCompressed, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s is cut short or damaged: %v", ArgCompressed, err)
	}
	entries, err := unfront(data, printed)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", ArgCompressed, err)
	}
	if int64(len(entries)) != count {
		return nil, fmt.Errorf("%s holds %d entries, %s says %d", ArgCompressed, len(entries), ArgCount, count)
	}
	return entries, nil
}

// front front-codes entries sorted by name: for each, the length of the
// prefix it shares with the one before and the length of the rest
// (uvarints), then the rest, then (printed) its print in 4 bytes.
func front(entries []entry, printed bool) []byte {
	var out []byte
	prev := ""
	for _, e := range entries {
		s := e.name
		n := 0
		for n < len(s) && n < len(prev) && s[n] == prev[n] {
			n++
		}
		out = binary.AppendUvarint(out, uint64(n))
		out = binary.AppendUvarint(out, uint64(len(s)-n))
		out = append(out, s[n:]...)
		if printed {
			out = binary.BigEndian.AppendUint32(out, uint32(e.print))
		}
		prev = s
	}
	return out
}

// unfront reverses front.
func unfront(data []byte, printed bool) ([]entry, error) {
	var out []entry
	prev := ""
	for len(data) > 0 {
		shared, n := binary.Uvarint(data)
		if n <= 0 {
			return nil, errors.New("damaged entry length")
		}
		data = data[n:]
		rest, n := binary.Uvarint(data)
		if n <= 0 {
			return nil, errors.New("damaged entry length")
		}
		data = data[n:]
		if shared > uint64(len(prev)) || rest > uint64(len(data)) || shared+rest > maxEntry {
			return nil, fmt.Errorf("entry %d does not fit (%d+%d bytes)", len(out)+1, shared, rest)
		}
		s := prev[:shared] + string(data[:rest])
		data = data[rest:]
		e := entry{name: s}
		if printed {
			if len(data) < 4 {
				return nil, fmt.Errorf("entry %d has no print", len(out)+1)
			}
			e.print = plan.Print(binary.BigEndian.Uint32(data))
			data = data[4:]
		}
		out = append(out, e)
		prev = s
	}
	return out, nil
}

// entries lists refs of vhost as entries sorted by "kind:name".
func entries(vhost string, refs map[plan.ObjectRef]plan.Print) []entry {
	out := make([]entry, 0, len(refs))
	for r, p := range refs {
		if r.Vhost == vhost {
			out = append(out, entry{name: string(r.Kind) + ":" + r.Name, print: p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Exchange builds the record exchange of generation gen listing refs (only
// the refs of vhost are kept), in the format written now, of the owner "".
func Exchange(vhost string, gen int64, refs map[plan.ObjectRef]plan.Print) *topology.Exchange {
	return compressedExchange(vhost, gen, refs, FormatPrinted)
}

// OwnerExchange is Exchange for owner's record.
func OwnerExchange(owner, vhost string, gen int64, refs map[plan.ObjectRef]plan.Print) *topology.Exchange {
	e := compressedExchange(vhost, gen, refs, FormatPrinted)
	e.Name = RecordName(owner, gen)
	return e
}

// CompressedExchange builds a record exchange in format 2, as mqctl wrote
// it before format 3 (for tests of reading and migrating old records).
func CompressedExchange(vhost string, gen int64, refs map[plan.ObjectRef]plan.Print) *topology.Exchange {
	return compressedExchange(vhost, gen, refs, FormatCompressed)
}

func compressedExchange(vhost string, gen int64, refs map[plan.ObjectRef]plan.Print, f int64) *topology.Exchange {
	list := entries(vhost, refs)
	var zbuf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zbuf, gzip.BestCompression)
	_, _ = zw.Write(front(list, f == FormatPrinted)) // a bytes.Buffer does not fail
	_ = zw.Close()
	return recordExchange(gen, topology.Args{
		ArgFormat:     f,
		ArgCount:      int64(len(list)),
		ArgCompressed: chunks(base64.StdEncoding.EncodeToString(zbuf.Bytes())),
	})
}

// chunks splits text into strings of at most ChunkSize characters: how a
// record (or a restore list) keeps a long text in an exchange argument.
func chunks(text string) []any {
	out := []any{}
	for len(text) > 0 {
		n := min(len(text), ChunkSize)
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// joinChunks is the text that chunks split into v, the value of argument
// arg (a single string is taken as it is, nil as "").
func joinChunks(arg string, v any) (string, error) {
	switch v := v.(type) {
	case []any:
		var text strings.Builder
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return "", fmt.Errorf("%s holds %v, not a string", arg, item)
			}
			text.WriteString(s)
		}
		return text.String(), nil
	case string:
		return v, nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("%s is not a list of strings", arg)
}

// PlainExchange builds a record exchange in format 1, as mqctl wrote it
// before format 2 (for tests of reading and migrating old records).
func PlainExchange(vhost string, gen int64, refs map[plan.ObjectRef]plan.Print) *topology.Exchange {
	list := entries(vhost, refs)
	items := make([]any, len(list))
	for i, e := range list {
		items[i] = e.name
	}
	return recordExchange(gen, topology.Args{ArgFormat: FormatPlain, ArgManaged: items})
}

func recordExchange(gen int64, args topology.Args) *topology.Exchange {
	return &topology.Exchange{
		Name:      RecordName("", gen),
		Type:      "fanout",
		Durable:   true,
		Internal:  true,
		Arguments: args,
	}
}

// Equal reports whether the record already lists exactly refs (for vhost)
// with the same prints, in one exchange of the format written now.
func (r *Record) Equal(refs map[plan.ObjectRef]plan.Print) bool {
	n := 0
	for ref, p := range refs {
		if ref.Vhost != r.Vhost {
			continue
		}
		n++
		if got, ok := r.Managed[ref]; !ok || got != p {
			return false
		}
	}
	return n == len(r.Managed) && len(r.Exchanges) <= 1 && len(r.Absorbed) == 0 && !r.Outdated()
}

// TakeOver returns r with from, another owner's record of the same vhost,
// merged into it: what either lists (r's print where both do), from's
// objects absorbed (Absorbed) so that apply writes r and deletes from.
// r and from are not changed.
func (r *Record) TakeOver(from *Record) *Record {
	out := *r
	out.Managed = make(map[plan.ObjectRef]plan.Print, len(r.Managed)+len(from.Managed))
	for ref, p := range from.Managed {
		out.Managed[ref] = p
	}
	for ref, p := range r.Managed {
		out.Managed[ref] = p
	}
	out.Absorbed = slices.Clip(r.Absorbed)
	if r.Created != nil || from.Created != nil {
		out.Created = make(map[plan.ObjectRef]bool, len(r.Created)+len(from.Created))
		maps.Copy(out.Created, from.Created)
		maps.Copy(out.Created, r.Created)
	}
	if r.Kept != nil || from.Kept != nil {
		out.Kept = make(map[plan.ObjectRef]bool, len(r.Kept)+len(from.Kept))
		maps.Copy(out.Kept, from.Kept)
		maps.Copy(out.Kept, r.Kept)
	}
	if r.Vhost == "" {
		if len(from.Managed) > 0 || len(from.Kept) > 0 {
			out.Absorbed = append(out.Absorbed, GlobalParameterOf(from.Owner))
		}
	} else {
		out.Absorbed = append(out.Absorbed, from.Exchanges...)
	}
	return &out
}

// Merge returns the per-vhost records as one managed set, for reading
// only: each record's own set, not a copy (at 50,000 objects a copy is
// 3.7 MB of a plan's peak memory). A record lists only objects of its
// own vhost ("" for the broker's own record), which is how the set looks
// them up.
func Merge(recs map[string]*Record) plan.Managed {
	out := plan.Managed{}
	for vh, r := range recs {
		if len(r.Managed) > 0 {
			out[vh] = r.Managed
		}
	}
	return out
}
