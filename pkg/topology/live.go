package topology

import (
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
)

// Live is a broker's state as mqctl reads it: the topology, and what only
// a broker can tell about it. It is the one type of the live state:
// pkg/broker fills it in one read (broker.Client.Inspect), pkg/engine
// carries it, and the diff reads it (plan.Current holds it beside mqctl's
// ownership record), never copied into another shape on the way.
type Live struct {
	// State is the topology read: the vhosts read, the kinds carried as
	// items and the broker's own objects (users and their access). Until
	// the engine splits them off (ownership.Extract) it holds mqctl's
	// ownership records too.
	State *Topology
	// Server is the management API read (a URL without credentials),
	// Version the broker's RabbitMQ version, Source how the vhosts were
	// read (broker.SourceLists or broker.SourceDefinitions).
	Server, Version, Source string
	// Vhosts holds the metadata of every vhost read.
	Vhosts map[string]VhostInfo
	// Queues holds per vhost, per queue name, the queue's depth and
	// consumers, where the read asked for statistics.
	Queues map[string]map[string]QueueStats
	// Owned holds per vhost, per queue name, the owner of each queue the
	// broker reports as owned by a plugin (internal_owner, 4.1+), which
	// the broker protects from deletion by clients. The lists give it for
	// every queue; a definitions export has no such field, and holds none
	// (the placements tell it for the queues a plan would delete).
	Owned map[string]map[string]string
	// PropertiesKeys maps per vhost Binding.Key() to the broker's
	// properties_key, for the vhosts read from the lists: a definitions
	// export has none.
	PropertiesKeys map[string]map[string]string
	// Unread lists per vhost ("" for the broker's own objects) the kinds
	// the user could not read, and why (each with its Vhost): their
	// absence from State means "unknown", not "none".
	Unread map[string][]Unread
	// Fingerprint hashes the normalised state read (topology, item kinds
	// and vhost tags, not message counts): equal fingerprints mean nothing
	// a plan depends on changed. VhostsFingerprint leaves out the kinds
	// about users and their access. Both are computed once, at the end of
	// the read.
	Fingerprint       string
	VhostsFingerprint string
}

// VhostInfo is a vhost's metadata as the broker lists it.
type VhostInfo struct {
	Name             string   `json:"name"`
	Description      string   `json:"description,omitempty"`
	Tags             []string `json:"tags,omitempty"`
	DefaultQueueType string   `json:"default_queue_type,omitempty"`
	Tracing          bool     `json:"tracing,omitempty"`
	// Protected is true for a vhost protected from deletion (4.0.6+: POST
	// /api/vhosts/{vhost}/deletion/protection): the broker refuses to
	// delete it (412).
	Protected bool `json:"protected_from_deletion,omitempty"`
}

// Queue returns the statistics of queue name in vhost, and whether they
// were read.
func (l *Live) Queue(vhost, name string) (QueueStats, bool) {
	st, ok := l.Queues[vhost][name]
	return st, ok
}

// PropertiesKey returns the properties_key of b in vhost when the list
// path recorded it.
func (l *Live) PropertiesKey(vhost string, b *Binding) (string, bool) {
	k, ok := l.PropertiesKeys[vhost][b.Key()]
	return k, ok
}

// UnreadKind returns the entry of kind k in vhost of Unread, when the user
// could not read that kind there.
func (l *Live) UnreadKind(vhost string, k kind.Kind) (Unread, bool) {
	for _, u := range l.Unread[vhost] {
		if u.Kind == k {
			return u, true
		}
	}
	return Unread{}, false
}

// AllUnread returns every entry of Unread, by vhost then kind.
func (l *Live) AllUnread() []Unread {
	var out []Unread
	for _, us := range l.Unread {
		out = append(out, us...)
	}
	slices.SortFunc(out, func(a, b Unread) int {
		if c := strings.Compare(a.Vhost, b.Vhost); c != 0 {
			return c
		}
		return strings.Compare(string(a.Kind), string(b.Kind))
	})
	return out
}
