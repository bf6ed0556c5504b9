package lint

import (
	"github.com/mqctl/mqctl/pkg/definitions"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
)

// fromFile makes a case's topology from a file (vhost "/" and users), so
// that access sugar goes through the loader as in `mqctl lint`.
func fromFile(t *testing.T, src string) func(b *builder) {
	return fromFileEnv(t, map[string]string{"PW": "pw"}, src)
}

// fromFileEnv is fromFile with the environment variables env.
func fromFileEnv(t *testing.T, env map[string]string, src string) func(b *builder) {
	return func(b *builder) {
		top, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		if err != nil {
			t.Fatalf("load: %v\n%s", err, src)
		}
		b.t, b.v = top, top.Vhosts["/"]
	}
}

// accessUsersFile is a vhost "/" with queues orders.audit and
// orders.shipping bound to exchange orders, and user svc given users (the
// inside of svc, unindented).
func accessUsersFile(user string) string {
	var sb strings.Builder
	sb.WriteString("version: 1\nusers:\n  svc:\n    password: ${PW}\n")
	for line := range strings.SplitSeq(strings.TrimRight(user, "\n"), "\n") {
		sb.WriteString("    " + line + "\n")
	}
	sb.WriteString(`vhosts:
  /:
    exchanges:
      orders: { type: topic }
    queues:
      orders.audit:
        bindings: [{ exchange: orders, routing_key: "order.*" }]
      orders.shipping:
        bindings: [{ exchange: orders, routing_key: order.paid }]
`)
	return sb.String()
}

// accessRuleCases are MQ801's and MQ802's cases in TestRules' form (each
// fires on user "svc" or stays silent).
func accessRuleCases(t *testing.T) []ruleCase {
	f := func(user string) func(b *builder) { return fromFile(t, accessUsersFile(user)) }
	return []ruleCase{
		// MQ801
		{name: "access naming declared objects and built-in exchanges", id: "MQ801",
			build: f(`access: { /: { consume: [orders.audit], publish: [orders, "", amq.topic], declare: [orders.audit, orders] } }`)},
		{name: "topic permission for an undeclared exchange", id: "MQ801",
			build: f(`topic_permissions: { /: [{ exchange: orders, write: "^order\\..*$" }, { exchange: ordres, write: "^order\\..*$" }, { exchange: amq.topic, read: "^$" }] }`),
			fire:  []string{"svc"}, contains: []string{`topic permission of user "svc" is for exchange "ordres", which vhost "/" does not declare: RabbitMQ 4.3 refuses it (no_such_exchange)`, `(did you mean "orders"?)`}},
		{name: "consume a misspelt queue", id: "MQ801",
			build: f(`access: { /: { consume: [orders.audti] } }`),
			fire:  []string{"svc"}, contains: []string{`user "svc" consumes queue "orders.audti", which vhost "/" does not declare`, `topology.yaml:5:30`, `(did you mean "orders.audit"?)`}},
		{name: "consume an exchange", id: "MQ801",
			build: f(`access: { /: { consume: [orders] } }`),
			fire:  []string{"svc"}, contains: []string{`"orders" is an exchange: consume names queues, so list the queue ("orders.audit" or "orders.shipping", bound to it)`}},
		{name: "publish to a queue", id: "MQ801",
			build: f(`access: { /: { publish: [orders.audit] } }`),
			fire:  []string{"svc"}, contains: []string{`"orders.audit" is a queue`, `publish: [""]`, `routing key "orders.audit"`}},
		{name: "publish to an undeclared exchange", id: "MQ801",
			build: f(`access: { /: { publish: [events] } }`),
			fire:  []string{"svc"}, contains: []string{`publishes to exchange "events", which vhost "/" does not declare`, "NOT_FOUND", `Declare exchange "events"`}},
		{name: "declare an undeclared name", id: "MQ801",
			build: f(`access: { /: { declare: [scratch] } }`),
			fire:  []string{"svc"}, contains: []string{`may declare "scratch" (configure)`, "not managed by the file"}},
		{name: "explicit permissions are not access", id: "MQ801",
			build: f(`permissions: { /: { read: "^nothing\\.here$" } }`)},

		// MQ802
		{name: "exact and prefix-on-purpose regexps", id: "MQ802",
			build: f(`permissions: { /: { configure: "^$", write: "^orders$", read: "^orders\\..*$" } }
topic_permissions: { /: [{ exchange: orders, write: "^order\\..*$", read: "^$" }] }`)},
		// A trailing (or leading) .* matches any end by design: $ adds
		// nothing to "^orders\..*" (a 4.3 corpus file was told otherwise).
		{name: "prefix and suffix regexps that end or start with .*", id: "MQ802",
			build: f(`permissions: { /: { configure: "^$", write: ".*\\.audit$", read: "^orders\\..*" } }
topic_permissions: { /: [{ exchange: orders, write: "^order\\..+", read: "^$" }] }`)},
		{name: "access sugar is exact", id: "MQ802",
			build: f(`access: { /: { consume: [orders.audit], publish: [orders] } }`)},
		{name: "unanchored name", id: "MQ802",
			build: f(`permissions: { /: { write: orders } }`),
			fire:  []string{"svc"}, contains: []string{`write regexp "orders" of user "svc" is not anchored`, `queue "orders.audit"`, `"old-orders"`, `To grant exactly the name "orders", write ^orders$`}},
		{name: "unescaped dot", id: "MQ802",
			build: f(`permissions: { /: { read: orders.audit } }`),
			fire:  []string{"svc"}, contains: []string{`"ordersXaudit"`, `write ^orders\.audit$ (escaped: an unescaped . matches any character)`}},
		{name: "anchored at the start only", id: "MQ802",
			build: f(`permissions: { /: { read: "^orders" } }`),
			fire:  []string{"svc"}, contains: []string{`read regexp "^orders" of user "svc" is anchored at the start only: RabbitMQ matches every name that starts with "orders", so it also matches queue "orders.audit", queue "orders.shipping" (declared here)`, `write ^orders$; if every name starting with it is meant, say so: ^orders.*$`}},
		{name: "anchors bound to alternatives", id: "MQ802",
			build: f(`permissions: { /: { read: "^orders.audit|orders.shipping$" } }`),
			fire:  []string{"svc"}, contains: []string{"The ^ and $ bind to the first and last alternatives only", `names such as "orders.audit2"`, `write ^(?:orders\.audit|orders\.shipping)$ (escaped`}},
		{name: "alternation without anchors, not of plain names", id: "MQ802",
			build: f(`permissions: { /: { read: "orders\\.(audit|ship+ing)" } }`),
			fire:  []string{"svc"}, contains: []string{`anchor the whole regexp: ^(?:orders\.(audit|ship+ing))$`}},
		{name: "everything", id: "MQ802",
			build: f(`permissions: { /: { configure: ".*", write: ".*", read: ".*" } }`),
			fire:  []string{"svc"}, contains: []string{
				`read regexp ".*" of user "svc" matches every name`, "including those created later",
				`replace its permissions on vhost "/" with access: { "/": { consume: [the ones it uses] } }`, `read: ^(?:orders\.audit|orders\.shipping)$`,
				`publish: [the ones it uses]`, `write: ^orders$`,
				`declare: [the ones it uses]`}},
		{name: "everything, in a vhost whose objects the file does not declare", id: "MQ802",
			// Its applications declare what they use at run time: "^$"
			// would lock them out, so it is not the fix offered first.
			build: fromFile(t, "version: 1\nusers:\n  svc:\n    password: ${PW}\n    permissions: { /: { configure: \".*\", write: \"^$\", read: \"^$\" } }\nvhosts:\n  /: {}\n"),
			fire:  []string{"svc"}, contains: []string{
				`The file declares no queue or exchange in vhost "/", so the ones svc uses are made elsewhere (most often by its applications at run time): limit configure to their names, or to a prefix they share such as '^svc\.'; grant "^$" only if it uses none`}},
		{name: "anchored everything", id: "MQ802",
			build: f(`permissions: { /: { read: "^.*$" } }`),
			fire:  []string{"svc"}, contains: []string{`read regexp "^.*$" of user "svc" matches every name`}},
		{name: "topic permission for every key", id: "MQ802",
			build: f(`topic_permissions: { /: [{ exchange: orders, write: "^order\\..*$", read: ".*" }] }`),
			fire:  []string{"svc"}, contains: []string{`topic permission read regexp ".*" of user "svc" on exchange "orders" matches every routing key: it restricts nothing`, `^order\.paid$`}},
		// RabbitMQ checks topic permissions on topic exchanges only: on the
		// default exchange (rauno56__rabbit-validator__full in the corpus)
		// or a direct one, naming keys restricts nothing, whatever they are.
		{name: "topic permission on the default exchange", id: "MQ802",
			build: f(`topic_permissions: { /: [{ exchange: "", write: ".*", read: "^order$" }] }`),
			fire:  []string{"svc"}, contains: []string{`topic permissions of user "svc" on the default exchange ("") restrict nothing, whatever keys they name: the default exchange ("") is a direct exchange, and RabbitMQ checks topic permissions only on topic exchanges. Name the topic exchange whose keys the user should be limited to (amq.topic`}},
		{name: "topic permission prefix without $", id: "MQ802",
			build: f(`topic_permissions: { /: [{ exchange: orders, write: "^order\\." }] }`),
			fire:  []string{"svc"}, contains: []string{`starts with "order."`, `routing keys such as "order.2"`, `if every routing key starting with it is meant, say so: ^order\..*$`}},
		{name: "ignored on the permission", id: "MQ802",
			build: f("permissions:\n  /: { read: \".*\" } # mqctl:ignore MQ802")},
	}
}

// TestAccessRules runs accessRuleCases against the catalogue, checking
// also that each finding is a warning about the user at its position.
func TestAccessRules(t *testing.T) {
	reg := Builtin()
	seen := map[string][2]bool{}
	for _, tc := range accessRuleCases(t) {
		t.Run(tc.id+"/"+tc.name, func(t *testing.T) {
			b := newBuilder()
			tc.build(b)
			all, err := reg.Run(b.t, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			fs := only(all, tc.id)
			if len(tc.fire) == 0 && len(fs) > 0 {
				t.Fatalf("want no %s findings, got %s", tc.id, describe(fs))
			}
			var msgs []string
			for _, f := range fs {
				if f.Object.Name != "svc" || f.Pos.IsZero() || f.Vhost != "/" || f.Severity != Warning {
					t.Errorf("finding %+v: want a warning about svc at its position", f)
				}
				msgs = append(msgs, f.Location()+": "+f.Message)
			}
			if len(tc.fire) > 0 && len(fs) == 0 {
				t.Fatalf("no %s finding", tc.id)
			}
			joined := strings.Join(msgs, "\n")
			t.Log(joined)
			for _, s := range tc.contains {
				if !strings.Contains(joined, s) {
					t.Errorf("messages lack %q:\n%s", s, joined)
				}
			}
		})
		s := seen[tc.id]
		if len(tc.fire) > 0 {
			s[0] = true
		} else {
			s[1] = true
		}
		seen[tc.id] = s
	}
	for _, a := range accessAnalyzers() {
		if a.RunBroker != nil {
			continue // about users, not a vhost: literalPasswordCases, in TestRules
		}
		if s := seen[a.ID]; !s[0] || !s[1] {
			t.Errorf("rule %s needs a case that fires and one that stays silent", a.ID)
		}
	}
}

// TestUnanchoredOnePerRegexp: each regexp that matches too much is one
// finding, naming its field.
func TestUnanchoredOnePerRegexp(t *testing.T) {
	b := newBuilder()
	fromFile(t, accessUsersFile(`permissions: { /: { configure: "^$", write: orders, read: ".*" } }`))(b)
	fs := runPermissionUnanchored(&Pass{Vhost: b.v, facts: newFacts(b.v, newSimulator(b.v, Options{}.Version.OrDefault()))})
	if len(fs) != 2 || !strings.HasPrefix(fs[0].Message, "write regexp") || !strings.HasPrefix(fs[1].Message, "read regexp") {
		t.Fatalf("want one finding for write and one for read, got %s", describe(fs))
	}
}

// literalPasswordCases are MQ803's cases in TestRules' form.
func literalPasswordCases(t *testing.T) []ruleCase {
	file := func(password string) func(b *builder) {
		return fromFile(t, "version: 1\nvhosts:\n  /: {}\nusers:\n  svc:\n    password: "+password+"\n  other: { tags: [management] }\n")
	}
	return []ruleCase{
		{name: "password from one variable", id: "MQ803", build: file(`"${PW}"`)},
		{name: "password written in the file", id: "MQ803", build: file("s3cret-pw"),
			fire: []string{"svc"}, quiet: []string{"other"},
			contains: []string{`topology.yaml:5:3: the password of user "svc" is written in the file`, `password: "${SVC_PASSWORD}"`}},
		{name: "a variable inside a literal is still written in the file", id: "MQ803", build: file(`"pre-${PW}"`),
			fire: []string{"svc"}},
		// ${PW:-literal}: the variable is there; the default is what is
		// written in the file, and the fix is to drop it (not to name
		// another variable).
		{name: "a password's literal default", id: "MQ803", build: file(`"${PW:-s3cret-pw}"`),
			fire: []string{"svc"}, contains: []string{`has a default written in the file (${PW:-…})`, `Drop the default: password: "${PW}"`},
			absent: []string{"SVC_PASSWORD", "s3cret-pw"}},
		{name: "a password's empty default", id: "MQ803", build: file(`"${PW:-}"`)},
		{name: "a URI's default with a password, the variable set or not", id: "MQ803",
			build: fromFileEnv(t, map[string]string{"SET_URI": "amqp://u:from-env@h/v", "PLAIN_URI": "amqp://u:from-env@h/v"}, `version: 1
vhosts:
  /:
    queues: { q: {} }
    shovels:
      unset: { src-uri: "${SRC_URI:-amqp://u:s3cret@h1/v}", src-queue: q, dest-uri: ["amqp://", "${DEST_URI:-amqps://u:k3y@h2/v}"], dest-queue: q }
      set: { src-uri: "${SET_URI:-amqp://u:s3cret@h1/v}", src-queue: q, dest-uri: "amqp://", dest-queue: q }
      nopassword: { src-uri: "${PLAIN_URI:-amqp://localhost/v}", src-queue: q, dest-uri: "${NONE_URI:-amqp://}", dest-queue: q }
    federation_upstreams:
      up: { uri: "${DC2_URI:-amqp://fed:s3cret@dc2}" }
`),
			fire: []string{"unset", "set", "up"}, quiet: []string{"nopassword"},
			contains: []string{`shovel "unset" of vhost "/" takes src-uri from ${SRC_URI}, but its default, written in the file, holds a password (amqp://u:***@h1/v)`, `Drop the default: src-uri: "${SRC_URI}"`,
				`takes dest-uri[1] from ${DEST_URI}, but its default`, `Drop the default: dest-uri: [..., "${DEST_URI}", ...]`,
				`shovel "set" of vhost "/" takes src-uri from ${SET_URI}, but its default, written in the file, holds a password (amqp://u:***@h1/v)`,
				`Drop the default: uri: "${DC2_URI}"`},
			absent: []string{"__SHOVEL", "__FEDERATION", "from-env", "s3cret"}},
		{name: "a URI's password written in the file", id: "MQ803",
			build: fromFileEnv(t, map[string]string{"SRC_URI": "amqp://u:p@h/v", "DEST_URI": "amqps://u:p@h/v"}, `version: 1
vhosts:
  /:
    queues: { q: {} }
    shovels:
      literal: { src-uri: "amqp://u:s3cret@h1/v", src-queue: q, dest-uri: ["amqp://", "amqps://h2/v?password=k3y"], dest-queue: q }
      nocreds: { src-uri: "amqp://u@h1/v", src-queue: q, dest-uri: "amqp://", dest-queue: q }
      fromenv: { src-uri: "${SRC_URI}", src-queue: q, dest-uri: ["${DEST_URI}"], dest-queue: q }
    federation_upstreams:
      up: { uri: "amqp://fed:s3cret@dc2" }
`),
			fire: []string{"literal", "up"}, quiet: []string{"nocreds", "fromenv"},
			contains: []string{`shovel "literal" of vhost "/" has a password written in the file, in dest-uri[1] (amqps://h2/v?password=***)`, `dest-uri: [..., "${__SHOVEL_LITERAL_DEST_URI_2}", ...]`,
				`federation upstream "up" of vhost "/" has a password written in the file, in uri (amqp://fed:***@dc2)`}},
		// A definitions file may hold a placeholder its deployment fills in
		// (BiobankLab__sensitive-data-archive: "uri": "CEGA_CONNECTION"):
		// masked whole, but no password written in the file.
		{name: "a URI that is no URI", id: "MQ803",
			build: func(b *builder) {
				top, _, err := definitions.Read("defs.json", []byte(`{"vhosts":[{"name":"/"}],"parameters":[{"component":"federation-upstream","vhost":"/","name":"up","value":{"uri":"CEGA_CONNECTION"}}]}`))
				if err != nil {
					t.Fatal(err)
				}
				b.t, b.v = top, top.Vhosts["/"]
			},
			fire: []string{"up"}, contains: []string{`federation upstream "up" of vhost "/" has in uri a value that is no URI (***: it has no scheme`, `no password is seen in it`, `uri: "${__FEDERATION_UPSTREAM_UP_URI}"`}},
	}
}
