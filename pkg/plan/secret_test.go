package plan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A plan of an item with a secret shows it in no form: text, JSON, saved.
// The saved plan names the variable the file took it from, and refuses a
// secret written in the file itself.
func TestPlanHoldsNoSecret(t *testing.T) {
	const pw = "pw-5e5e"
	spec, _ := kind.Of(kind.Shovel)
	item := func(refs map[string]string) *Plan {
		it := &topology.Item{Kind: "shovel", Name: "s", Settings: topology.Args{"src-uri": "amqp://u:" + pw + "@h/v", "src-queue": "q"},
			Secret: []string{"src-uri"}, Refs: refs}
		before := &topology.Item{Kind: "shovel", Name: "s", Settings: topology.Args{"src-uri": "amqp://u:old-" + pw + "@h/v", "src-queue": "q"}, Secret: []string{"src-uri"}}
		return &Plan{FormatVersion: FormatVersion, Changes: []Change{
			{Action: Create, Kind: "shovel", Vhost: "v", Name: "s", After: ItemObject{it}},
			{Action: Update, Kind: "shovel", Vhost: "v", Name: "s", Before: ItemObject{before}, After: ItemObject{it},
				Fields: itemFields(spec, before, it)},
		}}
	}
	p := item(map[string]string{"src-uri": "SRC_URI"})
	// The two URIs read alike masked: the field says it is masked, and the
	// text that its secret changes.
	if f := p.Changes[1].Fields; len(f) != 1 || !f[0].Masked || f[0].Before != f[0].After {
		t.Fatalf("fields %+v: want one, masked, reading alike", f)
	}
	var text, js, saved bytes.Buffer
	if err := WriteText(&text, p, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	if err := WriteSaved(&saved, p); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "JSON": js.String(), "saved": saved.String()} {
		if strings.Contains(out, pw) {
			t.Errorf("the %s plan shows the secret:\n%s", name, out)
		}
		if !strings.Contains(out, "amqp://u:***@h/v") {
			t.Errorf("the %s plan does not show the masked URI:\n%s", name, out)
		}
		if want := map[string]string{"text": "(masked: the secret in it changes)", "JSON": `"masked": true`, "saved": `"masked": true`}[name]; !strings.Contains(out, want) {
			t.Errorf("the %s plan does not say the field is masked (%s):\n%s", name, want, out)
		}
	}
	back, err := ReadSaved(&saved, "plan.out")
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Changes[0].After.(ItemObject).Item.Refs["src-uri"]; got != "SRC_URI" {
		t.Errorf("saved plan lost the variable: refs %v", back.Changes[0].After.(ItemObject).Item.Refs)
	}
	err = WriteSaved(&bytes.Buffer{}, item(nil))
	if err == nil || strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "${VARIABLE}") {
		t.Errorf("a secret written in the file: WriteSaved error %v, want a refusal naming no secret", err)
	}
}

// A list of URIs: each item with credentials must come from a variable of
// its own for the plan to be saved; one written in the file is named.
func TestSavedPlanListOfURIs(t *testing.T) {
	const pw = "pw-l1st"
	mk := func(refs map[string]string) *Plan {
		it := &topology.Item{Kind: "shovel", Name: "s", Settings: topology.Args{"dest-uri": []any{"amqp://", "amqp://u:" + pw + "@h/v", "amqp://u:" + pw + "@g/v"}},
			Secret: []string{"dest-uri"}, Refs: refs}
		return &Plan{FormatVersion: FormatVersion, Changes: []Change{{Action: Create, Kind: "shovel", Vhost: "v", Name: "s", After: ItemObject{it}}}}
	}
	var saved bytes.Buffer
	if err := WriteSaved(&saved, mk(map[string]string{"dest-uri[1]": "B", "dest-uri[2]": "C"})); err != nil {
		t.Fatalf("both items from variables: %v", err)
	}
	if strings.Contains(saved.String(), pw) {
		t.Errorf("the saved plan holds the password:\n%s", saved.String())
	}
	back, err := ReadSaved(&saved, "plan.out")
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Changes[0].After.(ItemObject).Item.Refs; got["dest-uri[1]"] != "B" || got["dest-uri[2]"] != "C" {
		t.Errorf("saved plan lost the variables: %v", got)
	}
	err = WriteSaved(&bytes.Buffer{}, mk(map[string]string{"dest-uri[1]": "B"}))
	if err == nil || strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "item 3 of dest-uri") {
		t.Errorf("item 3 written in the file: %v, want a refusal naming item 3 and no secret", err)
	}
}

// TestSavedPlanRefusalSaysWhere: a secret a saved plan cannot name (not
// one whole variable) is refused at the file:line:col that writes it,
// with the item's own position when the setting's is not known. Before,
// the refusal named no place, and said the secret was "written in the
// file itself" of a URI built around a variable, amqp://u:${PW}@h/v.
func TestSavedPlanRefusalSaysWhere(t *testing.T) {
	const pw = "pw-wh3re"
	at := func(key string, line int) *topology.ArgPositions {
		a := topology.NewArgPositions(1)
		a.Set(key, topology.Pos{File: "t.yaml", Line: line, Col: 19})
		return a
	}
	tests := []struct {
		name     string
		settings topology.Args
		argPos   *topology.ArgPositions
		want     string
	}{
		{name: "a URI around a variable", settings: topology.Args{"dest-uri": "amqp://u:" + pw + "@h/v"}, argPos: at("dest-uri", 36),
			want: `t.yaml:36:19: dest-uri of shovel "s" in vhost "v" holds a secret that is not taken whole from one environment variable`},
		{name: "an item of a list", settings: topology.Args{"dest-uri": []any{"amqp://u:" + pw + "@h/v"}}, argPos: at("dest-uri[0]", 37),
			want: `t.yaml:37:19: item 1 of dest-uri of shovel "s" in vhost "v" holds a secret`},
		{name: "the setting's place not known: the item's", settings: topology.Args{"dest-uri": "amqp://u:" + pw + "@h/v"},
			want: `t.yaml:30:7: dest-uri of shovel "s" in vhost "v"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := &topology.Item{Kind: "shovel", Name: "s", Settings: tc.settings, Secret: []string{"dest-uri"},
				Meta: topology.Meta{Pos: topology.Pos{File: "t.yaml", Line: 30, Col: 7}, ArgPos: tc.argPos}}
			p := &Plan{FormatVersion: FormatVersion, Changes: []Change{{Action: Create, Kind: "shovel", Vhost: "v", Name: "s", After: ItemObject{it}}}}
			err := WriteSaved(&bytes.Buffer{}, p)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "written in the file itself") {
				t.Errorf("WriteSaved: %v\nwant a refusal beginning %q, naming no secret", err, tc.want)
			}
		})
	}
}
