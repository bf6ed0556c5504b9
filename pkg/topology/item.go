package topology

import (
	"sort"

	"github.com/mqctl/mqctl/pkg/kind"
)

// Item is an object of a kind the broker changes in place and that mqctl
// handles through one generic path (pkg/kinds holds each such kind's own
// code): vhost limits today; users, permissions, shovels and federation
// objects next. Its identity is (kind, vhost, name); Settings are what the
// broker stores, normalised (Args.Normalized), as the file declares them
// and the broker reports them.
type Item struct {
	Kind     kind.Kind `json:"kind"`
	Name     string    `json:"name"`
	Settings Args      `json:"settings,omitempty"`
	Meta     `json:"-"`
}

// Items holds items by kind and name.
type Items map[kind.Kind]map[string]*Item

// Put adds it, replacing an item of the same kind and name.
func (s *Items) Put(it *Item) {
	if *s == nil {
		*s = Items{}
	}
	if (*s)[it.Kind] == nil {
		(*s)[it.Kind] = map[string]*Item{}
	}
	(*s)[it.Kind][it.Name] = it
}

// Get returns the item of kind k named name, nil when there is none.
func (s Items) Get(k kind.Kind, name string) *Item { return s[k][name] }

// Names returns the names of the items of kind k, sorted.
func (s Items) Names(k kind.Kind) []string {
	out := make([]string, 0, len(s[k]))
	for n := range s[k] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Delete removes the item of kind k named name.
func (s Items) Delete(k kind.Kind, name string) {
	delete(s[k], name)
	if len(s[k]) == 0 {
		delete(s, k)
	}
}
