package export

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/pattern"
	"github.com/mqctl/mqctl/pkg/topology"
)

// topologyOpts compare the broker-visible state of two topologies.
var topologyOpts = cmp.Options{
	cmpopts.IgnoreFields(topology.Vhost{}, "Meta"),
	cmpopts.IgnoreFields(topology.Exchange{}, "Meta"),
	cmpopts.IgnoreFields(topology.Queue{}, topology.QueueFileFields...),
	cmpopts.IgnoreFields(topology.Binding{}, "Meta"),
	cmpopts.IgnoreFields(topology.Policy{}, "Meta"),
	cmpopts.IgnoreFields(topology.Topology{}, "Lint", "Env"), // what the file says, not what the broker holds
	// An item's position is where it was read; Refs name the variables a
	// file took its secrets from (the source's, or the export's
	// placeholders): neither is broker state.
	cmpopts.IgnoreFields(topology.Item{}, "Meta", "Refs"),
	// A user's password settings do not round-trip: the export writes a
	// ${VAR} placeholder for the password, never the hash. Whether the
	// user has one does.
	cmp.Transformer("userPassword", func(it topology.Item) comparableItem {
		out := comparableItem{Kind: it.Kind, Name: it.Name, Settings: it.Settings, Secret: it.Secret}
		if it.Kind != kind.User {
			return out
		}
		out.HasPassword = hasPassword(&it)
		out.Settings = it.Settings.Clone()
		out.Secret = nil
		for _, k := range passwordSettings {
			delete(out.Settings, k)
		}
		for _, k := range it.Secret {
			if !slices.Contains(passwordSettings, k) {
				out.Secret = append(out.Secret, k)
			}
		}
		return out
	}),
	cmpopts.EquateEmpty(),
}

// comparableItem is what topologyOpts compare of a topology.Item.
type comparableItem struct {
	Kind        kind.Kind
	Name        string
	Settings    topology.Args
	Secret      []string
	HasPassword bool
}

// exportEnv answers the variables of the export of top: each URI with
// credentials the value the source held, anything else (a password, of
// which the source holds only the hash) a value of its own, as a user
// sets them before applying the export.
func exportEnv(top *topology.Topology) func(string) (string, bool) {
	env := secretValues(top)
	return func(name string) (string, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		return anyValue(name)
	}
}

// writeAndLoad exports t and loads the output back.
func writeAndLoad(t *testing.T, top *topology.Topology, sugar bool) (*topology.Topology, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteYAML(&buf, top, Options{Sugar: sugar, Source: "test"}); err != nil {
		t.Fatalf("WriteYAML: %v", err)
	}
	back, err := loader.LoadBytes("exported.yaml", buf.Bytes(), loader.Options{LookupEnv: exportEnv(top)})
	if err != nil {
		t.Fatalf("the exported file does not load (sugar=%t): %v\n%s", sugar, err, numbered(buf.String()))
	}
	return back, buf.String()
}

func numbered(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.Repeat(" ", 4-len(itoa(i+1))) + itoa(i+1) + "  " + lines[i]
	}
	return strings.Join(lines, "\n")
}

func itoa(i int) string {
	var b []byte
	for ; i > 0 || len(b) == 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// assertRoundTrip checks that top survives export and load unchanged, with
// and without sugar.
func assertRoundTrip(t *testing.T, top *topology.Topology) {
	t.Helper()
	for _, sugar := range []bool{false, true} {
		back, out := writeAndLoad(t, top, sugar)
		if diff := cmp.Diff(sorted(exported(top)), sorted(back), topologyOpts); diff != "" {
			t.Errorf("sugar=%t: loading the export gives another topology (-source +loaded):\n%s\nexported:\n%s", sugar, diff, numbered(out))
		}
	}
}

// exported is t without the permissions and topic permissions of users
// it does not list: an mqctl file declares permissions under their user,
// so export leaves them out (definitions.Read warns of them when the
// file lists users). t is not changed.
func exported(t *topology.Topology) *topology.Topology {
	out := *t
	out.Vhosts = make(map[string]*topology.Vhost, len(t.Vhosts))
	for vn, v := range t.Vhosts {
		cp := *v
		cp.Items = nil
		for k, byName := range v.Items {
			for name, it := range byName {
				if (k == kind.Permission || k == kind.TopicPermission) && t.Items.Get(kind.User, name) == nil {
					continue
				}
				cp.Items.Put(it)
			}
		}
		out.Vhosts[vn] = &cp
	}
	return &out
}

// sorted returns t with every vhost's bindings in a stable order.
func sorted(t *topology.Topology) *topology.Topology {
	for _, v := range t.Vhosts {
		v.SortBindings()
	}
	return t
}

func readDefs(t *testing.T, path string) *topology.Topology {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	top, _, err := definitions.Read(filepath.Base(path), data)
	if err != nil {
		t.Fatalf("definitions.Read: %v", err)
	}
	return top
}

// TestGolden exports the definitions in testdata/*.json, with sugar
// (NAME.golden) and without (NAME.plain.golden); go test -update rewrites them.
func TestGolden(t *testing.T) {
	t.Parallel()
	inputs, _ := filepath.Glob("testdata/*.json")
	if len(inputs) == 0 {
		t.Fatal("no testdata/*.json")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			top := readDefs(t, in)
			for _, sugar := range []bool{true, false} {
				golden := filepath.Join("testdata", name+".golden")
				if !sugar {
					golden = filepath.Join("testdata", name+".plain.golden")
				}
				var buf bytes.Buffer
				if err := WriteYAML(&buf, top, Options{Sugar: sugar, Source: filepath.Base(in)}); err != nil {
					t.Fatal(err)
				}
				gold.Check(t, golden, buf.Bytes())
			}
			assertRoundTrip(t, top)
		})
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	top := readDefs(t, "testdata/sugar.json")
	var first bytes.Buffer
	if err := WriteYAML(&first, top, Options{Sugar: true}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		var again bytes.Buffer
		if err := WriteYAML(&again, readDefs(t, "testdata/sugar.json"), Options{Sugar: true}); err != nil {
			t.Fatal(err)
		}
		if again.String() != first.String() {
			t.Fatalf("run %d wrote different output:\n%s\nvs\n%s", i, again.String(), first.String())
		}
	}
}

func q(name, typ string, args topology.Args) *topology.Queue {
	return &topology.Queue{Name: name, Type: typ, Durable: true, Arguments: args}
}

func transient(x *topology.Queue) *topology.Queue {
	x.Durable = false
	return x
}

func bind(src, dst, key string) *topology.Binding {
	return &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestQueue, RoutingKey: key}
}

func vhostWith(qs []*topology.Queue, xs []*topology.Exchange, bs []*topology.Binding) *topology.Topology {
	top := topology.New()
	v := top.Vhost("/")
	for _, x := range qs {
		v.Queues[x.Name] = x
	}
	for _, x := range xs {
		v.Exchanges[x.Name] = x
	}
	v.Bindings = bs
	return top
}

func TestSugar(t *testing.T) {
	t.Parallel()
	dlx := &topology.Exchange{Name: "dlx", Type: "direct", Durable: true}
	tests := []struct {
		name     string
		top      *topology.Topology
		want     []string // substrings of the sugared output
		wantNot  []string
		explicit []string // queues that must stay listed
	}{
		{
			name: "DLQ pair through a direct exchange, key = queue name",
			top: vhostWith(
				[]*topology.Queue{q("work", "quorum", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "work"}), q("work.dlq", "quorum", nil)},
				[]*topology.Exchange{dlx}, []*topology.Binding{bind("dlx", "work.dlq", "work")}),
			want:    []string{"dead_letter: {exchange: dlx, queue: work.dlq}"},
			wantNot: []string{"work.dlq:", "routing_key"},
		},
		{
			name: "other routing key is written",
			top: vhostWith(
				[]*topology.Queue{q("work", "classic", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "dead"}), q("parking", "classic", nil)},
				[]*topology.Exchange{dlx}, []*topology.Binding{bind("dlx", "parking", "dead")}),
			want: []string{"dead_letter: {exchange: dlx, routing_key: dead, queue: parking}"},
		},
		{
			name: "DLQ with its own settings is written as a mapping",
			top: vhostWith(
				[]*topology.Queue{q("work", "quorum", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "work"}), q("work.dlq", "classic", topology.Args{"x-message-ttl": int64(604800000)})},
				[]*topology.Exchange{dlx}, []*topology.Binding{bind("dlx", "work.dlq", "work")}),
			want: []string{"queue: {name: work.dlq, type: classic, limits: {message_ttl: 7d}}"},
		},
		{
			// dead_letter.queue declares a durable DLQ whatever the origin's
			// durability: a bare name for a durable DLQ of a transient queue,
			// durable: false written for a transient one.
			name: "durable DLQ of a transient queue is a bare name",
			top: vhostWith(
				[]*topology.Queue{transient(q("work", "classic", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "work"})), q("work.dlq", "classic", nil)},
				[]*topology.Exchange{dlx}, []*topology.Binding{bind("dlx", "work.dlq", "work")}),
			want:    []string{"dead_letter: {exchange: dlx, queue: work.dlq}"},
			wantNot: []string{"work.dlq:"},
		},
		{
			name: "transient DLQ of a transient queue says durable: false",
			top: vhostWith(
				[]*topology.Queue{transient(q("work", "classic", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "work"})), transient(q("work.dlq", "classic", nil))},
				[]*topology.Exchange{dlx}, []*topology.Binding{bind("dlx", "work.dlq", "work")}),
			want: []string{"queue: {name: work.dlq, durable: false}"},
		},
		{
			name: "DLQ through the default exchange",
			top: vhostWith(
				[]*topology.Queue{q("rpc", "classic", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "rpc.dlq"}), q("rpc.dlq", "classic", nil)},
				nil, nil),
			want: []string{"rpc: {dead_letter: {queue: rpc.dlq}}"},
		},
		{
			name: "a DLX with a second receiver for the key is not a pair",
			top: vhostWith(
				[]*topology.Queue{q("work", "classic", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "work"}), q("work.dlq", "classic", nil), q("audit", "classic", nil)},
				[]*topology.Exchange{{Name: "dlx", Type: "topic", Durable: true}}, []*topology.Binding{bind("dlx", "work.dlq", "work"), bind("dlx", "audit", "#")}),
			explicit: []string{"work.dlq"},
		},
		{
			name: "a DLQ with another binding is not a pair",
			top: vhostWith(
				[]*topology.Queue{q("work", "classic", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "work"}), q("work.dlq", "classic", nil)},
				[]*topology.Exchange{dlx, {Name: "other", Type: "fanout", Durable: true}}, []*topology.Binding{bind("dlx", "work.dlq", "work"), bind("other", "work.dlq", "")}),
			explicit: []string{"work.dlq"},
		},
		{
			name: "a DLQ shared by two queues stays explicit",
			top: vhostWith(
				[]*topology.Queue{
					q("a", "classic", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "k"}),
					q("b", "classic", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "k"}),
					q("shared", "classic", nil)},
				[]*topology.Exchange{dlx}, []*topology.Binding{bind("dlx", "shared", "k")}),
			explicit: []string{"shared"},
		},
		{
			name: "without an explicit dead-letter routing key there is no pair (the loader would add one)",
			top: vhostWith(
				[]*topology.Queue{q("work", "classic", topology.Args{"x-dead-letter-exchange": "dlx"}), q("work.dlq", "classic", nil)},
				[]*topology.Exchange{{Name: "dlx", Type: "fanout", Durable: true}}, []*topology.Binding{bind("dlx", "work.dlq", "")}),
			explicit: []string{"work.dlq"},
		},
		{
			name: "delay tiers",
			top: vhostWith(
				[]*topology.Queue{
					q("work", "classic", nil),
					q("work.retry.10s", "classic", topology.Args{"x-message-ttl": int64(10000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}),
					q("work.retry.1m", "classic", topology.Args{"x-message-ttl": int64(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}),
					q("work.retry.1500ms", "classic", topology.Args{"x-message-ttl": int64(1500), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}),
				}, nil, nil),
			want:    []string{"retry: {delays: [1500ms, 10s, 1m]}"},
			wantNot: []string{"work.retry"},
		},
		{
			name: "a tier whose name is not the generated one stays explicit",
			top: vhostWith(
				[]*topology.Queue{
					q("work", "classic", nil),
					q("work.retry", "classic", topology.Args{"x-message-ttl": int64(15000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}),
					q("work.retry.60s", "classic", topology.Args{"x-message-ttl": int64(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work"}),
				}, nil, nil),
			explicit: []string{"work.retry", "work.retry.60s"},
			wantNot:  []string{"delays"},
		},
		{
			name: "a tier with another argument stays explicit",
			top: vhostWith(
				[]*topology.Queue{
					q("work", "classic", nil),
					q("work.retry.10s", "classic", topology.Args{"x-message-ttl": int64(10000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "work", "x-max-length": int64(5)}),
				}, nil, nil),
			explicit: []string{"work.retry.10s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertRoundTrip(t, tt.top)
			var buf bytes.Buffer
			if err := WriteYAML(&buf, tt.top, Options{Sugar: true}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			for _, name := range tt.explicit {
				if !strings.Contains(out, "\n      "+name+":") {
					t.Errorf("queue %s is not listed:\n%s", name, out)
				}
			}
		})
	}
}

func TestTypedFields(t *testing.T) {
	t.Parallel()
	top := vhostWith([]*topology.Queue{
		q("limits", "classic", topology.Args{"x-max-length": int64(10000), "x-max-length-bytes": int64(1 << 30), "x-overflow": "reject-publish", "x-message-ttl": int64(3600000), "x-expires": int64(1500)}),
		q("prio", "classic", topology.Args{"x-max-priority": int64(10), "x-single-active-consumer": true}),
		q("qq", "quorum", topology.Args{"x-delivery-limit": int64(5), "x-max-priority": int64(10)}),
		q("odd", "classic", topology.Args{"x-max-length": "100", "x-message-ttl": int64(-1), "x-overflow": "explode", "x-queue-mode": "lazy"}),
		q("zero", "classic", topology.Args{"x-message-ttl": int64(0), "x-max-length-bytes": int64(1000)}),
	}, []*topology.Exchange{
		{Name: "ae", Type: "topic", Durable: true, Arguments: topology.Args{"alternate-exchange": "unrouted"}},
		{Name: "aenum", Type: "topic", Durable: true, Arguments: topology.Args{"alternate-exchange": int64(1)}},
	}, nil)
	assertRoundTrip(t, top)
	var buf bytes.Buffer
	if err := WriteYAML(&buf, top, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{
		"max_length: 10000\n", "max_length_bytes: 1GiB\n", "overflow: reject-publish\n", "message_ttl: 1h\n", "expires: 1500ms\n",
		"prio: {max_priority: 10, single_active_consumer: true}",
		"qq: {type: quorum, delivery_limit: 5, arguments: {x-max-priority: 10}}",
		"arguments: {x-max-length: \"100\", x-message-ttl: -1, x-overflow: explode, x-queue-mode: lazy}",
		"zero: {limits: {max_length_bytes: 1KB, message_ttl: 0}}",
		"ae: {type: topic, alternate_exchange: unrouted}",
		"aenum: {type: topic, arguments: {alternate-exchange: 1}}",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestNamesThatNeedQuoting(t *testing.T) {
	t.Parallel()
	names := []string{"yes", "no", "true", "null", "~", "123", "1.5", "0x10", "a: b", "#", "- x", "[x]", "{x}", "*", "&a", "!x", "%x", "@x", "`x`", " lead", "trail ", "multi\nline", "tab\there", "quote\"d", "it's", "$HOME", "${NOT_SET}", "$${x}", "a$", "$", "日本語", "café", "", "/", "amq.direct"}
	top := topology.New()
	v := top.Vhost("/")
	v.Description = "${DESC} $$ end$"
	v.Exchanges["src"] = &topology.Exchange{Name: "src", Type: "headers", Durable: true}
	for i, n := range names {
		if n == "" || n == "amq.direct" {
			continue
		}
		qn := n
		v.Queues[qn] = &topology.Queue{Name: qn, Type: "classic", Durable: true, Arguments: topology.Args{"x-note": n, n: int64(i)}}
		v.Bindings = append(v.Bindings, &topology.Binding{Source: "src", Destination: qn, DestinationType: "queue", RoutingKey: n, Arguments: topology.Args{"x-match": "all", n: n}})
		v.Bindings = append(v.Bindings, &topology.Binding{Source: "amq.direct", Destination: qn, DestinationType: "queue", RoutingKey: n})
	}
	v.Policies["p$"] = &topology.Policy{Name: "p$", Pattern: "^${x}$", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(1)}}
	top.Vhost("${VHOST}")
	top.Vhost("yes")
	assertRoundTrip(t, top)
}

func TestArgumentValues(t *testing.T) {
	t.Parallel()
	values := topology.Args{
		"big": 1e21, "small": 0.1, "neg": -2.5, "int": int64(-9007199254740993), "null": nil, "bool": false,
		"list": []any{int64(1), "two", 3.5, nil, []any{"nested"}}, "map": map[string]any{"k": "v", "n": map[string]any{"deep": true}},
		"empty-list": []any{}, "empty-map": map[string]any{}, "string-number": "60000", "date": "2024-01-01",
	}
	top := vhostWith([]*topology.Queue{q("q", "classic", values)},
		[]*topology.Exchange{{Name: "x", Type: "fanout", Durable: true, Arguments: topology.Args{"alternate-exchange": ""}}}, nil)
	assertRoundTrip(t, top)
}

func TestPolicies(t *testing.T) {
	t.Parallel()
	top := topology.New()
	v := top.Vhost("/")
	v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: `^events\.`, ApplyTo: "queues", Priority: 1, Definition: topology.Args{"max-length": int64(100000), "overflow": "reject-publish"}}
	v.Policies["all"] = &topology.Policy{Name: "all", Pattern: ".*", ApplyTo: "all", Priority: -5, Definition: topology.Args{"ha-mode": "exactly", "ha-params": int64(2), "federation-upstream-set": "all"}}
	v.OperatorPolicies["op"] = &topology.Policy{Name: "op", Pattern: "^t", ApplyTo: "quorum_queues", Definition: topology.Args{"delivery-limit": int64(3)}}
	assertRoundTrip(t, top)
}

// A broker can hold a policy named "" (RabbitMQ imports one from a
// definitions file); the export refuses it, saying how to rename it,
// instead of writing a file that does not load.
func TestUnnamedPolicy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		operator bool
		want     []string
	}{
		{false, []string{`vhost "v" holds a policy with an empty name`, "rabbitmqctl set_policy -p v NAME", `rabbitmqctl clear_policy -p v ""`}},
		{true, []string{`vhost "v" holds an operator policy with an empty name`, "rabbitmqctl set_operator_policy -p v NAME", `clear_operator_policy -p v ""`}},
	} {
		top := topology.New()
		v := top.Vhost("v")
		p := &topology.Policy{Name: "", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(1)}}
		if tt.operator {
			v.OperatorPolicies[""] = p
		} else {
			v.Policies[""] = p
		}
		var buf bytes.Buffer
		err := WriteYAML(&buf, top, Options{})
		if err == nil {
			t.Fatalf("operator=%t: exported:\n%s", tt.operator, buf.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("operator=%t: error %q does not say %q", tt.operator, err, w)
			}
		}
	}
}

func TestBindingsPlacement(t *testing.T) {
	t.Parallel()
	top := vhostWith(
		[]*topology.Queue{q("q", "classic", nil)},
		[]*topology.Exchange{{Name: "x", Type: "topic", Durable: true}, {Name: "h", Type: "headers", Durable: true}, {Name: "audit", Type: "fanout", Durable: true}},
		[]*topology.Binding{
			bind("x", "q", "b"), bind("x", "q", "a"),
			{Source: "h", Destination: "q", DestinationType: "queue", Arguments: topology.Args{"x-match": "any", "k": "v"}},
			{Source: "h", Destination: "q", DestinationType: "queue", Arguments: topology.Args{"x-match": "all", "k": "v"}},
			{Source: "x", Destination: "audit", DestinationType: "exchange", RoutingKey: "#"},
			bind("x", "undeclared", "k"),
		})
	assertRoundTrip(t, top)
	var buf bytes.Buffer
	if err := WriteYAML(&buf, top, Options{}); err != nil {
		t.Fatal(err)
	}
	want := `      q:
        bindings:
          - {exchange: h, routing_key: "", arguments: {k: v, x-match: all}}
          - {exchange: h, routing_key: "", arguments: {k: v, x-match: any}}
          - {exchange: x, routing_keys: [a, b]}
    bindings:
      - {source: x, destination: audit, destination_type: exchange, routing_key: '#'}
      - {source: x, destination: undeclared, destination_type: queue, routing_key: k}
`
	if !strings.Contains(buf.String(), want) {
		t.Errorf("output lacks\n%s\ngot:\n%s", want, buf.String())
	}
}

func TestHeader(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteYAML(&buf, topology.New(), Options{Source: "defs.json"}); err != nil {
		t.Fatal(err)
	}
	if want := "# generated by mqctl export from defs.json\nversion: 1\nvhosts: {}\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	buf.Reset()
	if err := WriteYAML(&buf, topology.New(), Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "#") {
		t.Errorf("no Source, yet a header: %q", buf.String())
	}
}

func TestTopicMatch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern, key string
		want         bool
	}{
		{"a.b", "a.b", true}, {"a.*", "a.b", true}, {"a.*", "a", false}, {"a.*", "a.b.c", false},
		{"#", "", true}, {"#", "a.b", true}, {"a.#", "a", true}, {"a.#.c", "a.b.b.c", true},
		{"*", "", false}, {"#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.x", strings.Repeat("a.", 40) + "b", false},
	} {
		if got := topicMatch(tt.pattern, tt.key); got != tt.want {
			t.Errorf("topicMatch(%q, %q) = %t, want %t", tt.pattern, tt.key, got, tt.want)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FuzzRoundTrip: whatever definitions file is read without error exports,
// with and without sugar, to a file that loads back into the same
// topology; but for one with a shovel or federation URI RabbitMQ cannot
// parse, or a policy pattern or permission regexp it cannot compile (no
// broker holds one: it refuses the write), whose export the loader
// refuses, naming it (found by make fuzz: an upstream's uri "", an
// operator policy's pattern "^tmp\\").
func FuzzRoundTrip(f *testing.F) {
	for _, p := range []string{"testdata/sugar.json", "testdata/typed.json", "testdata/single-vhost.json"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"queues":[{"name":"a$","vhost":"${x}","arguments":{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"b"}},{"name":"b","vhost":"${x}"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		top, _, err := definitions.Read("fuzz.json", data)
		if err != nil {
			return
		}
		for _, sugar := range []bool{false, true} {
			var buf bytes.Buffer
			if err := WriteYAML(&buf, top, Options{Sugar: sugar}); err != nil {
				t.Fatal(err)
			}
			back, err := loader.LoadBytes("fuzz.yaml", buf.Bytes(), loader.Options{LookupEnv: exportEnv(top)})
			if err != nil && brokerRefuses(top) && strings.Contains(err.Error(), "RabbitMQ refuses") {
				return
			}
			if err != nil {
				t.Fatalf("sugar=%t: the export does not load: %v\n%s", sugar, err, buf.String())
			}
			if diff := cmp.Diff(sorted(exported(top)), sorted(back), topologyOpts); diff != "" {
				t.Fatalf("sugar=%t: round trip differs (-read +loaded):\n%s\n%s", sugar, diff, buf.String())
			}
		}
	})
}

// brokerRefuses reports whether t holds what RabbitMQ refuses to write: a
// shovel or federation upstream URI it cannot parse (kind.URIProblem), a
// policy pattern or permission regexp it cannot compile (pattern.Refused).
func brokerRefuses(t *topology.Topology) bool {
	refused := func(v any) bool {
		s, ok := v.(string)
		_, _, bad := pattern.Refused(s)
		return ok && bad
	}
	regexps := func(items topology.Items) bool {
		for _, k := range []kind.Kind{kind.Permission, kind.TopicPermission} {
			for _, it := range items[k] {
				for _, v := range it.Settings {
					if m, ok := v.(map[string]any); ok {
						for _, r := range m {
							if refused(r) {
								return true
							}
						}
					} else if refused(v) {
						return true
					}
				}
			}
		}
		return false
	}
	if regexps(t.Items) {
		return true
	}
	for _, v := range t.Vhosts {
		if regexps(v.Items) {
			return true
		}
		for _, k := range kind.PolicyKinds() {
			for _, p := range v.PoliciesOf(k) {
				if refused(p.Pattern) {
					return true
				}
			}
		}
	}
	return unparsableURI(t)
}

// unparsableURI reports whether a shovel or federation upstream of t has a
// URI RabbitMQ cannot parse (kind.URIProblem).
func unparsableURI(t *topology.Topology) bool {
	for _, v := range t.Vhosts {
		for _, k := range []kind.Kind{kind.Shovel, kind.FederationUpstream} {
			for _, it := range v.Items[k] {
				for _, key := range []string{"src-uri", "dest-uri", "uri"} {
					for _, uri := range kind.URIs(it.Settings[key]) {
						if msg, _ := kind.URIProblem(uri); msg != "" {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// TestPasswordHashes: with PasswordHashes, a user the source holds only
// by its hash is written as password_hash: ${NAME_PASSWORD_HASH} (with a
// hashing algorithm other than the default), never the hash; loaded back
// with each variable holding the source's hash, every user compares equal
// to the source's (plan shows no change), where password: ${VAR} needs
// each user's plaintext. A user without a password keeps none.
func TestPasswordHashes(t *testing.T) {
	const h256, h512 = "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR", "ZXhwb3J0LXRlc3QtYXBwLWhhc2gtbmV2ZXItc2hvd24tMTIz"
	top := topology.New()
	top.Items.Put(&topology.Item{Kind: kind.User, Name: "alice", Settings: topology.Args{kind.UserPasswordHash: h512, kind.UserHashingAlgorithm: "rabbit_password_hashing_sha512", kind.UserTags: []any{}}})
	top.Items.Put(&topology.Item{Kind: kind.User, Name: "bob", Settings: topology.Args{kind.UserPasswordHash: h256, kind.UserHashingAlgorithm: "rabbit_password_hashing_sha256", kind.UserTags: []any{"management"}}})
	top.Items.Put(&topology.Item{Kind: kind.User, Name: "carol", Settings: topology.Args{kind.UserPasswordHash: "", kind.UserTags: []any{}}})
	const hmd5 = "CQgHBlmjNoLnNJ1LskeAuTyp5G0="
	top.Items.Put(&topology.Item{Kind: kind.User, Name: "dave", Settings: topology.Args{kind.UserPasswordHash: hmd5, kind.UserHashingAlgorithm: "rabbit_password_hashing_md5", kind.UserTags: []any{}}})
	opts := Options{PasswordHashes: true}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, top, opts); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"alice:\n    password_hash: \"${ALICE_PASSWORD_HASH}\"\n    hashing_algorithm: rabbit_password_hashing_sha512\n",
		"bob:\n    password_hash: \"${BOB_PASSWORD_HASH}\"\n    tags: [management]\n",
		"carol:\n    tags: []\n",
		"dave:\n    password_hash: \"${DAVE_PASSWORD_HASH}\"\n    hashing_algorithm: rabbit_password_hashing_md5\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, h256) || strings.Contains(out, h512) || strings.Contains(out, "password:") {
		t.Errorf("export writes a hash or a password placeholder:\n%s", out)
	}
	var names []string
	for _, v := range VariablesFor(top, opts) {
		names = append(names, v.Name)
	}
	if diff := cmp.Diff([]string{"ALICE_PASSWORD_HASH", "BOB_PASSWORD_HASH", "DAVE_PASSWORD_HASH"}, names); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
	env := map[string]string{"ALICE_PASSWORD_HASH": h512, "BOB_PASSWORD_HASH": h256, "DAVE_PASSWORD_HASH": hmd5}
	back, err := loader.LoadBytes("exported.yaml", buf.Bytes(), loader.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatalf("the export does not load: %v\n%s", err, out)
	}
	spec, _ := kind.Of(kind.User)
	for _, name := range []string{"alice", "bob", "carol", "dave"} {
		have, want := top.Items.Get(kind.User, name).Settings, back.Items.Get(kind.User, name).Settings
		if h, w := spec.Item.Compare(have, want); !cmp.Equal(h, w) {
			t.Errorf("user %s: the export plans a change against its source: %v → %v", name, h, w)
		}
	}
}

// TestCredentialsInOtherKeys: a definitions file whose shovel or upstream
// holds a URI with credentials under a key that is not the kind's URI (a
// key the broker would refuse, a URI where a number goes) is exported
// with a ${VAR} there too, never the password; the variables name it.
func TestCredentialsInOtherKeys(t *testing.T) {
	t.Parallel()
	const secret = "Other-Key-Pw7"
	data := []byte(`{"vhosts":[{"name":"v"}],"parameters":[
 {"vhost":"v","component":"federation-upstream","name":"up","value":{"uri":"amqp:///v","expires":"amqp://u:` + secret + `@h"}},
 {"vhost":"v","component":"shovel","name":"s","value":{"src-uri":"amqp:///v","src-queue":"q","dest-uri":"amqp:///v","dest-queue":"q","src_uris":["amqp:///v","amqps://h?password=` + secret + `"]}}]}`)
	top, _, err := definitions.Read("defs.json", data)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, top, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`expires: "${V_FEDERATION_UPSTREAM_UP_EXPIRES}"`, `src_uris: ['amqp:///v', "${V_SHOVEL_S_SRC_URIS_2}"]`, `uri: 'amqp:///v'`} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %s:\n%s", want, out)
		}
	}
	var names []string
	for _, v := range Variables(top) {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, " "); got != "V_SHOVEL_S_SRC_URIS_2 V_FEDERATION_UPSTREAM_UP_EXPIRES" {
		t.Errorf("variables %s", got)
	}
	if strings.Contains(out, secret) {
		t.Errorf("the export shows the password:\n%s", out)
	}
}
