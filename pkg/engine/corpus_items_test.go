package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestApplyCorpusItems is SPEC §5's round trip, live, for the users, user
// limits, permissions, topic permissions, vhost limits and federation
// objects of every corpus file that holds some: the file is exported (its
// vhosts and users renamed for the test; its shovels left out, as they
// would connect to the hosts the file names), the export is applied, the
// broker then holds exactly the export's objects (a user's password is
// checked against the broker's hash), and a second plan is empty.
// pkg/export's TestCorpusItems checks, offline, that the export holds
// the source's objects.
func TestApplyCorpusItems(t *testing.T) {
	t.Parallel()
	dir, files := corpus.Files(t)
	f := newFixture(t)
	f.b.UsersSection(t) // every subtest's file has a users section
	var users []string
	t.Cleanup(func() {
		for _, u := range users {
			_ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", u)
		}
	})
	applied := 0
	for _, path := range files {
		base := filepath.Base(path)
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		src, _, err := definitions.Read(base, data)
		if err != nil {
			continue // files RabbitMQ refuses: pkg/export's TestCorpus
		}
		if len(src.Items) == 0 && !hasVhostItems(src) {
			continue
		}
		t.Run(rel, func(t *testing.T) {
			renamed, names := renameForTest(t, f, src)
			users = append(users, names...)
			var buf bytes.Buffer
			if err := export.WriteYAML(&buf, renamed, export.Options{Sugar: true, Source: base}); err != nil {
				t.Fatal(err)
			}
			desired, err := loader.LoadBytes(base+".yaml", buf.Bytes(), loader.Options{LookupEnv: corpusSecret})
			if err != nil {
				t.Fatalf("the export does not load: %v\n%s", err, buf.String())
			}
			// The vhosts exist with the test's descriptions: keep them.
			for _, v := range desired.Vhosts {
				v.Description = "mqctl test " + t.Name()
			}
			_, err = f.eng.Apply(context.Background(), engine.ApplyInput{Desired: desired}, engine.ApplyOptions{})
			var refusals *rmqversion.RefusalsError
			if errors.As(err, &refusals) {
				// A setting this version does not know (an upstream's
				// ha-policy on 4.0): refused before anything changed.
				for _, r := range refusals.Refusals {
					if _, refused := f.b.Version().RefusesSetting(kind.FederationUpstream, nil, strings.TrimSpace(r.Key)); !refused {
						t.Errorf("refused for something else than a setting RabbitMQ %s does not know: %v", f.b.Version(), r)
					}
				}
				t.Logf("RabbitMQ %s refuses it before anything changes: %v", f.b.Version().Line(), err)
				return
			}
			if err != nil {
				t.Fatalf("apply: %v\n%s", err, buf.String())
			}
			applied++
			vhosts := make([]string, 0, len(desired.Vhosts))
			for vn := range desired.Vhosts {
				vhosts = append(vhosts, vn)
			}
			l, err := f.eng.ReadLive(context.Background(), vhosts)
			if err != nil {
				t.Fatal(err)
			}
			live := l.State()
			compare := func(where string, want, got topology.Items) {
				for k, byName := range want {
					for name, w := range byName {
						g := got.Get(k, name)
						if g == nil {
							t.Errorf("%s %q%s is not on the broker", k, name, where)
							continue
						}
						ws, gs := w.Settings.Clone(), g.Settings.Clone()
						if k == kind.User {
							if !kind.PasswordMatches(w.Settings, g.Settings) {
								t.Errorf("user %q: the broker's password is not the file's", name)
							}
							for _, s := range []string{kind.UserPassword, kind.UserPasswordHash, kind.UserHashingAlgorithm} {
								delete(ws, s)
								delete(gs, s)
							}
						}
						if !ws.Equal(gs) {
							t.Errorf("%s %q%s on the broker = %s, the file says %s", k, name, where, gs.Canonical(), ws.Canonical())
						}
					}
				}
			}
			compare("", desired.Items, live.Items)
			for vn, v := range desired.Vhosts {
				compare(" in vhost "+vn, v.Items, live.Vhosts[vn].Items)
			}
			if p := f.plan(desired); !p.Empty() {
				t.Errorf("second plan: %v", changes(p))
			}
		})
	}
	if applied == 0 {
		t.Fatal("no corpus file with users, limits or federation objects was applied")
	}
	t.Logf("%d corpus files applied", applied)
}

func hasVhostItems(t *topology.Topology) bool {
	for _, v := range t.Vhosts {
		for k, byName := range v.Items {
			if k != kind.Shovel && len(byName) > 0 {
				return true
			}
		}
	}
	return false
}

// corpusSecret gives every ${VAR} of an export a value: a password, or a
// URI with credentials that leads nowhere (nothing federates without a
// policy, and this test has none).
func corpusSecret(name string) (string, bool) {
	if strings.HasSuffix(name, "PASSWORD") {
		return "pw-corpus-" + strings.ToLower(name), true
	}
	return "amqp://corpus:pw-corpus@localhost:1/none", true
}

// renameForTest keeps src's users and the items of its vhosts (shovels
// aside) under names of the test: each vhost a fresh test vhost, each user
// the test's prefix before its name. It returns the users' new names.
func renameForTest(t *testing.T, f *fixture, src *topology.Topology) (*topology.Topology, []string) {
	out := topology.New()
	prefix := f.vhost + "-"
	rename := func(u string) string { return prefix + u }
	var users []string
	for k, byName := range src.Items {
		for _, it := range byName {
			c := *it
			c.Name = rename(it.Name)
			out.Items.Put(&c)
			if k == kind.User {
				users = append(users, c.Name)
			}
		}
	}
	for _, k := range []kind.Kind{kind.User, kind.UserLimits, kind.Permission, kind.TopicPermission} {
		if src.Declares(k) {
			out.Declare(k)
		}
	}
	names := src.VhostNames()
	sort.Strings(names)
	for _, vn := range names {
		fresh := f.b.Vhost(t)
		v := topology.NewVhost(fresh)
		for k, byName := range src.Vhosts[vn].Items {
			if k == kind.Shovel {
				continue
			}
			for _, it := range byName {
				c := *it
				if k == kind.Permission || k == kind.TopicPermission {
					c.Name = rename(it.Name)
				}
				if k == kind.VhostLimits {
					c.Name = fresh
				}
				v.Items.Put(&c)
			}
		}
		out.Vhosts[fresh] = v
	}
	return out, users
}
