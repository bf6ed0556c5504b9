package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/internal/corpus"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// loaderGaps are corpus files whose export mqctl's loader refuses, with
// what it says: a gap of the loader, not of the reader or of export, or a
// setting of an item that RabbitMQ refuses, which the definitions reader
// takes as it is (it does not judge items' settings) and the loader
// refuses where the file gives it. The test fails when the loader's answer
// changes, so that the entry goes.
var loaderGaps = map[string]string{
	// A shovel's dest-uri and an upstream's uri "CEGA_CONNECTION", a
	// placeholder its deployment replaces (shown as ***, as any secret that
	// is no URI): no URI to RabbitMQ either (amqp_uri: no_scheme, HTTP 400
	// on 3.10.8, 4.0.5 and 4.3.6).
	"BiobankLab__sensitive-data-archive__federation.json": `shovel "to_cega": dest-uri: *** is not a valid URI: it has no scheme`,
}

// passwordSettings are a user's settings that the export does not carry
// over: it writes a ${VAR} placeholder for the password, never the hash.
var passwordSettings = []string{kind.UserPassword, kind.UserPasswordHash, kind.UserHashingAlgorithm}

// itemSet renders each item as kind|vhost|name => settings (canonical),
// with a user's password settings replaced by whether it has a password.
func itemSet(t *topology.Topology) map[string]string {
	out := map[string]string{}
	add := func(vhost string, it *topology.Item) {
		s := it.Settings.Clone()
		extra := ""
		if it.Kind == kind.User {
			h, _ := s[kind.UserPasswordHash].(string)
			_, pw := s[kind.UserPassword]
			extra = fmt.Sprintf(" password=%t", h != "" || pw)
			for _, k := range passwordSettings {
				delete(s, k)
			}
		}
		out[fmt.Sprintf("%s|%s|%s", it.Kind, vhost, it.Name)] = s.Canonical() + extra
	}
	for _, byName := range t.Items {
		for _, it := range byName {
			add("", it)
		}
	}
	for vn, v := range t.Vhosts {
		for _, byName := range v.Items {
			for _, it := range byName {
				add(vn, it)
			}
		}
	}
	return out
}

// itemIDsFromJSON lists the identities of the items a definitions file
// declares, read straight from its JSON, independently of package
// definitions: users, users with limits, permissions by (user, vhost),
// topic permissions by (user, vhost) and the three runtime parameter
// components by (vhost, name).
func itemIDsFromJSON(data []byte) (map[string]bool, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
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
	ids := map[string]bool{}
	for _, u := range list("users") {
		ids["user||"+str(u, "name")] = true
		if l, ok := u["limits"].(map[string]any); ok && len(l) > 0 {
			ids["user_limits||"+str(u, "name")] = true
		}
	}
	for _, p := range list("permissions") {
		ids["permission|"+vhostOf(p)+"|"+str(p, "user")] = true
	}
	for _, p := range list("topic_permissions") {
		ids["topic_permission|"+vhostOf(p)+"|"+str(p, "user")] = true
	}
	comps := map[string]kind.Kind{"shovel": kind.Shovel, "federation-upstream": kind.FederationUpstream, "federation-upstream-set": kind.FederationUpstreamSet}
	for _, p := range list("parameters") {
		if k, ok := comps[str(p, "component")]; ok {
			ids[fmt.Sprintf("%s|%s|%s", k, vhostOf(p), str(p, "name"))] = true
		}
		if str(p, "component") == "vhost-limits" {
			ids["vhost_limits|"+vhostOf(p)+"|"+vhostOf(p)] = true
		}
	}
	return ids, nil
}

// TestCorpusItems is SPEC §5's round trip for users, their limits,
// permissions, topic permissions, vhost limits, shovels and federation
// objects: every corpus file mqctl reads exports (with its ${VAR}
// placeholders resolved to anything) to a file that loads back into the
// same items, users' passwords aside (the export holds a placeholder, not
// the hash: only whether a user has a password is compared).
func TestCorpusItems(t *testing.T) {
	t.Parallel()
	dir, files := corpus.Files(t)
	var nFiles, nItems, nLost, nGaps int
	perKind := map[kind.Kind]int{}
	for _, path := range files {
		base := filepath.Base(path)
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		top, rep, err := definitions.Read(base, data)
		if err != nil {
			continue // files RabbitMQ refuses: TestCorpus
		}
		read := itemSet(top)
		if len(read) == 0 {
			continue
		}
		nFiles++
		t.Run(rel, func(t *testing.T) {
			ids, err := itemIDsFromJSON(data)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for id := range read {
				got[id] = true
			}
			if diff := cmp.Diff(ids, got); diff != "" {
				t.Errorf("Read's items are not the file's (-file +read):\n%s", diff)
			}
			// Permissions of users the file does not list: the reader
			// says so, and export leaves them out.
			want := map[string]string{}
			for id, s := range read {
				f := strings.SplitN(id, "|", 3)
				if k := kind.Kind(f[0]); (k == kind.Permission || k == kind.TopicPermission) && top.Items.Get(kind.User, f[2]) == nil {
					if !hasWarning(rep, fmt.Sprintf("of user %q in vhost %q: the file lists no user", f[2], f[1])) {
						t.Errorf("%s: no warning that export leaves it out; warnings: %q", id, rep.Warnings)
					}
					nLost++
					continue
				}
				want[id] = s
			}
			var buf bytes.Buffer
			if err := WriteYAML(&buf, top, Options{Sugar: true, Source: base}); err != nil {
				t.Fatal(err)
			}
			back, err := loader.LoadBytes(base+".yaml", buf.Bytes(), loader.Options{LookupEnv: exportValues(top)})
			if gap, ok := loaderGaps[base]; ok {
				if err == nil || !strings.Contains(err.Error(), gap) {
					t.Fatalf("known loader gap %q: the loader now says %v; update loaderGaps", gap, err)
				}
				t.Logf("not compared: the loader refuses the export (%s)", gap)
				nGaps++
				return
			}
			if err != nil {
				t.Fatalf("the export does not load: %v\n%s", err, numbered(buf.String()))
			}
			if diff := cmp.Diff(want, itemSet(back)); diff != "" {
				t.Errorf("loading the export gives other items (-read +loaded):\n%s\nexported:\n%s", diff, numbered(buf.String()))
			}
			for _, k := range []kind.Kind{kind.User, kind.UserLimits, kind.Permission, kind.TopicPermission} {
				if top.Declares(k) != back.Declares(k) {
					t.Errorf("%s: declared %t in the file, %t in the export", k, top.Declares(k), back.Declares(k))
				}
			}
			for id := range want {
				perKind[kind.Kind(strings.SplitN(id, "|", 2)[0])]++
			}
			nItems += len(want)
		})
	}
	if nFiles == 0 {
		t.Fatalf("no corpus file under %s holds users, permissions, limits, shovels or federation objects", dir)
	}
	var ks []string
	for k, n := range perKind {
		ks = append(ks, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(ks)
	t.Logf("%d files with items; %d items compared (%s); %d permissions of unlisted users left out with a warning; %d files not compared (loader gaps)",
		nFiles, nItems, strings.Join(ks, ", "), nLost, nGaps)
}

// secretValues maps each variable the export of t names for a URI to the
// value the source held: what a user sets before applying the export (a
// password has no such value: the source holds its hash).
func secretValues(t *topology.Topology) map[string]string {
	out := map[string]string{}
	for vn, v := range t.Vhosts {
		for _, byName := range v.Items {
			for _, it := range byName {
				for _, key := range it.Secret {
					switch x := it.Settings[key].(type) {
					case string:
						out[variable(vn, it, key)] = x
					case []any:
						for i, e := range x {
							if s, ok := e.(string); ok {
								out[fmt.Sprintf("%s_%d", variable(vn, it, key), i+1)] = s
							}
						}
					}
				}
			}
		}
	}
	return out
}

func hasWarning(rep *definitions.Report, s string) bool {
	for _, w := range rep.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}
