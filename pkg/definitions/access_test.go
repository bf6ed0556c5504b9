package definitions

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// item is a compact form of an item for the tables: vhost ("" for the
// broker's), kind, name, settings.
type item struct {
	Vhost    string
	Kind     kind.Kind
	Name     string
	Settings topology.Args
}

func itemsOf(t *topology.Topology) []item {
	var out []item
	for _, k := range kindsOf(t.Items) {
		for _, n := range t.Items.Names(k) {
			out = append(out, item{"", k, n, t.Items.Get(k, n).Settings})
		}
	}
	for _, vn := range t.VhostNames() {
		v := t.Vhosts[vn]
		for _, k := range kindsOf(v.Items) {
			for _, n := range v.Items.Names(k) {
				out = append(out, item{vn, k, n, v.Items.Get(k, n).Settings})
			}
		}
	}
	return out
}

func kindsOf(items topology.Items) []kind.Kind {
	var out []kind.Kind
	for _, s := range kind.All() {
		if len(items[s.Kind]) > 0 {
			out = append(out, s.Kind)
		}
	}
	return out
}

const sha256Alg = "rabbit_password_hashing_sha256"

func TestAccessItems(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src      string
		want     []item
		warnings []string
	}{
		{
			name: "a user: hash and algorithm kept, tags from a string sorted, limits as integers",
			src:  `{"users":[{"name":"app","password_hash":"H1","hashing_algorithm":"rabbit_password_hashing_sha512","tags":"monitoring,administrator","limits":{"max-connections":10,"max-channels":-1}}]}`,
			want: []item{
				{"", kind.User, "app", topology.Args{"password_hash": "H1", "hashing_algorithm": "rabbit_password_hashing_sha512", "tags": []any{"administrator", "monitoring"}}},
				{"", kind.UserLimits, "app", topology.Args{"max-connections": int64(10), "max-channels": int64(-1)}},
			},
		},
		{
			name: "tags as a 3.13+ list, duplicates and empty tags dropped; no limits, no limits item",
			src:  `{"users":[{"name":"app","password_hash":"H1","hashing_algorithm":"rabbit_password_hashing_sha256","tags":["management","","management"],"limits":{}}]}`,
			want: []item{{"", kind.User, "app", topology.Args{"password_hash": "H1", "hashing_algorithm": sha256Alg, "tags": []any{"management"}}}},
		},
		{
			name: "no algorithm in a 3.5 export: MD5, as RabbitMQ's import assumes",
			src:  `{"rabbit_version":"3.5.7","users":[{"name":"old","password_hash":"H2","tags":""}]}`,
			want: []item{{"", kind.User, "old", topology.Args{"password_hash": "H2", "hashing_algorithm": "rabbit_password_hashing_md5", "tags": []any{}}}},
		},
		{
			name: "no algorithm in a later export: SHA-256",
			src:  `{"rabbit_version":"3.8.2","users":[{"name":"u","password_hash":"H3","tags":""}]}`,
			want: []item{{"", kind.User, "u", topology.Args{"password_hash": "H3", "hashing_algorithm": sha256Alg, "tags": []any{}}}},
		},
		{
			name: "no password at all: an empty hash, as the broker reports such a user",
			src:  `{"users":[{"name":"nopw","tags":"","hashing_algorithm":"rabbit_password_hashing_sha256"}]}`,
			want: []item{{"", kind.User, "nopw", topology.Args{"password_hash": "", "hashing_algorithm": sha256Alg, "tags": []any{}}}},
		},
		{
			name:     "a password in clear: kept as the secret password setting, with a warning that names no value",
			src:      `{"users":[{"name":"dev","password":"s3cr3t-in-clear","tags":"management"}]}`,
			want:     []item{{"", kind.User, "dev", topology.Args{"password": "s3cr3t-in-clear", "tags": []any{"management"}}}},
			warnings: []string{`user "dev": the file holds the password itself, not its hash; export writes a ${VAR} placeholder for it, never the password`},
		},
		{
			name: "permissions and topic permissions, one item per user and vhost; topic permissions by exchange",
			src: `{"users":[{"name":"a","password_hash":"H","hashing_algorithm":"rabbit_password_hashing_sha256","tags":""}],
			  "permissions":[{"user":"a","vhost":"/","configure":"^$","write":"^orders$","read":".*"},{"user":"a","vhost":"v2","configure":"","write":"","read":""}],
			  "topic_permissions":[{"user":"a","vhost":"/","exchange":"amq.topic","write":"^a\\.","read":".*"},{"user":"a","vhost":"/","exchange":"events","write":"^$","read":"^e$"}]}`,
			want: []item{
				{"", kind.User, "a", topology.Args{"password_hash": "H", "hashing_algorithm": sha256Alg, "tags": []any{}}},
				{"/", kind.Permission, "a", topology.Args{"configure": "^$", "write": "^orders$", "read": ".*"}},
				{"/", kind.TopicPermission, "a", topology.Args{"amq.topic": map[string]any{"write": `^a\.`, "read": ".*"}, "events": map[string]any{"write": "^$", "read": "^e$"}}},
				{"v2", kind.Permission, "a", topology.Args{"configure": "", "write": "", "read": ""}},
			},
		},
		{
			name:     "permissions of a user the file does not list: read, with a warning that export leaves them out",
			src:      `{"users":[],"permissions":[{"user":"guest","vhost":"/","configure":".*","write":".*","read":".*"}]}`,
			want:     []item{{"/", kind.Permission, "guest", topology.Args{"configure": ".*", "write": ".*", "read": ".*"}}},
			warnings: []string{`permission of user "guest" in vhost "/": the file lists no user "guest"; an mqctl file declares permissions under their user, so export leaves them out`},
		},
		{
			name: "vhost limits from the vhost-limits parameter and from a 4.x vhost object, merged",
			src: `{"vhosts":[{"name":"a","limits":{"max-queues":10}},{"name":"b","limits":[]}],
			  "parameters":[{"vhost":"a","component":"vhost-limits","name":"limits","value":{"max-connections":5}},{"vhost":"c","component":"vhost-limits","name":"limits","value":{"max-queues":1.0}}]}`,
			want: []item{
				{"a", kind.VhostLimits, "a", topology.Args{"max-queues": int64(10), "max-connections": int64(5)}},
				{"c", kind.VhostLimits, "c", topology.Args{"max-queues": int64(1)}},
			},
		},
		{
			// RabbitMQ (4.3.6, 4.0.5 and 3.10.8 alike) keeps {"component":"vhost-limits","name":"limits","value":[]}
			// once a vhost's last limit is deleted, exports it so, and
			// imports it again as no limits (POST /api/definitions: 204).
			name: "a vhost whose limits were all cleared: the empty list RabbitMQ exports is no limits",
			src: `{"vhosts":[{"name":"a","limits":{}}],
			  "parameters":[{"vhost":"a","component":"vhost-limits","name":"limits","value":[]}]}`,
			want: nil,
		},
		{
			name: "shovels and upstreams: their values as they are, numbers normalised; a set's members in order",
			src: `{"parameters":[
			  {"vhost":"/","component":"shovel","name":"s","value":{"src-uri":["amqp://u:pw@h1","amqp:///"],"src-queue":"q","dest-uri":"amqp:///","dest-queue":"d","reconnect-delay":1.5,"src-prefetch-count":100}},
			  {"vhost":"/","component":"federation-upstream","name":"up","value":{"uri":"amqp://u:pw@dc2","expires":3600000}},
			  {"vhost":"/","component":"federation-upstream-set","name":"all","value":[{"upstream":"up"},{"upstream":"other","max-hops":2}]}]}`,
			want: []item{
				{"/", kind.FederationUpstream, "up", topology.Args{"uri": "amqp://u:pw@dc2", "expires": int64(3600000)}},
				{"/", kind.FederationUpstreamSet, "all", topology.Args{"upstreams": []any{map[string]any{"upstream": "up"}, map[string]any{"upstream": "other", "max-hops": int64(2)}}}},
				{"/", kind.Shovel, "s", topology.Args{"src-uri": []any{"amqp://u:pw@h1", "amqp:///"}, "src-queue": "q", "dest-uri": "amqp:///", "dest-queue": "d", "reconnect-delay": 1.5, "src-prefetch-count": int64(100)}},
			},
		},
		{
			name:     "a user listed twice: RabbitMQ's import refuses the file; the last kept, the hashes not shown",
			src:      "{\"users\":[\n{\"name\":\"u\",\"password_hash\":\"A\",\"hashing_algorithm\":\"rabbit_password_hashing_sha256\",\"tags\":\"\"},\n{\"name\":\"u\",\"password_hash\":\"B\",\"hashing_algorithm\":\"rabbit_password_hashing_sha256\",\"tags\":\"management\"}]}",
			want:     []item{{"", kind.User, "u", topology.Args{"password_hash": "B", "hashing_algorithm": sha256Alg, "tags": []any{"management"}}}},
			warnings: []string{`user "u" is listed twice, at defs.json:2:1 and defs.json:3:1, and the entries differ (password_hash; tags): RabbitMQ's import almost always refuses this file (HTTP 400 user_already_exists: it adds the users concurrently, and the second add of user "u" fails, whether or not the entries differ), after the users and before any vhost, queue or other object; mqctl kept the last, at defs.json:3:1. Remove one of them`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, rep := mustRead(t, tc.src, ReadOptions{})
			if diff := cmp.Diff(tc.want, itemsOf(top), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warnings, rep.Warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if len(rep.Skipped) != 0 {
				t.Errorf("skipped %v; these are read, not skipped", rep.Skipped)
			}
		})
	}
}

func TestAccessItemsSecretsAndDeclared(t *testing.T) {
	top, _ := mustRead(t, `{"users":[{"name":"u","password_hash":"H","tags":""}],
	  "parameters":[{"vhost":"/","component":"shovel","name":"s","value":{"src-uri":"amqp://u:pw@h","dest-uri":"amqp:///"}},
	    {"vhost":"/","component":"federation-upstream","name":"up","value":{"uri":"amqp://u:pw@h"}}]}`, ReadOptions{})
	for _, c := range []struct {
		it   *topology.Item
		want []string
	}{
		{top.Items.Get(kind.User, "u"), []string{"password", "password_hash", "hashing_algorithm"}},
		{top.Vhosts["/"].Items.Get(kind.Shovel, "s"), []string{"src-uri", "dest-uri"}},
		{top.Vhosts["/"].Items.Get(kind.FederationUpstream, "up"), []string{"uri"}},
	} {
		if c.it == nil {
			t.Fatalf("missing item")
		}
		if diff := cmp.Diff(c.want, c.it.Secret); diff != "" {
			t.Errorf("%s %q: secret settings (-want +got):\n%s", c.it.Kind, c.it.Name, diff)
		}
		if strings.Contains(string(must(c.it.MarshalJSON())), "pw@") || strings.Contains(string(must(c.it.MarshalJSON())), `"H"`) {
			t.Errorf("%s %q: its JSON shows a secret: %s", c.it.Kind, c.it.Name, must(c.it.MarshalJSON()))
		}
	}
	for _, k := range []kind.Kind{kind.User, kind.UserLimits, kind.Permission, kind.TopicPermission} {
		if !top.Declares(k) {
			t.Errorf("a file with a users section does not declare %s", k)
		}
	}
	// A per-vhost export has no users: it covers none (a plan of it must
	// not delete the broker's users).
	perVhost, _ := mustRead(t, `{"queues":[{"name":"q","vhost":"/"}]}`, ReadOptions{})
	if perVhost.Declares(kind.User) || perVhost.Declares(kind.Permission) {
		t.Errorf("a file without users declares the users section")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestAccessErrors(t *testing.T) {
	const hash = "c2VjcmV0LWhhc2gtdmFsdWU="
	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{"a user that is not an object", "{\"users\":[\n  \"admin\"]}", []string{"defs.json:2:3: users[0] must be a JSON object describing a user, found a string"}},
		{"a user without a name", "{\"users\":[{\"password_hash\":\"" + hash + "\"}]}", []string{"defs.json:1:11: users[0]: user has no name"}},
		{"tags of another type", `{"users":[{"name":"u","tags":7}]}`, []string{`defs.json:1:30: user "u": "tags" must be a string`, "found a number"}},
		{"both a password and a hash", `{"users":[{"name":"u","password":"pw-xyz","password_hash":"` + hash + `"}]}`, []string{`defs.json:1:11: user "u": both "password" and "password_hash" are set`}},
		{"a hash that is not a string", `{"users":[{"name":"u","password_hash":12345}]}`, []string{`user "u": "password_hash" must be a string, found a number`}},
		{"a user limit that is not an integer", `{"users":[{"name":"u","limits":{"max-connections":"ten"}}]}`, []string{`user "u": user limit max-connections must be an integer, found the string "ten"`}},
		{"permissions naming no user", "{\"permissions\":[\n {\"vhost\":\"/\",\"configure\":\".*\",\"write\":\".*\",\"read\":\".*\"}]}", []string{"defs.json:2:2: permissions[0]: the permission names no user"}},
		{"permissions with an empty user", `{"permissions":[{"user":"","vhost":"/","configure":".*","write":".*","read":".*"}]}`, []string{`"user" is empty`}},
		{"permissions without read", `{"permissions":[{"user":"u","vhost":"/","configure":".*","write":".*"}]}`, []string{`permission of user "u" in vhost "/": no "read"`}},
		{"permissions that are not an object", `{"permissions":[[1]]}`, []string{"permissions[0] must be a JSON object describing a permission, found an array"}},
		{"permissions without a vhost", `{"permissions":[{"user":"u","configure":".*","write":".*","read":".*"}]}`, []string{`permission of user "u" has no "vhost" field`}},
		{"a topic permission without an exchange", `{"topic_permissions":[{"user":"u","vhost":"/","write":".*","read":".*"}]}`, []string{`topic permission of user "u" in vhost "/": no "exchange"`}},
		{"a vhost limit that is not an integer", `{"parameters":[{"vhost":"/","component":"vhost-limits","name":"limits","value":{"max-queues":"many"}}]}`, []string{`vhost limit max-queues must be an integer, found the string "many"`}},
		{"an unknown vhost limit", `{"vhosts":[{"name":"v","limits":{"max-exchanges":3}}]}`, []string{`vhost "v": unknown vhost limit "max-exchanges"`, "max-connections and max-queues"}},
		{"a vhost-limits value that is not an object", `{"parameters":[{"vhost":"/","component":"vhost-limits","name":"limits","value":5}]}`, []string{"vhost-limits parameter in vhost \"/\": the value must be a JSON object"}},
		{"a shovel whose value is a list", `{"parameters":[{"vhost":"/","component":"shovel","name":"s","value":["amqp://u:pw-xyz@h"]}]}`, []string{`shovel "s" in vhost "/": the value of a shovel parameter must be a JSON object of its settings, found an array`}},
		{"an upstream set whose value is an object", `{"parameters":[{"vhost":"/","component":"federation-upstream-set","name":"all","value":{"upstream":"a"}}]}`, []string{`federation upstream set "all" in vhost "/": the value of a federation-upstream-set parameter must be a list`}},
		{"an upstream set member that is not an object", `{"parameters":[{"vhost":"/","component":"federation-upstream-set","name":"all","value":["a"]}]}`, []string{"member 0 of the set must be a JSON object"}},
		{"an upstream without a name", `{"parameters":[{"vhost":"/","component":"federation-upstream","value":{"uri":"amqp://u:pw-xyz@h"}}]}`, []string{"the federation-upstream parameter has no name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Read("defs.json", []byte(tc.src))
			if err == nil {
				t.Fatalf("accepted; RabbitMQ refuses this file")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, secret := range []string{hash, "pw-xyz"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q shows a secret", err)
				}
			}
		})
	}
}
