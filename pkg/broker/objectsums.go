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
	printVhostObjects(t, vhosts, w, enc, add)
	printItems(t, true, enc, add)
	return out
}
