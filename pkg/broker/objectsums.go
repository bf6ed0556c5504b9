package broker

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ObjectSum is one object of a state read, as the fingerprints hash it
// (Fingerprints), and the sum of its own print: a saved plan keeps them so
// that apply can name the objects that changed since the plan was made,
// where the fingerprint only tells that something did.
type ObjectSum struct {
	Kind  kind.Kind
	Vhost string
	// Name is the object's name; a binding's is its Binding's.
	Name    string
	Binding *topology.Binding
	// Access is true for the kinds about users and their access, which a
	// fingerprint of the vhosts only leaves out (VhostsPrefix).
	Access bool
	// Sum is the first 8 bytes of the SHA-256 of the object's print (its
	// fields, secrets included, which never leave the process but hashed).
	Sum uint64
}

// ObjectSums are the objects of t that Fingerprints hashes, each with the
// sum of its own print: the vhosts' metadata, their exchanges, queues,
// bindings and policies, and the items of every kind. It sorts the
// bindings of t's vhosts, and reads t otherwise.
func ObjectSums(t *topology.Topology, vhosts map[string]VhostInfo) []ObjectSum {
	var out []ObjectSum
	var buf bytes.Buffer
	w := &printWriter{w: bufio.NewWriterSize(&buf, 512)}
	enc := json.NewEncoder(w.w)
	add := func(s ObjectSum) {
		w.w.Flush()
		sum := sha256.Sum256(buf.Bytes())
		buf.Reset()
		s.Sum = binary.BigEndian.Uint64(sum[:8])
		out = append(out, s)
	}
	for _, name := range t.VhostNames() {
		v := t.Vhosts[name]
		v.SortBindings()
		_ = enc.Encode(vhostMeta(v, vhosts[name]))
		add(ObjectSum{Kind: kind.Vhost, Vhost: name, Name: name})
		for _, n := range v.ExchangeNames() {
			w.exchange(v.Exchanges[n])
			add(ObjectSum{Kind: kind.Exchange, Vhost: name, Name: n})
		}
		for _, n := range v.QueueNames() {
			w.queue(v.Queues[n])
			add(ObjectSum{Kind: kind.Queue, Vhost: name, Name: n})
		}
		for _, b := range v.Bindings {
			w.binding(b)
			add(ObjectSum{Kind: kind.Binding, Vhost: name, Binding: b})
		}
		for _, k := range kind.PolicyKinds() {
			for _, n := range v.PolicyNamesOf(k) {
				w.policy(k, v.PoliciesOf(k)[n])
				add(ObjectSum{Kind: k, Vhost: name, Name: n})
			}
		}
	}
	// The items, as itemsPrint hashes them.
	for _, s := range kind.Access() {
		k := s.Kind
		for _, n := range t.Items.Names(k) {
			_ = enc.Encode(t.Items.Get(k, n).Settings)
			add(ObjectSum{Kind: k, Name: n, Access: true})
		}
	}
	vhostOnly := map[kind.Kind]bool{}
	for _, s := range kind.VhostItems() {
		vhostOnly[s.Kind] = true
	}
	for _, vh := range t.VhostNames() {
		v := t.Vhosts[vh]
		for _, s := range kind.Items() {
			k := s.Kind
			for _, n := range v.Items.Names(k) {
				_ = enc.Encode(v.Items.Get(k, n).Settings) // normalised Args: always encodable
				add(ObjectSum{Kind: k, Vhost: vh, Name: n, Access: !vhostOnly[k]})
			}
		}
	}
	return out
}
