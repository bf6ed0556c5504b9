package engine_test

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Users the sqldef way: the broker's state before (made by hand, or by an
// earlier mqctl apply), the file, the plan's rows, the broker's exact state
// after apply, and an empty second plan.
func TestUsersTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// byHand makes users mqctl did not make; earlier is a file mqctl
		// applied before (its users are mqctl's).
		byHand  func(t *testing.T, b *testbroker.Broker, u, vhost string)
		earlier string
		// olderRecord makes the record of users the earlier apply wrote
		// one of an mqctl before the record said which users it created
		// (ownership.ArgCreated), which recorded alike the users a file
		// named that were on the broker before it.
		olderRecord bool
		file        string
		rows        []string
		// after checks the broker's state after apply.
		after func(t *testing.T, state *topology.Topology, u, vhost string)
	}{
		{
			name: "a new user with its permissions",
			file: "users:\n  ${U}:\n    password: \"${PW}\"\n    tags: [management]\n    permissions:\n      ${VHOST}: { configure: \"^$\", write: \"^x$\", read: \"^q$\" }\n",
			rows: []string{"create user ${U}", "create permission ${U}"},
			after: func(t *testing.T, st *topology.Topology, u, vh string) {
				p := st.Vhosts[vh].Items.Get(kind.Permission, u)
				if p == nil || p.Settings["write"] != "^x$" || p.Settings["configure"] != "^$" || p.Settings["read"] != "^q$" {
					t.Errorf("permission = %+v", p)
				}
			},
		},
		{
			name:   "a user made by hand with the same password and tags is kept, neither changed nor adopted",
			byHand: func(t *testing.T, b *testbroker.Broker, u, _ string) { putUser(t, b, u, "pw-same", "management") },
			file:   "users:\n  ${U}: { password: \"${PW}\", tags: [management] }\n",
			rows:   nil,
		},
		{
			name:    "a changed password is an update, shown without either value",
			earlier: "users:\n  ${U}: { password: \"other-pw\" }\n",
			file:    "users:\n  ${U}: { password: \"${PW}\" }\n",
			rows:    []string{"update user ${U} settings.password *** -> ***"},
		},
		{
			name:    "a permission mqctl made and the file dropped is deleted",
			earlier: "users:\n  ${U}:\n    password: \"${PW}\"\n    permissions:\n      ${VHOST}: { read: \".*\" }\n",
			file:    "users:\n  ${U}: { password: \"${PW}\" }\n",
			rows:    []string{"delete permission ${U}"},
			after: func(t *testing.T, st *topology.Topology, u, vh string) {
				if st.Vhosts[vh].Items.Get(kind.Permission, u) != nil {
					t.Errorf("permission of %s still there", u)
				}
			},
		},
		{
			// The file gives the stored hash without its algorithm
			// (sha512 here): the diff takes the stored algorithm as the
			// file's, so a write for another reason (its tags) keeps it.
			// Written back without one, the broker stored the hash as
			// sha256 (its default) and the password no longer logged in,
			// while the next plan said no changes.
			name:   "a hash without its algorithm keeps the stored algorithm when the tags change",
			byHand: func(t *testing.T, b *testbroker.Broker, u, _ string) { putUserHash(t, b, u, sha512Hash("pw-same"), "") },
			file:   "users:\n  ${U}: { password_hash: \"${HASH512}\", tags: [management] }\n",
			rows:   []string{`update user ${U} settings.tags [] -> ["management"]`},
			after: func(t *testing.T, st *topology.Topology, u, _ string) {
				it := st.Items.Get(kind.User, u)
				if it == nil || it.Settings[kind.UserHashingAlgorithm] != string(rabbithole.HashingAlgorithmSHA512) || !kind.PasswordMatches(topology.Args{kind.UserPassword: "pw-same"}, it.Settings) {
					t.Errorf("user %s after apply: want the sha512 hash of its password kept (user read: %v)", u, it != nil)
					if it != nil {
						t.Logf("hashing_algorithm after apply: %v", it.Settings[kind.UserHashingAlgorithm])
					}
				}
			},
		},
		{
			name:   "a user made by hand that the file does not name is left alone",
			byHand: func(t *testing.T, b *testbroker.Broker, u, _ string) { putUser(t, b, u, "pw-hand", "") },
			file:   "users: {}\n",
			rows:   nil,
			after: func(t *testing.T, st *topology.Topology, u, _ string) {
				if st.Items.Get(kind.User, u) == nil {
					t.Errorf("user %s made by hand was deleted", u)
				}
			},
		},
		{
			// An export with its users, applied, names every user of the
			// broker (guest, the user mqctl logs in as, other teams'):
			// mqctl kept them as the file said but recorded them as its
			// own, so a later file without them deleted them.
			name: "a user made by hand, applied as an export names it, then dropped from the file, is left alone with its permission",
			byHand: func(t *testing.T, b *testbroker.Broker, u, vhost string) {
				putUser(t, b, u, "pw-same", "management")
				b.Permit(t, u, vhost)
			},
			earlier: "users:\n  ${U}:\n    password: \"${PW}\"\n    tags: [management]\n    permissions:\n      ${VHOST}: { configure: \".*\", write: \".*\", read: \".*\" }\n",
			file:    "users: {}\n",
			rows:    nil,
			after: func(t *testing.T, st *topology.Topology, u, vh string) {
				if st.Items.Get(kind.User, u) == nil {
					t.Errorf("user %s made by hand was deleted", u)
				}
				if st.Vhosts[vh].Items.Get(kind.Permission, u) == nil {
					t.Errorf("permission of user %s made by hand was deleted", u)
				}
			},
		},
		{
			// Such a record may list guest and the user mqctl logs in as,
			// adopted when an export was applied: mqctl cannot tell
			// which it made, and deletes none unless asked.
			name:        "a user an older mqctl recorded, dropped from the file, is left alone with its permission",
			earlier:     "users:\n  ${U}:\n    password: \"${PW}\"\n    permissions:\n      ${VHOST}: { read: \".*\" }\n",
			olderRecord: true,
			file:        "users: {}\n",
			rows:        nil,
			after: func(t *testing.T, st *topology.Topology, u, vh string) {
				if st.Items.Get(kind.User, u) == nil || st.Vhosts[vh].Items.Get(kind.Permission, u) == nil {
					t.Errorf("user %s, or its permission, recorded by an older mqctl was deleted", u)
				}
			},
		},
		{
			name:    "a user mqctl made and the file dropped is deleted",
			earlier: "users:\n  ${U}: { password: \"${PW}\", tags: [monitoring] }\n",
			file:    "users: {}\n",
			rows:    []string{"delete user ${U}"},
			after: func(t *testing.T, st *topology.Topology, u, _ string) {
				if st.Items.Get(kind.User, u) != nil {
					t.Errorf("user %s still there", u)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.b.UsersSection(t)
			u := testbroker.Name(t, "mqctl-ut")
			t.Cleanup(func() { _ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", u) })
			env := map[string]string{"VHOST": f.vhost, "U": u, "PW": "pw-same", "HASH512": sha512Hash("pw-same")}
			load := func(body string) *topology.Topology {
				src := "version: 1\nvhosts:\n  ${VHOST}: {}\n" + body
				top, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
				if err != nil {
					t.Fatalf("%v\n%s", err, src)
				}
				top.Vhosts[f.vhost].Description = "mqctl test " + t.Name()
				return top
			}
			if tt.byHand != nil {
				tt.byHand(t, f.b, u, f.vhost)
			}
			if tt.earlier != "" {
				if _, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: load(tt.earlier)}, engine.ApplyOptions{}); err != nil {
					t.Fatalf("earlier apply: %v", err)
				}
			}
			if tt.olderRecord {
				var rec struct {
					Value map[string]any `json:"value"`
				}
				ctx := context.Background()
				if err := f.c.GetJSON(ctx, &rec, "read the record of users", "", "global-parameters", ownership.GlobalParameter); err != nil {
					t.Fatal(err)
				}
				if _, ok := rec.Value[ownership.ArgCreated]; !ok {
					t.Fatalf("the record of users lists no %s: %v", ownership.ArgCreated, rec.Value)
				}
				delete(rec.Value, ownership.ArgCreated)
				body := map[string]any{"name": ownership.GlobalParameter, "value": rec.Value}
				if err := f.c.PutJSON(ctx, body, "write the record of users", "", "global-parameters", ownership.GlobalParameter); err != nil {
					t.Fatal(err)
				}
			}
			p := f.plan(load(tt.file))
			var rows []string
			for _, row := range planRows(p) {
				rows = append(rows, strings.ReplaceAll(row, u, "${U}"))
			}
			if !slices.Equal(rows, tt.rows) {
				t.Fatalf("plan rows = %q, want %q", rows, tt.rows)
			}
			if _, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: load(tt.file)}, engine.ApplyOptions{}); err != nil {
				t.Fatalf("apply: %v", err)
			}
			l, err := f.eng.ReadLive(context.Background(), []string{f.vhost})
			if err != nil {
				t.Fatal(err)
			}
			if tt.after != nil {
				tt.after(t, l.State(), u, f.vhost)
			}
			if it := l.State().Items.Get(kind.User, u); it != nil && strings.Contains(tt.file, "${PW}") && !kind.PasswordMatches(topology.Args{kind.UserPassword: "pw-same"}, it.Settings) {
				t.Errorf("user %s's password is not the file's after apply", u)
			}
			if p := f.plan(load(tt.file)); !p.Empty() {
				t.Errorf("second plan: %v", changes(p))
			}
		})
	}
}

// sha512Hash is password's hash as RabbitMQ stores it with
// rabbit_password_hashing_sha512: base64 of a 4-byte salt and
// sha512(salt + password).
func sha512Hash(password string) string {
	salt := []byte{9, 8, 7, 6}
	sum := sha512.Sum512(append(slices.Clone(salt), password...))
	return base64.StdEncoding.EncodeToString(append(salt, sum[:]...))
}

// putUserHash makes user name by hand with a sha512 hash.
func putUserHash(t *testing.T, b *testbroker.Broker, name, hash, tags string) {
	t.Helper()
	resp, err := b.RH.PutUser(name, rabbithole.UserSettings{PasswordHash: hash, HashingAlgorithm: rabbithole.HashingAlgorithmSHA512, Tags: rabbithole.UserTags(strings.Fields(tags))})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
}

func putUser(t *testing.T, b *testbroker.Broker, name, password, tags string) {
	t.Helper()
	resp, err := b.RH.PutUser(name, rabbithole.UserSettings{Password: password, Tags: rabbithole.UserTags(strings.Fields(tags))})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
}
