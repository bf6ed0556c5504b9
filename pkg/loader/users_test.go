package loader

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// accessFile is a file with vhost "orders" (body, unindented, inside it)
// and user "svc" whose access on orders is access.
func accessFile(access, body string) string {
	var sb strings.Builder
	sb.WriteString("version: 1\nusers:\n  svc:\n    password: ${PW}\n    access:\n      orders: " + access + "\nvhosts:\n  orders:\n")
	for line := range strings.SplitSeq(strings.TrimRight(body, "\n"), "\n") {
		sb.WriteString("    " + line + "\n")
	}
	return sb.String()
}

const accessVhost = `exchanges:
  orders: { type: topic }
  orders.dlx: { type: topic }
  orders.ae: { type: fanout }
  orders.fan: { type: fanout, alternate_exchange: orders.ae }
  audit+log(1): { type: fanout }
queues:
  orders.audit:
    bindings: [{ exchange: orders, routing_key: "order.*" }]
    dead_letter: { exchange: orders.dlx, queue: orders.audit.dlq }
  orders.shipping:
    bindings: [{ exchange: orders, routing_key: order.paid }, { exchange: orders.fan }]
  plain: {}
bindings:
  - { source: orders, destination: orders.fan, destination_type: exchange, routing_key: "#" }
`

// TestAccessExpansion: each form of access becomes the permission a user
// reads in validate --expanded: exact, escaped, anchored regexps covering
// what the operations need.
func TestAccessExpansion(t *testing.T) {
	tests := []struct {
		name   string
		access string
		want   topology.Args
	}{
		{"nothing: vhost access only", "{}", topology.Args{"configure": "^$", "write": "^$", "read": "^$"}},
		{"null: vhost access only", "null", topology.Args{"configure": "^$", "write": "^$", "read": "^$"}},
		{"consume one queue: read on it, nothing on its exchanges", "{ consume: [orders.audit] }",
			topology.Args{"configure": "^$", "write": "^$", "read": `^orders\.audit$`}},
		{"consume several: one alternation, sorted", "{ consume: [plain, orders.shipping, orders.audit, plain] }",
			topology.Args{"configure": "^$", "write": "^$", "read": `^(?:orders\.audit|orders\.shipping|plain)$`}},
		{"one name without a list", "{ consume: plain, publish: orders }",
			topology.Args{"configure": "^$", "write": "^orders$", "read": "^plain$"}},
		{"publish: write on the exchange only", "{ publish: [orders] }",
			topology.Args{"configure": "^$", "write": "^orders$", "read": "^$"}},
		{"publish to the default exchange: write on amq.default", `{ publish: [""] }`,
			topology.Args{"configure": "^$", "write": `^amq\.default$`, "read": "^$"}},
		{"names escaped", `{ publish: ["audit+log(1)"] }`,
			topology.Args{"configure": "^$", "write": `^audit\+log\(1\)$`, "read": "^$"}},
		{"declare a queue without bindings or DLX: configure only", "{ declare: [plain] }",
			topology.Args{"configure": "^plain$", "write": "^$", "read": "^$"}},
		{"declare a queue with bindings: write on it, read on each source", "{ declare: [orders.shipping] }",
			topology.Args{"configure": `^orders\.shipping$`, "write": `^orders\.shipping$`, "read": `^(?:orders|orders\.fan)$`}},
		{"declare a queue with a DLX argument: read on it and write on the DLX", "{ declare: [orders.audit] }",
			topology.Args{"configure": `^orders\.audit$`, "write": `^(?:orders\.audit|orders\.dlx)$`, "read": `^(?:orders|orders\.audit)$`}},
		{"declare an exchange with an AE and a binding to it", "{ declare: [orders.fan] }",
			topology.Args{"configure": `^orders\.fan$`, "write": `^(?:orders\.ae|orders\.fan)$`, "read": `^(?:orders|orders\.fan)$`}},
		{"declare a name the file does not declare: configure only", "{ declare: [elsewhere] }",
			topology.Args{"configure": "^elsewhere$", "write": "^$", "read": "^$"}},
		{"all three", "{ consume: [orders.audit], publish: [orders], declare: [orders.audit] }",
			topology.Args{"configure": `^orders\.audit$`, "write": `^(?:orders|orders\.audit|orders\.dlx)$`, "read": `^(?:orders|orders\.audit)$`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := mustLoad(t, accessFile(tt.access, accessVhost), "PW", "s3cret")
			it := top.Vhosts["orders"].Items.Get(kind.Permission, "svc")
			if it == nil {
				t.Fatalf("no permission for svc in orders: %v", top.Vhosts["orders"].Items)
			}
			if diff := cmp.Diff(tt.want, it.Settings); diff != "" {
				t.Errorf("permission (-want +got):\n%s", diff)
			}
			if a := AccessOf(it); a == nil || a.User != "svc" || a.Vhost != "orders" || a.Pos.Line != 6 {
				t.Errorf("AccessOf = %+v, want the access of svc on orders at line 6", a)
			}
		})
	}
}

// TestExactRegexp: the regexps match exactly the names, as RabbitMQ's
// PCRE and Go's RE2 read them alike (no construct beyond ^ $ (?:|) and
// escapes).
func TestExactRegexp(t *testing.T) {
	tests := []struct {
		names    []string
		want     string
		match    []string
		nonmatch []string
	}{
		{nil, "^$", []string{""}, []string{"a", "orders"}},
		{[]string{"orders"}, "^orders$", []string{"orders"}, []string{"orders.audit", "xorders", "order", ""}},
		{[]string{"orders.audit"}, `^orders\.audit$`, []string{"orders.audit"}, []string{"ordersXaudit", "orders.audit.dlq"}},
		{[]string{"b", "a", "b"}, "^(?:a|b)$", []string{"a", "b"}, []string{"ab", "a|b", ""}},
		{[]string{"a.*", "q[1]", "x|y", "$^"}, `^(?:\$\^|a\.\*|q\[1\]|x\|y)$`, []string{"a.*", "q[1]", "x|y", "$^"}, []string{"abc", "q1", "x", "y"}},
	}
	for _, tt := range tests {
		got := ExactRegexp(tt.names)
		if got != tt.want {
			t.Errorf("ExactRegexp(%q) = %s, want %s", tt.names, got, tt.want)
			continue
		}
		re := regexp.MustCompile(got)
		for _, s := range tt.match {
			if !re.MatchString(s) {
				t.Errorf("%s does not match %q", got, s)
			}
		}
		for _, s := range tt.nonmatch {
			if re.MatchString(s) {
				t.Errorf("%s matches %q", got, s)
			}
		}
	}
}

// TestAccessErrors: every mistake in access names file:line:col, what is
// wrong and how to fix it.
func TestAccessErrors(t *testing.T) {
	both := "version: 1\nusers:\n  svc:\n    password: ${PW}\n    permissions:\n      orders: { read: \"^a$\" }\n    access:\n      orders: { consume: [a] }\nvhosts:\n  orders: {}\n"
	tests := []loadError{
		{"access and permissions for one vhost", both,
			`t.yaml:8:7: user "svc": access: vhost "orders" has both access and permissions (at t.yaml:6:7) (keep one for vhost "orders": access (mqctl writes exact regexps) or permissions (your own regexps))`},
		{"undeclared vhost",
			"version: 1\nusers:\n  svc:\n    password: ${PW}\n    access:\n      billing: { consume: [a] }\nvhosts:\n  orders: {}\n",
			`t.yaml:6:7: user "svc": access: vhost "billing" is not declared in the file (declare vhost "billing" under vhosts, or remove its access)`},
		{"access not a mapping",
			"version: 1\nusers:\n  svc:\n    password: ${PW}\n    access: [orders]\nvhosts:\n  orders: {}\n",
			`t.yaml:5:13: user "svc": access: expected a mapping of vhosts, got a list (write access as a mapping from vhost to {consume: [queues], publish: [exchanges], declare: [names]})`},
		{"unknown operation", accessFile("{ consumes: [a] }", "{}"),
			`t.yaml:6:17: user "svc": access.orders: unknown field "consumes" (did you mean "consume"?)`},
		{"operation not a list", accessFile("{ consume: { a: 1 } }", "{}"),
			`t.yaml:6:26: user "svc": access.orders: consume: expected a list of names, got a mapping (write consume as a list of queue names, e.g. consume: [orders.audit])`},
		{"name not a string", accessFile("{ publish: [[x]] }", "{}"),
			`t.yaml:6:27: user "svc": access.orders: publish[0]: expected a string, got a list`},
		{"empty queue name", accessFile(`{ consume: [""] }`, "{}"),
			`t.yaml:6:27: user "svc": access.orders: consume[0]: must not be empty (name the queue, e.g. consume: [orders.audit])`},
		{"empty declared name", accessFile(`{ declare: [""] }`, "{}"),
			`t.yaml:6:27: user "svc": access.orders: declare[0]: must not be empty (name the queue or exchange: access grants exact names, so a server-named queue (amq.gen-…) needs permissions instead)`},
	}
	checkLoadErrors(t, tests)
}

// loadError is a file of the users section (with ${PW} set) and the one
// error it must give.
type loadError struct {
	name, src, want string
}

// checkLoadErrors loads each case's file: it fails with exactly the
// error the case wants, which never shows the password.
func checkLoadErrors(t *testing.T, tests []loadError) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(tt.src), Options{LookupEnv: envOf("PW", "s3cret")})
			if err == nil {
				t.Fatalf("loaded; want %s", tt.want)
			}
			if got := errorLines(err); got != tt.want {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.want)
			}
			if strings.Contains(errorLines(err), "s3cret") {
				t.Errorf("the error shows the password")
			}
		})
	}
}

// TestAccessBesidePermissions: access on one vhost and permissions on
// another are both kept; only the sugar's item has an Access.
func TestAccessBesidePermissions(t *testing.T) {
	src := `version: 1
users:
  svc:
    password: ${PW}
    permissions:
      billing: { configure: "^$", write: "^bills$", read: "^$" } # mqctl:ignore MQ802
    access:
      orders: { consume: [orders.audit] }
vhosts:
  orders:
    queues: { orders.audit: {} }
  billing:
    exchanges: { bills: { type: fanout } }
`
	top := mustLoad(t, src, "PW", "s3cret")
	hand := top.Vhosts["billing"].Items.Get(kind.Permission, "svc")
	sugar := top.Vhosts["orders"].Items.Get(kind.Permission, "svc")
	if hand == nil || sugar == nil {
		t.Fatalf("permissions: billing %v, orders %v", hand, sugar)
	}
	if hand.Settings["write"] != "^bills$" || sugar.Settings["read"] != `^orders\.audit$` {
		t.Errorf("billing %v, orders %v", hand.Settings, sugar.Settings)
	}
	if AccessOf(hand) != nil {
		t.Errorf("AccessOf(explicit permission) = %+v, want nil", AccessOf(hand))
	}
	a := AccessOf(sugar)
	if a == nil || len(a.Consume) != 1 || a.Consume[0].Name != "orders.audit" || a.Consume[0].Pos.String() != "t.yaml:8:27" {
		t.Errorf("AccessOf(sugar) = %+v", a)
	}
	if !hand.Ignores("MQ802") {
		t.Errorf("the ignore comment on billing's permission is lost: %v", hand.Ignore)
	}
}

// TestUsersSectionErrors: each mistake in a user, its limits, permissions
// and topic permissions (decoded by the user kind's spec and the kinds
// nested in it) names file:line:col, what is wrong and how to fix it.
func TestUsersSectionErrors(t *testing.T) {
	user := func(body string) string {
		return "version: 1\nvhosts:\n  orders: {}\nusers:\n  svc:\n" + body
	}
	tests := []loadError{
		{"unknown field", user("    pasword: ${PW}\n"),
			`t.yaml:6:5: user "svc": unknown field "pasword" (did you mean "password"?)`},
		{"password and hash", user("    password: ${PW}\n    password_hash: YWJj\n"),
			`t.yaml:7:20: user "svc": password_hash: password is set too (keep one: password (from ${VAR}) or password_hash)`},
		{"algorithm without a hash", user("    password: ${PW}\n    hashing_algorithm: rabbit_password_hashing_sha512\n"),
			`t.yaml:7:24: user "svc": hashing_algorithm: applies to password_hash only (remove it, or give password_hash)`},
		{"unknown algorithm", user("    password_hash: YWJj\n    hashing_algorithm: rabbit_password_hashing_sha384\n"),
			`t.yaml:7:24: user "svc": hashing_algorithm: invalid value "rabbit_password_hashing_sha384" (did you mean "rabbit_password_hashing_sha256"?)`},
		// Measured on 4.3.6: HTTP 400 [not_base64, HASH], the hash quoted.
		{"a hash that is not base64", user("    password_hash: notbase64!!xyz\n"),
			`t.yaml:6:20: user "svc": password_hash: is not base64 (with its = padding): RabbitMQ refuses it (not_base64) (give the hash as the broker stores it (GET /api/users/NAME, or a definitions export), or give password instead)`},
		{"a hash without its padding", user("    password_hash: QUJDRA\n"),
			`t.yaml:6:20: user "svc": password_hash: is not base64 (with its = padding): RabbitMQ refuses it (not_base64) (give the hash as the broker stores it (GET /api/users/NAME, or a definitions export), or give password instead)`},
		{"tags a mapping", user("    tags: { management: true }\n"),
			`t.yaml:6:11: user "svc": tags: expected a list of tags, got a mapping (write tags as a list, e.g. [management])`},
		{"an empty tag", user("    tags: [management, \"\"]\n"),
			`t.yaml:6:24: user "svc": tags[1]: must not be empty (write a tag such as management)`},
		// Measured on 4.3.6: tags ["a,b", " c"] are stored as a, b and
		// c, so the next plan changed them again.
		{"a tag with a comma", user("    tags: [\"management,monitoring\"]\n"),
			`t.yaml:6:12: user "svc": tags[0]: "management,monitoring" holds a comma, and RabbitMQ splits it there into several (write each as its own list item: [management, monitoring])`},
		{"tags in one string", user("    tags: management, monitoring\n"),
			`t.yaml:6:11: user "svc": tags: "management, monitoring" holds a comma, and RabbitMQ splits it there into several (write each as its own list item: [management, monitoring])`},
		{"a tag with a space around it", user("    tags: [\" policymaker\"]\n"),
			`t.yaml:6:12: user "svc": tags[0]: " policymaker" starts or ends with a space, which RabbitMQ strips (write "policymaker")`},
		// RabbitMQ takes any tag: a misspelt one is taken, and the user
		// silently lacks the access. A custom tag further off is left.
		{"a tag one letter from a built-in one", user("    password: ${PW}\n    tags: [managment, billing-team]\n"),
			`t.yaml:7:11: user "svc": tags: "managment" is no tag RabbitMQ knows, and one letter from "management": RabbitMQ would take it, and the user would not have management's access (write management)`},
		{"limits not a mapping", user("    limits: 10\n"),
			`t.yaml:6:13: user "svc": limits: expected a mapping, got integer 10 (fields: max-connections, max-channels)`},
		{"permissions a list", user("    permissions: [orders]\n"),
			`t.yaml:6:18: user "svc": permissions: expected a mapping of vhosts, got a list (write permissions as a mapping from vhost to {configure, write, read})`},
		{"permissions on an undeclared vhost", user("    permissions:\n      billing: { read: \".*\" }\n"),
			`t.yaml:7:7: user "svc": permissions: vhost "billing" is not declared in the file (declare vhost "billing" under vhosts, or remove these permissions)`},
		{"unknown permission field", user("    permissions:\n      orders: { reed: \".*\" }\n"),
			`t.yaml:7:17: user "svc": permissions.orders: unknown field "reed" (did you mean "read"?)`},
		{"topic permissions a mapping per vhost", user("    topic_permissions:\n      orders: { exchange: amq.topic }\n"),
			`t.yaml:7:15: user "svc": topic_permissions.orders: expected a list, got a mapping (write a list of {exchange, write, read})`},
		{"topic permission without an exchange", user("    topic_permissions:\n      orders: [{ write: \".*\" }]\n"),
			`t.yaml:7:16: user "svc": topic_permissions.orders[0]: missing required field "exchange" (add exchange: amq.topic)`},
		// Measured on 4.3.6: PUT /api/users/ (no name) is HTTP 405, after
		// apply made what came before it.
		{"an empty name", "version: 1\nvhosts:\n  orders: {}\nusers:\n  \"\":\n    password: ${PW}\n    permissions:\n      orders: { read: \".*\" }\n",
			`t.yaml:5:3: user name must not be empty (give the user a name)`},
		{"an exchange twice", user("    topic_permissions:\n      orders: [{ exchange: amq.topic }, { exchange: amq.topic, read: \".*\" }]\n"),
			`t.yaml:7:53: user "svc": topic_permissions.orders[1]: exchange "amq.topic" is listed twice (give each exchange once)`},
	}
	checkLoadErrors(t, tests)
}

// TestUsersSection: a user, its limits, and its permissions and topic
// permissions by vhost, as the loader holds them: an operation left out
// is ^$ (none), tags are sorted and each once, an empty section is none.
func TestUsersSection(t *testing.T) {
	src := `version: 1
vhosts:
  orders: {}
  billing: {}
users:
  svc:
    password: ${PW}
    tags: [monitoring, management, monitoring]
    limits: { max-connections: 10 }
    permissions:
      orders: { read: "^orders$" }
      billing: {}
    topic_permissions:
      orders: [{ exchange: amq.topic, write: "^a\\." }, { exchange: events }]
      billing: []
  ops:
    password_hash: YWJj
    hashing_algorithm: rabbit_password_hashing_sha512
    tags: administrator
    limits: {}
`
	top := mustLoad(t, src, "PW", "s3cret")
	get := func(items topology.Items, k kind.Kind, name string) topology.Args {
		if it := items.Get(k, name); it != nil {
			return it.Settings
		}
		return nil
	}
	tests := []struct {
		what      string
		got, want topology.Args
	}{
		{"user svc", get(top.Items, kind.User, "svc"), topology.Args{"password": "s3cret", "tags": []any{"management", "monitoring"}}},
		{"user ops", get(top.Items, kind.User, "ops"), topology.Args{"password_hash": "YWJj", "hashing_algorithm": "rabbit_password_hashing_sha512", "tags": []any{"administrator"}}},
		{"svc's limits", get(top.Items, kind.UserLimits, "svc"), topology.Args{"max-connections": int64(10)}},
		{"ops's empty limits: none", get(top.Items, kind.UserLimits, "ops"), nil},
		{"permission on orders", get(top.Vhosts["orders"].Items, kind.Permission, "svc"), topology.Args{"configure": "^$", "write": "^$", "read": "^orders$"}},
		{"empty permission on billing: access to the vhost only", get(top.Vhosts["billing"].Items, kind.Permission, "svc"), topology.Args{"configure": "^$", "write": "^$", "read": "^$"}},
		{"topic permissions on orders", get(top.Vhosts["orders"].Items, kind.TopicPermission, "svc"),
			topology.Args{"amq.topic": map[string]any{"write": `^a\.`, "read": "^$"}, "events": map[string]any{"write": "^$", "read": "^$"}}},
		{"no topic permissions on billing", get(top.Vhosts["billing"].Items, kind.TopicPermission, "svc"), nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.what, diff)
		}
	}
	for _, k := range []kind.Kind{kind.User, kind.UserLimits, kind.Permission, kind.TopicPermission} {
		if !top.Declares(k) {
			t.Errorf("the file's users section declares %s", k)
		}
	}
	if p := top.Vhosts["orders"].Items.Get(kind.Permission, "svc"); p == nil || p.Pos.Line != 11 || p.Pos.Col != 7 {
		t.Errorf("the permission on orders is at %+v, want line 11, column 7 (its vhost's name)", p)
	}
}

// TestExactRegexpWithinTheLimit: a list whose plain alternation would pass
// the 1024 bytes RabbitMQ 4.3.2+ takes is written with the names' common
// prefix and suffix taken out, and matches exactly the same names; a
// short list keeps the plain form.
func TestExactRegexpWithinTheLimit(t *testing.T) {
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("service.tenant%02d.events.inbox", i))
	}
	names = append(names, "service.tenant.events.inbox") // empty middle
	re := ExactRegexp(names)
	if len(re) > rmqversion.MaxPatternBytes || !strings.HasPrefix(re, `^service\.tenant(?:`) || !strings.HasSuffix(re, `)\.events\.inbox$`) {
		t.Fatalf("ExactRegexp = %s (%d bytes)", re, len(re))
	}
	compiled := regexp.MustCompile(re)
	for _, n := range names {
		if !compiled.MatchString(n) {
			t.Errorf("%s does not match %q", re, n)
		}
	}
	for _, n := range []string{"service.tenant40.events.inbox", "service.tenant00.events.inbox2", "xservice.tenant00.events.inbox", "service.tenant0.events.inbox"} {
		if compiled.MatchString(n) {
			t.Errorf("%s matches %q", re, n)
		}
	}
	if got := ExactRegexp([]string{"aa", "a"}); got != `^(?:a|aa)$` {
		t.Errorf("a short list: %s", got)
	}
	if p, s := commonAffixes([]string{"aba", "aa"}); len(p)+len(s) > 2 {
		t.Errorf("affixes of aba, aa overlap: %q %q", p, s)
	}
}

// TestRefusedRegexps: a regexp RabbitMQ refuses as invalid (PCRE refuses
// it too: pattern.Refused) in a policy, an operator policy, a permission
// or a topic permission names file:line:col, the value, what is wrong and
// the fix; one only PCRE reads loads.
func TestRefusedRegexps(t *testing.T) {
	file := func(users, vhost string) string {
		return "version: 1\nusers:\n  svc:\n    password: ${PW}\n" + users + "vhosts:\n  orders:\n" + vhost
	}
	tests := []loadError{
		{"policy", file("", "    policies:\n      p1: { pattern: \"^(a\", definition: { max-length: 10 } }\n"),
			`t.yaml:8:22: policy "p1": pattern "^(a": missing closing ): RabbitMQ refuses the policy (close the group or escape the parenthesis (\())`},
		{"operator policy", file("", "    operator_policies:\n      op: { pattern: \"*\", definition: { max-length: 10 } }\n"),
			`t.yaml:8:22: operator policy "op": pattern "*": missing argument to repetition operator *: nothing to repeat: RabbitMQ refuses the operator policy (put what to repeat before *, or escape it (\*))`},
		{"permission", file("    permissions: { orders: { configure: \"^$\", write: \"[\", read: \"^orders\" } }\n", ""),
			`t.yaml:5:54: user "svc": permissions.orders: write: "[": missing closing ] for the character class [: RabbitMQ refuses the permission (invalid_regexp) (close the character class with ], or escape the bracket (\[))`},
		{"topic permission", file("    topic_permissions: { orders: [ { exchange: amq.topic, read: \"[z-a]\" } ] }\n", ""),
			`t.yaml:5:65: user "svc": topic_permissions.orders[0]: read: "[z-a]": invalid character class range z-a: the range runs backwards: RabbitMQ refuses the topic permission (invalid_regexp) (write the lower character first ([a-z]), or escape the hyphen (\-) to match it)`},
	}
	checkLoadErrors(t, tests)
	pcre := file("    permissions: { orders: { configure: \"^(?!amq\\\\.)\", write: \"^(\\\\w+)\\\\.\\\\1$\", read: \"a{2000}\" } }\n",
		"    policies:\n      p1: { pattern: \"^(?!amq\\\\.).*\", definition: { max-length: 10 } }\n")
	mustLoad(t, pcre, "PW", "s3cret")
}
