package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/flow"
	pj "github.com/mqctl/mqctl/pkg/planjson"
)

// TestFlowJSONCarriesEveryField: every JSON field of a flow type is in
// the plan's JSON flow type too: the JSON plan carries what the text
// says. DeadLetterEnd.Refused (which messages a full queue dead-letters)
// was in mqctl diff's text and not in its JSON.
func TestFlowJSONCarriesEveryField(t *testing.T) {
	for _, tc := range []struct{ internal, public any }{
		{flow.Route{}, pj.FlowRoute{}}, {flow.Class{}, pj.FlowClass{}}, {flow.ClassSide{}, pj.FlowClassSide{}},
		{flow.DeadLetter{}, pj.FlowDead{}}, {flow.DeadLetterEnd{}, pj.FlowEnd{}}, {flow.DelayTier{}, pj.FlowTier{}},
		{flow.Silenced{}, pj.FlowQueue{}}, {flow.Expiring{}, pj.FlowExpiring{}}, {flow.Refusing{}, pj.FlowRefusing{}},
		{flow.Trimming{}, pj.FlowTrimming{}}, {flow.Link{}, pj.FlowLink{}}, {flow.Unlisted{}, pj.FlowUnlisted{}}, {flow.Tie{}, pj.FlowTie{}},
	} {
		public := map[string]bool{}
		pt := reflect.TypeOf(tc.public)
		for i := range pt.NumField() {
			public[jsonName(pt.Field(i))] = true
		}
		it := reflect.TypeOf(tc.internal)
		for i := range it.NumField() {
			if name := jsonName(it.Field(i)); name != "-" && !public[name] {
				t.Errorf("flow.%s's %q is not in planjson.%s", it.Name(), name, pt.Name())
			}
		}
	}
}

// jsonName is the name field f takes in JSON.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// TestFlowEndRoundTrip: an end with every field set comes back from the
// JSON plan as it went.
func TestFlowEndRoundTrip(t *testing.T) {
	e := &flow.DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: "k", KeyFromMessage: true, Queues: []string{"dlq"},
		Splits: []flow.Split{{Exchange: "h", Queues: []string{"dlq"}}}, Dropped: true, Why: "why", Held: true, Refused: true}
	v := reflect.ValueOf(*e)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the end leaves %s unset", v.Type().Field(i).Name)
		}
	}
	q := newQueueLists()
	doc := q.end(e)
	r := &listsRead{lists: q.lists}
	if back := r.end(doc, "end"); r.err != nil || !reflect.DeepEqual(back, e) {
		t.Errorf("through JSON (%v):\n%+v\nwant\n%+v", r.err, back, e)
	}
}
