package flow

import (
	"maps"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestHeadersOnWayByKey: headersOnWay looked at every binding of each
// exchange that routes by key, for each class of messages (a plan
// replacing 12,500 queues behind a topic exchange: 1,000 classes times
// 12,500 bindings), and critsOnWay rendered the criteria of every binding
// of each headers exchange on the way, class by class. A side now indexes
// an exchange's bindings by key (keyedBindings) and its criteria
// (criteriaOf), once; the exchanges on the way are the same.
func TestHeadersOnWayByKey(t *testing.T) {
	v := topo(exchange("t", "topic", nil), exchange("d", "direct", nil), exchange("h", "headers", nil), exchange("h2", "headers", nil),
		exchange("ae", "headers", nil), exchange("withae", "topic", topology.Args{"alternate-exchange": "ae"}),
		queue("q1", nil), queue("q2", nil),
		bind("t", "q1", "a.*"), bindExchange("t", "h", "a.*"), bindExchange("t", "d", "b.#"), bind("t", "q2", "c"),
		bindExchange("d", "h2", "x"), bind("d", "q1", "y"),
		bindHeaders("h", "q1", topology.Args{"x-match": "all", "k": "v"}), bindHeaders("h", "q2", topology.Args{"x-match": "all", "k": "v"}), bindHeaders("h", "q2", nil),
		bindHeaders("h2", "q1", nil),
		bind("withae", "q1", "z")).Vhosts["/"]
	s := newSide(v, "/", rmqversion.Default)
	pat := func(text string, literal bool) keyPattern { return keyPattern{text: text, literal: literal} }
	for _, tt := range []struct {
		name    string
		start   string
		matched []keyPattern
		want    []string
	}{
		{"a topic key leading to a headers exchange", "t", []keyPattern{pat("a.*", false)}, []string{"h"}},
		{"a literal key does not match a topic pattern", "t", []keyPattern{pat("a.*", true)}, nil},
		{"through a direct exchange", "t", []keyPattern{pat("b.#", false), pat("x", true)}, []string{"h2"}},
		{"a key that binds queues only", "t", []keyPattern{pat("c", false)}, nil},
		{"both", "t", []keyPattern{pat("a.*", false), pat("b.#", false), pat("x", true)}, []string{"h", "h2"}},
		{"no binding matched: the alternate exchange", "withae", []keyPattern{pat("other", false)}, []string{"ae"}},
		{"a binding matched: not the alternate exchange", "withae", []keyPattern{pat("z", false)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := map[keyPattern]bool{}
			for _, p := range tt.matched {
				m[p] = true
			}
			got := s.headersOnWay(tt.start, m)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("headersOnWay(%s, %v) = %v; want %v", tt.start, tt.matched, got, tt.want)
			}
		})
	}
	if got, want := slices.Sorted(maps.Keys(s.keyedBindings("t"))), []string{"a.*", "b.#", "c"}; !slices.Equal(got, want) {
		t.Errorf("keyedBindings(t) has keys %v; want %v", got, want)
	}
	if got := s.keyedBindings("t")["c"]; len(got) != 0 {
		t.Errorf("keyedBindings(t)[c] = %v; want no exchange (it binds a queue)", got)
	}
	if got, want := s.criteriaOf("h"), []string{criteriaText(nil), criteriaText(topology.Args{"x-match": "all", "k": "v"})}; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("criteriaOf(h) = %q; want %q, each once", got, want)
	}
}
