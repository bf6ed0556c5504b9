package definitions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/internal/corpus"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/topology"
)

// fakeAPI answers the management API's list endpoints that pkg/broker's
// item drivers read, from a definitions file's objects: what a broker
// that imported the file would list.
type fakeAPI struct {
	answers map[string]any // by path below /api/, segments joined by \x00
}

func (f *fakeAPI) add(v any, path ...string) {
	k := strings.Join(path, "\x00")
	l, _ := f.answers[k].([]any)
	f.answers[k] = append(l, v)
}

// client serves f's answers over HTTP (reads only) and logs in to them.
func (f *fakeAPI) client(t *testing.T) *broker.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "read only", http.StatusMethodNotAllowed)
			return
		}
		var segs []string
		for _, seg := range strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/api/"), "/") {
			s, err := url.PathUnescape(seg)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			segs = append(segs, s)
		}
		var v any
		switch path := strings.Join(segs, "\x00"); path {
		case "whoami":
			v = map[string]any{"name": "guest", "tags": []string{"administrator"}}
		case "overview":
			v = map[string]any{"rabbitmq_version": "4.0.5"}
		default:
			if v = f.answers[path]; v == nil {
				v = []any{}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}))
	t.Cleanup(srv.Close)
	c, err := broker.Connect(context.Background(), broker.Config{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// brokerOf builds the answers of a broker that imported the definitions
// file data. Users whose hash the broker would compute itself (a password
// in clear, no algorithm named) are left out, with their names returned.
func brokerOf(t *testing.T, data []byte) (*fakeAPI, map[string]bool) {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	single := str(doc, "rabbitmq_definition_format") == "single_virtual_host"
	vhostOf := func(m map[string]any) string {
		if single {
			if n := str(doc, "original_vhost_name"); n != "" {
				return n
			}
			return "/"
		}
		return str(m, "vhost")
	}
	list := func(key string) []map[string]any {
		arr, _ := doc[key].([]any)
		var out []map[string]any
		for _, e := range arr {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	api := &fakeAPI{answers: map[string]any{}}
	computed := map[string]bool{}
	for _, u := range list("users") {
		if _, ok := u["hashing_algorithm"]; !ok || u["password"] != nil {
			computed[str(u, "name")] = true
			continue
		}
		api.add(u, "users")
		if l, ok := u["limits"].(map[string]any); ok && len(l) > 0 {
			api.add(map[string]any{"user": u["name"], "value": l}, "user-limits")
		}
	}
	for _, p := range list("permissions") {
		api.add(p, "vhosts", vhostOf(p), "permissions")
	}
	for _, p := range list("topic_permissions") {
		api.add(p, "vhosts", vhostOf(p), "topic-permissions")
	}
	for _, v := range list("vhosts") {
		if l, ok := v["limits"].(map[string]any); ok && len(l) > 0 {
			api.add(map[string]any{"vhost": v["name"], "value": l}, "vhost-limits", str(v, "name"))
		}
	}
	for _, p := range list("parameters") {
		switch c := str(p, "component"); c {
		case "vhost-limits":
			api.add(map[string]any{"vhost": vhostOf(p), "value": p["value"]}, "vhost-limits", vhostOf(p))
		case "shovel", "federation-upstream", "federation-upstream-set":
			api.add(p, "parameters", c, vhostOf(p))
		}
	}
	return api, computed
}

// TestItemsAsTheLiveReadMakesThem: for every corpus file Read accepts,
// the items it makes are those pkg/broker's item drivers (the engine's
// live read) make of a broker that imported the file, with the secret
// settings the engine marks; users whose hash the broker would compute
// itself (a password in clear, no algorithm) aside.
func TestItemsAsTheLiveReadMakesThem(t *testing.T) {
	_, files := corpus.Files(t)
	compared := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(path)
		top, rep, err := definitions.Read(base, data)
		if err != nil {
			continue
		}
		if slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "twice") }) {
			continue // a broker has no duplicates
		}
		t.Run(base, func(t *testing.T) {
			api, computed := brokerOf(t, data)
			c := api.client(t)
			ctx := context.Background()
			for _, s := range kind.Items() {
				k := s.Kind
				vhosts := top.VhostNames()
				if s.Broker {
					vhosts = []string{""}
				}
				for _, vh := range vhosts {
					live, err := c.ReadItems(ctx, k, vh)
					if err != nil {
						t.Fatalf("%s of vhost %q: live read: %v", k, vh, err)
					}
					want := map[string]*topology.Item{}
					for _, it := range live {
						it.Secret = kind.SecretFields(k) // as the engine's readItems does
						want[it.Name] = it
					}
					items := top.Items
					if vh != "" {
						items = top.Vhosts[vh].Items
					}
					got := map[string]*topology.Item{}
					for _, n := range items.Names(k) {
						if (k == kind.User || k == kind.UserLimits) && computed[n] {
							continue
						}
						got[n] = items.Get(k, n)
					}
					if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreTypes(topology.Meta{})); diff != "" {
						t.Errorf("%s of vhost %q: live read (-) and Read (+) differ:\n%s", k, vh, diff)
					}
				}
			}
		})
		compared++
	}
	if compared == 0 {
		t.Fatal("no corpus file was compared")
	}
}

// The names the reader keeps of pkg/ownership (which it cannot import)
// are its, and the items it makes have pkg/kind's settings and secret
// settings.
func TestNamesAgreeWithKinds(t *testing.T) {
	if definitions.MqctlGlobalParameter != ownership.GlobalParameter {
		t.Errorf("mqctl's global parameter is %q, not %q", ownership.GlobalParameter, definitions.MqctlGlobalParameter)
	}
	top, _, err := definitions.Read("defs.json", []byte(`{"users":[{"name":"u","password_hash":"h","hashing_algorithm":"a","tags":"x"},{"name":"p","password":"pw","tags":""}],
	  "parameters":[{"vhost":"/","component":"federation-upstream-set","name":"s","value":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	made := []*topology.Item{top.Items.Get(kind.User, "u"), top.Items.Get(kind.User, "p"), top.Vhosts["/"].Items.Get(kind.FederationUpstreamSet, "s")}
	for _, it := range made {
		if diff := cmp.Diff(kind.SecretFields(it.Kind), it.Secret, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s %q: secret settings (-kind +definitions):\n%s", it.Kind, it.Name, diff)
		}
	}
	for _, s := range []string{kind.UserPassword, kind.UserPasswordHash, kind.UserHashingAlgorithm, kind.UserTags, kind.UpstreamSetList} {
		if !slices.ContainsFunc(made, func(it *topology.Item) bool { return it.Settings.Has(s) }) {
			t.Errorf("setting %q of pkg/kind is not a setting Read makes", s)
		}
	}
}

// TestEveryVhostItemKindIsRead: every kind declared in a vhost's section
// of topology.yaml is read from a definitions file too, as the live read
// reads it: vhost limits from their own parameters, the others as the
// runtime parameters of their component (kind.Spec.Parameter). A kind
// added to the registry without either would be dropped from every
// definitions file silently: this fails instead.
func TestEveryVhostItemKindIsRead(t *testing.T) {
	for _, s := range kind.VhostItems() {
		if s.Kind == kind.VhostLimits {
			continue
		}
		comp, ok := s.Parameter()
		if !ok {
			t.Errorf("kind %s: pkg/definitions has no way to read it (its Spec's APIPath is not parameters/{component}, and nothing here reads it otherwise)", s.Kind)
			continue
		}
		// The settings the broker requires, each a URI.
		settings := map[string]any{}
		for _, k := range s.Required {
			settings[k] = "amqp://h"
		}
		v, _ := json.Marshal(settings)
		value := string(v)
		if s.Item.List != nil {
			value = `[{"upstream":"a"}]`
		}
		doc := `{"vhosts":[{"name":"v"}],"parameters":[{"vhost":"v","component":"` + comp + `","name":"it","value":` + value + `}]}`
		top, rep, err := definitions.Read("defs.json", []byte(doc))
		if err != nil {
			t.Errorf("kind %s: %v", s.Kind, err)
			continue
		}
		if it := top.Vhosts["v"].Items.Get(s.Kind, "it"); it == nil {
			t.Errorf("kind %s: the %s parameter was not read as an item (report: %+v)", s.Kind, comp, rep)
		}
	}
}

// TestOwnersRecordsAreNotSkippedParameters: mqctl's records of the
// broker's users, the owner ""'s and each owner's (mqctl-managed.<owner>),
// are mqctl's bookkeeping, not global parameters the export skips; other
// global parameters are counted as skipped.
func TestOwnersRecordsAreNotSkippedParameters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		skipped int
	}{
		{"mqctl-managed", 0},
		{"mqctl-managed.team-b", 0},
		{"cluster_name", 1},
	} {
		_, rep, err := definitions.Read("defs.json", []byte(`{"global_parameters":[{"name":"`+tc.name+`","value":{}}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Skipped[definitions.SkipGlobalParameters]; got != tc.skipped {
			t.Errorf("%s: %d skipped, want %d", tc.name, got, tc.skipped)
		}
	}
}
