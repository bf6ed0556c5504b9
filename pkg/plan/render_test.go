package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"
	"github.com/mqctl/mqctl/pkg/kind"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/topology"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	gold.Check(t, filepath.Join("testdata", name), got)
}

func samplePlan() *Plan {
	desired := vh("/", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Queues["orders.shipping"] = q("orders.shipping", topology.Args{"x-max-priority": int64(10), "x-dead-letter-exchange": "orders.dlx"})
		v.Queues["fresh"] = q("fresh", topology.Args{"x-message-ttl": int64(60000)})
		v.Queues["fresh"].Pos = topology.Pos{File: "topology.yaml", Line: 9, Col: 7}
		v.Bindings = []*topology.Binding{bind("orders", "orders.shipping", "order.created")}
		v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: "^events\\.", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(100000)}}
	})
	current := vh("/", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Queues["orders.shipping"] = q("orders.shipping", topology.Args{"x-dead-letter-exchange": "orders.dlx"})
		v.Queues["old"] = q("old", nil)
		v.Queues["theirs"] = q("theirs", nil)
		v.Queues["hand"] = q("hand", nil)
		v.Bindings = []*topology.Binding{bind("orders", "orders.shipping", "order.created")}
		v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: "^events\\.", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(50000)}}
	})
	managed := map[ObjectRef]bool{{kind.Queue, "/", "old"}: true, {kind.Queue, "/", "orders.shipping"}: true}
	stats := map[string]map[string]QueueStats{"/": {"old": {Messages: 3}, "orders.shipping": {Messages: 12, Consumers: 2}}}
	record := RecordedOf(current, managed)
	// mqctl made "hand" with a length limit; it was declared again by hand
	// without one. It made "gone" too, deleted by hand since.
	record[ObjectRef{kind.Queue, "/", "hand"}] = PrintOf(q("hand", topology.Args{"x-max-length": int64(5)}))
	record[ObjectRef{kind.Queue, "/", "gone"}] = 77
	p := Diff(desired, Current{Live: topology.Live{State: current, Queues: stats, Fingerprint: "abc123"}, Managed: ManagedOf(record)})
	for i := range p.Changes {
		if p.Changes[i].Name == "old" {
			// Two of old's messages wait for a delayed retry (RabbitMQ
			// 4.3), one to be dead-lettered (at least once): apply counts
			// them before it deletes the queue.
			p.Changes[i].Delayed, p.Changes[i].DeadLettering = 2, 1
		}
	}
	return p
}

func TestRenderText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, samplePlan(), RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan.txt", buf.Bytes())

	buf.Reset()
	if err := WriteText(&buf, samplePlan(), RenderOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("\x1b[35m-/+\x1b[0m queue")) {
		t.Errorf("colour output should paint the replace marker:\n%q", buf.String())
	}

	buf.Reset()
	if err := WriteText(&buf, Diff(topology.New(), Current{Live: topology.Live{State: topology.New()}}), RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "No changes. The broker matches the file.\n" {
		t.Errorf("empty plan renders %q", got)
	}
}

// objectPos ignores the positions of the objects in a change: a change
// carries its own (Change.Pos), and neither JSON document repeats it in the
// objects.
var objectPos = cmpopts.IgnoreFields(topology.Meta{}, "Pos", "ArgPos")

// The JSON plan is the public contract (docs/plan-json.md): its golden
// file pins the shape; read back, it is the plan without the fingerprint
// and the prints, which only the saved plan carries.
func TestJSONRoundTrip(t *testing.T) {
	p := samplePlan()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan.json", buf.Bytes())
	for _, s := range []string{`"pos": {}`, `"fingerprint"`, "abc123"} {
		if bytes.Contains(buf.Bytes(), []byte(s)) {
			t.Errorf("the JSON plan carries %s", s)
		}
	}
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := *p
	want.Fingerprint, want.Prints = "", nil
	want.Changes = append([]Change(nil), p.Changes...)
	for i := range want.Changes {
		want.Changes[i].Print, want.Changes[i].BindingPrints = NoPrint, nil
	}
	if diff := cmp.Diff(&want, back, objectPos); diff != "" {
		t.Errorf("plan changed through JSON (-before +after):\n%s", diff)
	}
	for _, doc := range []string{`{"format_version":"99","changes":[]}`, `{"format_version":"1","changes":[]}`} {
		if _, err := ReadJSON(bytes.NewBufferString(doc)); err == nil {
			t.Errorf("a plan of another format version must be refused: %s", doc)
		}
	}

	buf.Reset()
	if err := WriteJSON(&buf, Diff(topology.New(), Current{Live: topology.Live{State: topology.New()}})); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan-empty.json", buf.Bytes())
}

// The saved plan is private to apply: it carries everything, fingerprint
// included, and comes back as the same plan.
func TestSavedRoundTrip(t *testing.T) {
	p := samplePlan()
	p.Vhosts = []string{"/"}
	p.Adopt = []ObjectRef{{kind.Exchange, "/", "orders"}}
	p.Changes[0].MessagesAtLeast = true
	p.Changes[0].Messages, p.Changes[0].Delayed, p.Changes[0].DeadLettering = 5, 2, 1
	var buf bytes.Buffer
	if err := WriteSaved(&buf, p); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"kind": "mqctl-saved-plan"`, `"version": 7`, `"fingerprint": "abc123"`, "private to mqctl"} {
		if !bytes.Contains(buf.Bytes(), []byte(s)) {
			t.Errorf("the saved plan lacks %s:\n%s", s, buf.String())
		}
	}
	if bytes.Contains(buf.Bytes(), []byte(`"format_version"`)) {
		t.Errorf("the saved plan looks like the JSON plan:\n%s", buf.String())
	}
	back, err := ReadSaved(&buf, "plan.bin")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back, objectPos); diff != "" {
		t.Errorf("plan changed through the saved plan (-before +after):\n%s", diff)
	}
}

func TestReadSavedRefuses(t *testing.T) {
	var public bytes.Buffer
	if err := WriteJSON(&public, samplePlan()); err != nil {
		t.Fatal(err)
	}
	again := `make it again with "mqctl plan --out my.plan"`
	for _, tc := range []struct{ name, doc, want string }{
		{"the JSON plan", public.String(), `my.plan is a JSON plan (format_version "3"`},
		{"a saved plan of mqctl 0.x (the old shared shape)", `{"format_version":"1","changes":[],"fingerprint":"x"}`, `my.plan is a JSON plan (format_version "1"`},
		{"an older version", `{"kind":"mqctl-saved-plan","version":2,"changes":[]}`, "my.plan is a saved plan of version 2, and this mqctl reads versions 3 to 7 only"},
		{"a newer version", `{"kind":"mqctl-saved-plan","version":8,"changes":[]}`, "my.plan is a saved plan of version 8, and this mqctl reads versions 3 to 7 only"},
		{"another kind", `{"kind":"something"}`, `my.plan is not a saved plan (kind "something"`},
		{"not JSON", `hello`, "my.plan is not a saved plan ("},
		{"an unknown field", `{"kind":"mqctl-saved-plan","version":3,"changes":[],"extra":1}`, "my.plan is not a valid saved plan ("},
		// A saved plan edited by hand or damaged: apply panicked on these
		// (an interface conversion, a Go stack trace) before.
		{"a create without its object", `{"kind":"mqctl-saved-plan","version":3,"changes":[{"action":"create","kind":"policy","vhost":"v","name":"cap"}]}`,
			`my.plan is not a valid saved plan (change 1, policy "cap" in vhost "v": a create without its "after" object)`},
		{"a change of one kind with an object of another", `{"kind":"mqctl-saved-plan","version":3,"changes":[{"action":"create","kind":"queue","vhost":"v","name":"cap","after":{"policy":{"name":"cap","pattern":"^q$","definition":{"max-length":10}}}}]}`,
			`my.plan is not a valid saved plan (change 1, queue "cap" in vhost "v": its "after" object is no queue)`},
		{"a replace without the object it replaces", `{"kind":"mqctl-saved-plan","version":3,"changes":[{"action":"replace","kind":"queue","vhost":"v","name":"q","after":{"queue":{"name":"q"}}}]}`,
			`my.plan is not a valid saved plan (change 1, queue "q" in vhost "v": a replace without its "before" object)`},
		{"a delete of a binding holding a queue", `{"kind":"mqctl-saved-plan","version":3,"changes":[{"action":"delete","kind":"binding","vhost":"v","name":"b","before":{"queue":{"name":"q"}}}]}`,
			`my.plan is not a valid saved plan (change 1, binding "b" in vhost "v": its "before" object is no binding)`},
		{"an empty binding taken down", `{"kind":"mqctl-saved-plan","version":3,"changes":[{"action":"replace","kind":"exchange","vhost":"v","name":"ex","before":{"exchange":{"name":"ex","type":"direct"}},"after":{"exchange":{"name":"ex","type":"topic"}},"bindings":[null]}]}`,
			`my.plan is not a valid saved plan (change 1, exchange "ex" in vhost "v": an empty binding among those it takes down)`},
		{"an unknown action", `{"kind":"mqctl-saved-plan","version":3,"changes":[{"action":"bogus","kind":"queue","vhost":"v","name":"q","after":{"queue":{"name":"q"}}}]}`,
			`my.plan is not a valid saved plan (change 1, queue "q" in vhost "v": unknown action "bogus")`},
	} {
		_, err := ReadSaved(bytes.NewBufferString(tc.doc), "my.plan")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), again) {
			t.Errorf("%s: ReadSaved = %v, want an error saying %q and %q", tc.name, err, tc.want, again)
		}
	}
}

// The saved plan carries every field of a change and of a plan (but the
// public format_version, the preflight's answer, which apply asks for
// again, and the vhosts whose queues are deleted first, which apply
// decides again from the limits it reads): a field added to Change must be
// added to the saved plan too, or apply would lose it between plan --out
// and apply.
func TestSavedCarriesEveryField(t *testing.T) {
	for _, tc := range []struct {
		internal, saved any
		skip            []string
	}{
		{Change{}, savedChange{}, nil},
		{FieldChange{}, savedField{}, nil},
		// A plan with conflicts, or any refusal, is refused: never saved.
		{Plan{}, savedPlan{}, []string{"FormatVersion", "Preflight", "QueuesDeletedFirst", "Conflicts", "Refusals"}},
	} {
		it, st := reflect.TypeOf(tc.internal), reflect.TypeOf(tc.saved)
		for i := range it.NumField() {
			if name := it.Field(i).Name; !slices.Contains(tc.skip, name) {
				if _, ok := st.FieldByName(name); !ok {
					t.Errorf("%s.%s is not in the saved plan (%s)", it.Name(), name, st.Name())
				}
			}
		}
	}
}

// TestHeld: what mqctl holds back leaves the changes, keeps its order and
// its reason, and every form of the plan shows it: the text (the reason
// said once for the changes that share it), the JSON plan and the saved
// plan.
func TestHeld(t *testing.T) {
	p := samplePlan()
	before := len(p.Changes)
	down := `queue "orders.shipping" in vhost "/" lives on node rabbit@b, which is down`
	p.HoldBack(func(c *Change) (string, string) {
		switch {
		case c.Kind == kind.Queue && c.Name == "orders.shipping":
			return HeldNodeDown, down
		case c.Kind == kind.Binding && strings.Contains(c.Name, "orders.shipping"):
			return HeldNodeDown, down
		case c.Kind == kind.Queue && c.Name == "old":
			return HeldInternalOwner, `the broker reports it owned by shovel "sh" (internal_owner)`
		}
		return "", ""
	})
	var held []string
	for _, h := range p.Held {
		held = append(held, string(h.Action)+" "+string(h.Kind)+" "+h.Name+" "+h.Cause)
	}
	want := []string{"delete queue old internal_owner", "replace queue orders.shipping node_down"}
	if diff := cmp.Diff(want, held); diff != "" {
		t.Errorf("held (-want +got):\n%s", diff)
	}
	if len(p.Changes) != before-2 {
		t.Errorf("%d changes left of %d, want 2 fewer", len(p.Changes), before)
	}
	for _, c := range p.Changes {
		if c.Name == "old" || c.Name == "orders.shipping" {
			t.Errorf("a held change is still planned: %s %s %s", c.Action, c.Kind, c.Name)
		}
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, p, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan-held.txt", buf.Bytes())

	buf.Reset()
	if err := WriteJSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.Held, back.Held); diff != "" {
		t.Errorf("held through the JSON plan (-before +after):\n%s", diff)
	}
	buf.Reset()
	if err := WriteSaved(&buf, p); err != nil {
		t.Fatal(err)
	}
	saved, err := ReadSaved(&buf, "plan.saved")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.Held, saved.Held); diff != "" {
		t.Errorf("held through the saved plan (-before +after):\n%s", diff)
	}

	// Nothing left but what is held: the plan says so, never "the broker
	// matches the file".
	p.HoldBack(func(*Change) (string, string) { return HeldOwnUser, "mqctl is connected as that user" })
	buf.Reset()
	if err := WriteText(&buf, p, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); strings.Contains(got, "No changes") || !strings.HasPrefix(got, "Only mqctl's ownership record changes: apply updates it, and changes no object on the broker; mqctl holds back what differs from the file (below).\n") {
		t.Errorf("a plan with held changes that rewrites the record:\n%s", got)
	}
	p.Adopt, p.Prints, p.Stale, p.ChangedOutside = nil, nil, nil, nil
	buf.Reset()
	if err := WriteText(&buf, p, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); strings.Contains(got, "The broker matches the file") || strings.Contains(got, "No changes") || !strings.HasPrefix(got, "Nothing for apply to change: the broker differs from the file, but mqctl holds back all 4 changes (below).\n") {
		t.Errorf("a plan with only held changes:\n%s", got)
	}
}

// TestDocsNameTheSavedVersion: docs/plan-json.md tells which version of
// the saved plan this mqctl writes (a plan saved by another is refused).
func TestDocsNameTheSavedVersion(t *testing.T) {
	page, err := os.ReadFile("../../docs/plan-json.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("today `%d`", SavedVersion); !strings.Contains(string(page), want) {
		t.Errorf("docs/plan-json.md does not say %q: SavedVersion changed without it", want)
	}
}

// TestShow: the text view shows values as written: a URI's & and a
// regexp's < and > are not escaped as in JSON (\u0026, \u003c).
func TestShow(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, "(none)"},
		{"amqps://u:***@h/v?heartbeat=10&connection_timeout=5000", `"amqps://u:***@h/v?heartbeat=10&connection_timeout=5000"`},
		{map[string]any{"write": "^(?<a>x)|y>z$", "n": int64(5)}, `{"n":5,"write":"^(?<a>x)|y>z$"}`},
		{[]any{"a&b"}, `["a&b"]`},
	} {
		if got := show(c.in); got != c.want {
			t.Errorf("show(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestRenderAtStake: the at-stake line of a queue deleted or replaced
// says what the plan knows: exact figures, a lower bound, or, for a
// stream whose lagging statistics count nothing yet, that the messages
// are unknown, never that nothing is at stake.
func TestRenderAtStake(t *testing.T) {
	for _, tc := range []struct {
		name      string
		messages  int64
		consumers int64
		atLeast   bool
		want      string // "" for no at-stake line
	}{
		{name: "empty", want: ""},
		// What becomes of them, and that apply refuses it without the
		// flag (apply.Check): before, the line gave the figures alone.
		{name: "exact", messages: 3, consumers: 1, want: "at stake: 3 messages, 1 consumer: the messages are lost and the consumers cancelled with the queue, and apply refuses this without --allow-data-loss"},
		{name: "lower bound", messages: 1, atLeast: true, want: "at stake: at least 1 message, 0 consumers: the messages are lost with the queue, and apply refuses this without --allow-data-loss"},
		{name: "consumers alone", consumers: 2, want: "at stake: 0 messages, 2 consumers: the consumers cancelled with the queue, and apply refuses this without --allow-data-loss"},
		{name: "stream counted none yet", atLeast: true, want: "at stake: messages unknown (the stream's statistics count none, but they lag by seconds; apply reads the stream before it deletes it), 0 consumers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{Changes: []Change{{Action: Delete, Kind: kind.Queue, Vhost: "/", Name: "s",
				Before:   Object(&topology.Queue{Name: "s", Type: topology.QueueStream, Durable: true}),
				Messages: tc.messages, Consumers: tc.consumers, MessagesAtLeast: tc.atLeast}}}
			var buf bytes.Buffer
			if err := WriteText(&buf, p, RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, "at stake:") {
					got = strings.TrimSpace(l)
				}
			}
			if got != tc.want {
				t.Errorf("at-stake line %q, want %q in:\n%s", got, tc.want, buf.String())
			}
		})
	}
}

// TestSavedEnvValues: a saved plan keeps the values the file took from the
// environment that it holds anyway, with what the file wrote, so that
// applying it shows none of them; never a secret's value, nor one it does
// not hold as a whole.
func TestSavedEnvValues(t *testing.T) {
	p := samplePlan()
	p.Env = topology.EnvValues{
		{Value: "orders.shipping", Raw: "${Q}"},
		{Value: "orders", Raw: "${PW}", Secret: true},
		{Value: "order", Raw: "${PART}"},
		{Value: "not-in-the-plan", Raw: "${ABSENT}"},
		{Value: "60000", Raw: "${TTL}", Key: "x-message-ttl"}, // a number
	}
	var buf bytes.Buffer
	if err := WriteSaved(&buf, p); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"${PW}", "${PART}", "${ABSENT}", "not-in-the-plan"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("the saved plan holds %s:\n%s", s, buf.String())
		}
	}
	back, err := ReadSaved(&buf, "plan.saved")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(topology.EnvValues{{Value: "orders.shipping", Raw: "${Q}"}, {Value: "60000", Raw: "${TTL}", Key: "x-message-ttl"}}, back.Env); diff != "" {
		t.Errorf("env values through the saved plan (-want +got):\n%s", diff)
	}
}

// TestPlanShowsNoEnvValues: the text and JSON plans show what the file
// wrote (${VAR}) for a value it took from the environment, which may be a
// secret: a created queue's argument, the after side of a changed field
// (short or long), a binding's key in its name; a JSON field change whose
// value is one says so (from_env) and keeps the field, so that a program
// sees it change. Without values from the environment the plan is as
// before (the goldens).
func TestPlanShowsNoEnvValues(t *testing.T) {
	p := samplePlan()
	p.Env = topology.NewEnvValues([]topology.EnvValue{
		{Value: "10", Raw: "${PRI}", Key: "x-max-priority"},
		{Value: "60000", Raw: "${TTL}", Key: "message_ttl"},
		{Value: "100000", Raw: "${CAP}", Key: "max-length"},
		{Value: "order.created", Raw: "${RK}", Key: "routing_key"},
	})
	var buf bytes.Buffer
	if err := WriteText(&buf, p, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{
		"~ arguments.x-max-priority: (none) → ${PRI} (its value not shown)",
		"x-message-ttl: ${TTL} (its value not shown)",
		"~ definition.max-length: 50000 → ${CAP} (its value not shown)",
		"orders -> queue orders.shipping [${RK}]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text plan does not say %q:\n%s", want, text)
		}
	}
	for _, never := range []string{"60000", "100000", "order.created", "→ 10"} {
		if strings.Contains(text, never) {
			t.Errorf("the text plan shows %q:\n%s", never, text)
		}
	}
	buf.Reset()
	if err := WriteJSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	for _, never := range []string{"60000", "100000", "order.created", `"after": 10`} {
		if strings.Contains(buf.String(), never) {
			t.Errorf("the JSON plan shows %q:\n%s", never, buf.String())
		}
	}
	var doc struct {
		Changes []struct {
			Name   string `json:"name"`
			Fields []struct {
				Field   string `json:"field"`
				After   any    `json:"after"`
				FromEnv bool   `json:"from_env"`
			} `json:"fields"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	fields := map[string]string{}
	for _, c := range doc.Changes {
		for _, f := range c.Fields {
			fields[f.Field] = fmt.Sprintf("%v %v", f.After, f.FromEnv)
		}
	}
	for field, want := range map[string]string{"arguments.x-max-priority": "${PRI} true", "definition.max-length": "${CAP} true"} {
		if fields[field] != want {
			t.Errorf("JSON field %s: after and from_env %q, want %q", field, fields[field], want)
		}
	}
}

// TestReadSavedVersion3: a plan saved at version 3, before the values from
// the environment kept their fields' keys (env without "key") or were kept
// at all (no env), is read as it was: apply FILE of it still works. A
// reader of version 3 refuses a version 4 plan as of another version
// (saying so), not as an invalid one (json: unknown field "key").
func TestReadSavedVersion3(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want topology.EnvValues
	}{
		{`{"kind":"mqctl-saved-plan","version":3,"fingerprint":"f","vhosts":[],"changes":[],"adopt":[],"unmanaged":[]}`, nil},
		{`{"kind":"mqctl-saved-plan","version":3,"fingerprint":"f","vhosts":[],"changes":[],"adopt":[],"unmanaged":[],"env":[{"value":"tok-secret","written":"${TOK}"}]}`,
			topology.EnvValues{{Value: "tok-secret", Raw: "${TOK}"}}},
	} {
		p, err := ReadSaved(strings.NewReader(tc.doc), "old.plan")
		if err != nil {
			t.Errorf("a version 3 plan: %v", err)
			continue
		}
		if diff := cmp.Diff(tc.want, p.Env); diff != "" {
			t.Errorf("env of a version 3 plan (-want +got):\n%s", diff)
		}
	}
	var buf bytes.Buffer
	if err := WriteSaved(&buf, samplePlan()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), fmt.Sprintf(`"version": %d`, SavedVersion)) || SavedVersion == 3 {
		t.Errorf("a saved plan that may hold env keys must be of a version above 3:\n%s", buf.String())
	}
}
