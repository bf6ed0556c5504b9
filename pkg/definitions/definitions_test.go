package definitions

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

var ignoreMeta = cmpopts.IgnoreFields(topology.Queue{}, topology.QueueFileFields...)

func mustRead(t *testing.T, src string, opts ReadOptions) (*topology.Topology, *Report) {
	t.Helper()
	top, rep, err := ReadWithOptions("defs.json", []byte(src), opts)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return top, rep
}

func TestQueues(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want map[string]*topology.Queue // in vhost "/"
	}{
		{
			name: "defaults: classic, durable flags as given",
			src:  `{"queues":[{"name":"q","vhost":"/","durable":false,"auto_delete":true,"arguments":{}}]}`,
			want: map[string]*topology.Queue{"q": {Name: "q", Type: "classic", Durable: false, AutoDelete: true}},
		},
		{
			name: "x-queue-type is lifted into Type and removed from the arguments",
			src:  `{"queues":[{"name":"q","vhost":"/","durable":true,"auto_delete":false,"arguments":{"x-queue-type":"quorum","x-delivery-limit":5}}]}`,
			want: map[string]*topology.Queue{"q": {Name: "q", Type: "quorum", Durable: true, Arguments: topology.Args{"x-delivery-limit": int64(5)}}},
		},
		{
			name: "type field of 4.x exports",
			src:  `{"queues":[{"name":"s","vhost":"/","type":"stream","durable":true,"auto_delete":false,"arguments":{}}]}`,
			want: map[string]*topology.Queue{"s": {Name: "s", Type: "stream", Durable: true}},
		},
		{
			name: "type field and x-queue-type agreeing",
			src:  `{"queues":[{"name":"q","vhost":"/","type":"quorum","durable":true,"arguments":{"x-queue-type":"quorum"}}]}`,
			want: map[string]*topology.Queue{"q": {Name: "q", Type: "quorum", Durable: true}},
		},
		{
			name: "vhost default queue type from metadata applies when the queue says nothing",
			src: `{"vhosts":[{"name":"/","metadata":{"default_queue_type":"quorum"}}],
			       "queues":[{"name":"a","vhost":"/","durable":true,"arguments":{}},
			                 {"name":"b","vhost":"/","durable":true,"arguments":{"x-queue-type":"classic"}}]}`,
			want: map[string]*topology.Queue{
				"a": {Name: "a", Type: "quorum", Durable: true},
				"b": {Name: "b", Type: "classic", Durable: true},
			},
		},
		{
			name: "vhost-level default_queue_type (4.x) wins over metadata",
			src: `{"vhosts":[{"name":"/","default_queue_type":"stream","metadata":{"default_queue_type":"quorum"}}],
			       "queues":[{"name":"a","vhost":"/","durable":true}]}`,
			want: map[string]*topology.Queue{"a": {Name: "a", Type: "stream", Durable: true}},
		},
		{
			name: "default_queue_type undefined (3.x) means classic",
			src: `{"vhosts":[{"name":"/","metadata":{"default_queue_type":"undefined"}}],
			       "queues":[{"name":"a","vhost":"/","durable":true}]}`,
			want: map[string]*topology.Queue{"a": {Name: "a", Type: "classic", Durable: true}},
		},
		{
			name: "missing durable and auto_delete take RabbitMQ's defaults; arguments [] and null are empty",
			src: `{"queues":[{"name":"a","vhost":"/","arguments":[]},
			                 {"name":"b","vhost":"/","arguments":null}]}`,
			want: map[string]*topology.Queue{
				"a": {Name: "a", Type: "classic", Durable: true},
				"b": {Name: "b", Type: "classic", Durable: true},
			},
		},
		{
			name: "numbers keep their integer value",
			src:  `{"queues":[{"name":"q","vhost":"/","durable":true,"arguments":{"x-message-ttl":60000,"x-max-length-bytes":9007199254740993,"x-ratio":1.5,"x-list":[1,"a",true]}}]}`,
			want: map[string]*topology.Queue{"q": {Name: "q", Type: "classic", Durable: true, Arguments: topology.Args{
				"x-message-ttl": int64(60000), "x-max-length-bytes": int64(9007199254740993), "x-ratio": 1.5, "x-list": []any{int64(1), "a", true},
			}}},
		},
		{
			name: "queues named amq.* are skipped like RabbitMQ does",
			src:  `{"queues":[{"name":"amq.gen-123","vhost":"/","durable":true},{"name":"q","vhost":"/","durable":true}]}`,
			want: map[string]*topology.Queue{"q": {Name: "q", Type: "classic", Durable: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top, _ := mustRead(t, tt.src, ReadOptions{})
			v := top.Vhosts["/"]
			if v == nil {
				t.Fatalf("vhost / missing; have %v", top.VhostNames())
			}
			if diff := cmp.Diff(tt.want, v.Queues, ignoreMeta); diff != "" {
				t.Errorf("queues (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumbersCompareEqualToYAMLIntegers(t *testing.T) {
	top, _ := mustRead(t, `{"queues":[{"name":"q","vhost":"/","durable":true,"arguments":{"x-message-ttl":60000}}]}`, ReadOptions{})
	got := top.Vhosts["/"].Queues["q"].Arguments
	if !got.Equal(topology.Args{"x-message-ttl": 60000}) {
		t.Errorf("x-message-ttl 60000 read as %#v, want int64 60000", got["x-message-ttl"])
	}
	if v, ok := got["x-message-ttl"].(int64); !ok || v != 60000 {
		t.Errorf("x-message-ttl is %T %v, want int64 60000", got["x-message-ttl"], got["x-message-ttl"])
	}
}

func TestExchanges(t *testing.T) {
	src := `{"exchanges":[
	  {"name":"orders","vhost":"/","type":"topic","durable":true,"auto_delete":false,"internal":false,"arguments":{"alternate-exchange":"unrouted"}},
	  {"name":"tmp","vhost":"/","type":"fanout","durable":false,"auto_delete":true,"internal":true,"arguments":[]},
	  {"name":"delayed","vhost":"/","type":"x-delayed-message","durable":true,"arguments":{"x-delayed-type":"direct"}},
	  {"name":"old","vhost":"/","type":"headers","durable":true,"auto_delete":false},
	  {"name":"amq.direct","vhost":"/","type":"direct","durable":true},
	  {"name":"","vhost":"/","type":"direct","durable":true},
	  {"name":"amq.custom","vhost":"/","type":"direct","durable":true}
	]}`
	top, rep := mustRead(t, src, ReadOptions{})
	want := map[string]*topology.Exchange{
		"orders":  {Name: "orders", Type: "topic", Durable: true, Arguments: topology.Args{"alternate-exchange": "unrouted"}},
		"tmp":     {Name: "tmp", Type: "fanout", AutoDelete: true, Internal: true},
		"delayed": {Name: "delayed", Type: "x-delayed-message", Durable: true, Arguments: topology.Args{"x-delayed-type": "direct"}},
		"old":     {Name: "old", Type: "headers", Durable: true},
	}
	if diff := cmp.Diff(want, top.Vhosts["/"].Exchanges, cmpopts.IgnoreFields(topology.Exchange{}, "Meta")); diff != "" {
		t.Errorf("exchanges (-want +got):\n%s", diff)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], `"amq.custom"`) {
		t.Errorf("want one warning about amq.custom (built-ins are dropped silently), got %q", rep.Warnings)
	}
}

func TestExchangeTypes(t *testing.T) {
	for _, typ := range []string{"direct", "fanout", "topic", "headers", "x-delayed-message", "x-consistent-hash", "x-modulus-hash", "x-random", "x-local-random", "x-jms-topic", "x-recent-history"} {
		src := `{"exchanges":[{"name":"x","vhost":"/","type":"` + typ + `","durable":true}]}`
		if _, _, err := Read("defs.json", []byte(src)); err != nil {
			t.Errorf("type %s rejected: %v", typ, err)
		}
	}
	for _, typ := range []string{"definitly not direct", "Direct", "x-", "match", ""} {
		src := `{"exchanges":[{"name":"x","vhost":"/","type":"` + typ + `","durable":true}]}`
		_, _, err := Read("defs.json", []byte(src))
		if err == nil || !strings.Contains(err.Error(), `exchange "x"`) || !strings.Contains(err.Error(), "type") {
			t.Errorf("type %q: want an error naming exchange \"x\" and its type, got %v", typ, err)
		}
	}
}

func TestBindings(t *testing.T) {
	src := `{"bindings":[
	  {"source":"orders","vhost":"/","destination":"q","destination_type":"queue","routing_key":"order.*","arguments":{}},
	  {"source":"orders","vhost":"/","destination":"audit","destination_type":"exchange","routing_key":"#","arguments":[]},
	  {"source":"hdr","vhost":"/","destination":"q","destination_type":"queue","routing_key":"","arguments":{"x-match":"all","n":1}},
	  {"source":"fan","vhost":"/","destination":"q","destination_type":"queue"},
	  {"source":"orders","vhost":"/","destination":"q","destination_type":"queue","routing_key":"order.*","arguments":{}},
	  {"source":"","vhost":"/","destination":"q","destination_type":"queue","routing_key":"q","arguments":{}}
	]}`
	top, rep := mustRead(t, src, ReadOptions{})
	want := []*topology.Binding{
		{Source: "fan", Destination: "q", DestinationType: "queue"},
		{Source: "hdr", Destination: "q", DestinationType: "queue", Arguments: topology.Args{"x-match": "all", "n": int64(1)}},
		{Source: "orders", Destination: "audit", DestinationType: "exchange", RoutingKey: "#"},
		{Source: "orders", Destination: "q", DestinationType: "queue", RoutingKey: "order.*"},
	}
	if diff := cmp.Diff(want, top.Vhosts["/"].Bindings, cmpopts.IgnoreFields(topology.Binding{}, "Meta")); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	joined := strings.Join(rep.Warnings, "\n")
	for _, w := range []string{"listed twice", "default exchange", "does not declare"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestPolicies(t *testing.T) {
	src := `{"policies":[
	  {"vhost":"/","name":"cap","pattern":"^events\\.","apply-to":"queues","definition":{"max-length":100000},"priority":1},
	  {"vhost":"/","name":"ha","pattern":".*","definition":{"ha-mode":"all"}}
	],
	"operator_policies":[{"vhost":"/","name":"op","pattern":".*","apply-to":"queues","definition":{"expires":1800000},"priority":2}],
	"parameters":[{"vhost":"/","component":"operator_policy","name":"op2","value":{"pattern":"^t\\.","definition":{"message-ttl":60000},"priority":3,"apply-to":"queues"}}]}`
	top, rep := mustRead(t, src, ReadOptions{})
	v := top.Vhosts["/"]
	ignore := cmpopts.IgnoreFields(topology.Policy{}, "Meta")
	wantP := map[string]*topology.Policy{
		"cap": {Name: "cap", Pattern: `^events\.`, ApplyTo: "queues", Priority: 1, Definition: topology.Args{"max-length": int64(100000)}},
		"ha":  {Name: "ha", Pattern: ".*", ApplyTo: "all", Definition: topology.Args{"ha-mode": "all"}},
	}
	if diff := cmp.Diff(wantP, v.Policies, ignore); diff != "" {
		t.Errorf("policies (-want +got):\n%s", diff)
	}
	wantO := map[string]*topology.Policy{
		"op":  {Name: "op", Pattern: ".*", ApplyTo: "queues", Priority: 2, Definition: topology.Args{"expires": int64(1800000)}},
		"op2": {Name: "op2", Pattern: `^t\.`, ApplyTo: "queues", Priority: 3, Definition: topology.Args{"message-ttl": int64(60000)}},
	}
	if diff := cmp.Diff(wantO, v.OperatorPolicies, ignore); diff != "" {
		t.Errorf("operator policies (-want +got):\n%s", diff)
	}
	if n := rep.Skipped[SkipParameters]; n != 0 {
		t.Errorf("operator_policy parameters are read, not skipped; report counts %d skipped parameters", n)
	}
}

func TestVhosts(t *testing.T) {
	src := `{"vhosts":[
	  {"name":"/","metadata":{"description":"Default virtual host","tags":[]}},
	  {"name":"old","description":"pre-3.8 style","tracing":false,"tags":"x, y"},
	  {"name":"meta","metadata":{"tags":["multi_dc_replication","ab"]}},
	  {"name":"new","description":"4.x","metadata":{"description":"4.x","tags":["a","b"],"default_queue_type":"quorum"},"tags":["a","b"],"default_queue_type":"quorum","limits":{"max-queues":10}}
	],
	"queues":[{"name":"q","vhost":"implicit","durable":true}]}`
	top, rep := mustRead(t, src, ReadOptions{})
	type meta struct {
		Description, DefaultQueueType string
		Tags                          []string
	}
	got := map[string]meta{}
	for n, v := range top.Vhosts {
		got[n] = meta{v.Description, v.DefaultQueueType, v.Tags}
	}
	// Tags: a list (4.x, top level or metadata, as case16.json of the
	// corpus holds them) or a comma-separated string (3.x).
	want := map[string]meta{
		"/":        {"Default virtual host", "", nil},
		"old":      {"pre-3.8 style", "", []string{"x", "y"}},
		"meta":     {"", "", []string{"multi_dc_replication", "ab"}},
		"new":      {"4.x", "quorum", []string{"a", "b"}},
		"implicit": {"", "", nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vhosts [description, default_queue_type, tags] (-want +got):\n%s", diff)
	}
	if l := top.Vhosts["new"].Items.Get(kind.VhostLimits, "new"); l == nil || !cmp.Equal(l.Settings, topology.Args{"max-queues": int64(10)}) {
		t.Errorf("limits of vhost new = %+v, want max-queues 10", l)
	}
	if len(rep.Skipped) != 0 {
		t.Errorf("skipped %v, want nothing: tags and limits are read", rep.Skipped)
	}
}

func TestMissingVhostsList(t *testing.T) {
	// Some exports leave "vhosts" empty while their objects use "/".
	top, _ := mustRead(t, `{"vhosts":[],"exchanges":[{"name":"x","vhost":"/","type":"fanout","durable":true}]}`, ReadOptions{})
	if _, ok := top.Vhosts["/"]; !ok || len(top.Vhosts) != 1 {
		t.Fatalf("vhosts = %v, want [/] created for the exchange", top.VhostNames())
	}
}

func TestSingleVhostForm(t *testing.T) {
	src := `{"rabbit_version":"4.0.5","rabbitmq_definition_format":"single_virtual_host","original_vhost_name":"vh3",
	  "metadata":{"description":"","tags":[],"default_queue_type":"quorum"},"description":"three","default_queue_type":"quorum",
	  "limits":{"max-connections":9999},
	  "parameters":[{"value":{"max-connections":9999},"component":"vhost-limits","name":"limits"}],
	  "policies":[{"name":"p","pattern":"^cq","apply-to":"classic_queues","definition":{"max-length":9999},"priority":0}],
	  "queues":[{"name":"a","durable":true,"auto_delete":false,"arguments":{}},{"name":"c","durable":true,"arguments":{"x-queue-type":"classic"}}],
	  "exchanges":[{"name":"x","type":"direct","durable":true,"auto_delete":false,"internal":false,"arguments":{}}],
	  "bindings":[{"source":"x","destination":"a","destination_type":"queue","routing_key":"k","arguments":{}}]}`

	t.Run("objects go to the vhost the file was exported from", func(t *testing.T) {
		top, rep := mustRead(t, src, ReadOptions{})
		if got := top.VhostNames(); len(got) != 1 || got[0] != "vh3" {
			t.Fatalf("vhosts = %v, want [vh3]", got)
		}
		v := top.Vhosts["vh3"]
		if v.Description != "three" || v.DefaultQueueType != "quorum" {
			t.Errorf("vhost metadata = %q/%q, want three/quorum", v.Description, v.DefaultQueueType)
		}
		if q := v.Queues["a"]; q == nil || q.Type != "quorum" {
			t.Errorf("queue a = %+v, want quorum (the vhost's default)", q)
		}
		if q := v.Queues["c"]; q == nil || q.Type != "classic" {
			t.Errorf("queue c = %+v, want classic", q)
		}
		if len(v.Bindings) != 1 || len(v.Exchanges) != 1 || len(v.Policies) != 1 {
			t.Errorf("want 1 binding, exchange and policy, got %d %d %d", len(v.Bindings), len(v.Exchanges), len(v.Policies))
		}
		if l := v.Items.Get(kind.VhostLimits, "vh3"); l == nil || !cmp.Equal(l.Settings, topology.Args{"max-connections": int64(9999)}) {
			t.Errorf("limits of vh3 = %+v, want the one max-connections 9999 both places give", l)
		}
		if len(rep.Skipped) != 0 || len(rep.Warnings) != 0 {
			t.Errorf("skipped = %v, warnings = %q; want the limits read, not skipped", rep.Skipped, rep.Warnings)
		}
	})
	t.Run("the caller can name another vhost", func(t *testing.T) {
		top, _ := mustRead(t, src, ReadOptions{DefaultVhost: "staging"})
		if got := top.VhostNames(); len(got) != 1 || got[0] != "staging" {
			t.Fatalf("vhosts = %v, want [staging]", got)
		}
	})
	t.Run("no original_vhost_name means /", func(t *testing.T) {
		s := strings.Replace(src, `"original_vhost_name":"vh3",`, "", 1)
		top, _ := mustRead(t, s, ReadOptions{})
		if got := top.VhostNames(); len(got) != 1 || got[0] != "/" {
			t.Fatalf("vhosts = %v, want [/]", got)
		}
	})
}

func TestObjectsWithoutVhost(t *testing.T) {
	src := `{"rabbit_version":"3.12.8","queues":[{"name":"qq.1","durable":true,"arguments":{"x-queue-type":"quorum"}},{"name":"cq.1","durable":true}]}`
	_, _, err := Read("defs.json", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `queue "qq.1" has no "vhost" field (and 1 more objects)`) || !strings.Contains(err.Error(), "--vhost") {
		t.Errorf("want an error naming qq.1, counting the other object and suggesting --vhost, got %v", err)
	}
	top, _ := mustRead(t, src, ReadOptions{DefaultVhost: "/"})
	if q := top.Vhosts["/"].Queues["qq.1"]; q == nil || q.Type != "quorum" {
		t.Errorf("with DefaultVhost /, queue qq.1 = %+v", q)
	}
}

func TestDuplicates(t *testing.T) {
	src := `{"queues":[
	  {"name":"q","vhost":"/","durable":true,"auto_delete":false,"arguments":{}},
	  {"name":"q","vhost":"/","durable":false,"auto_delete":true,"arguments":{}},
	  {"name":"q","vhost":"other","durable":false,"arguments":{}}
	]}`
	top, rep := mustRead(t, src, ReadOptions{})
	if q := top.Vhosts["/"].Queues["q"]; !q.Durable || q.AutoDelete {
		t.Errorf("queue q in / = %+v, want the first declaration (durable)", q)
	}
	if q := top.Vhosts["other"].Queues["q"]; q == nil || q.Durable {
		t.Errorf("queue q in other = %+v, want its own declaration", q)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], `queue "q" in vhost "/" is listed twice, at defs.json:2:4 and defs.json:3:4, and the entries differ (auto_delete false, then true; durable true, then false)`) {
		t.Errorf("warnings = %q", rep.Warnings)
	}
}

func TestReportLines(t *testing.T) {
	src := `{"users":[{"name":"a","password_hash":"x","tags":"","limits":{"max-connections":-1}},{"name":"b","password_hash":"y","tags":""}],
	  "permissions":[{"user":"a","vhost":"/","configure":".*","write":".*","read":".*"}],
	  "topic_permissions":[{"user":"a","vhost":"/","exchange":"amq.topic","write":".*","read":".*"}],
	  "parameters":[{"vhost":"/","component":"shovel","name":"s1","value":{"src-uri":"amqp://","src-queue":"a","dest-uri":"amqp://","dest-queue":"b"}},{"vhost":"/","component":"shovel","name":"s2","value":{"src-uri":"amqp://","src-queue":"a","dest-uri":"amqp://","dest-queue":"c"}},{"vhost":"/","component":"federation-upstream","name":"up","value":{"uri":"amqp://dc2"}},{"vhost":"/","component":"mqtt-port-to-vhost","name":"m","value":{}}],
	  "global_parameters":[{"name":"cluster_name","value":"x"},{"name":"mqctl-managed","value":{}}],
	  "rabbit_version":"3.12.0","rabbitmq_version":"3.12.0","product_name":"RabbitMQ","product_version":"3.12.0",
	  "mystery":1}`
	_, rep := mustRead(t, src, ReadOptions{})
	// Users, permissions, shovels and upstreams are read now; what is
	// left is the parameter of a component mqctl does not know and the
	// global parameters other than mqctl's own record.
	want := []string{
		"skipped 1 runtime parameter: 1 mqtt-port-to-vhost (mqctl manages the runtime parameters of shovels, federation upstreams and upstream sets, vhost limits and operator policies, not these components)",
		"skipped 1 global parameter (mqctl does not manage global parameters)",
		`warning: ignored unknown top-level key "mystery"`,
	}
	if diff := cmp.Diff(want, rep.Lines()); diff != "" {
		t.Errorf("Lines (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // substrings of the error
	}{
		{"syntax error with line and column", "{\n  \"queues\": [\n    {\"name\": \"q\",, }\n  ]\n}", []string{"defs.json:3:18:", "not valid JSON", "invalid character ','"}},
		{"unterminated", `{"queues": [`, []string{"defs.json:1:13:", "unexpected end of file"}},
		{"template", "{\n \"users\": [{\"password\": \"${pw[\"x\"]}\"}]\n}", []string{"defs.json:2:", "template", "${…}"}},
		{"empty", "  \n", []string{"defs.json: the file is empty"}},
		{"not an object", `[{"name":"q"}]`, []string{"defs.json:1:1:", "found an array"}},
		{"trailing data", `{} {}`, []string{"defs.json:1:", "after the end of the JSON object"}},
		{"queues not an array", `{"queues":{"name":"q"}}`, []string{`"queues" must be an array`}},
		{"element not an object", `{"queues":["q"]}`, []string{"defs.json:1:12:", "queues[0] must be a JSON object"}},
		{"policy without name", `{"policies":[{"vhost":"/","pattern":".*","definition":{"max-length":1}}]}`, []string{"defs.json:1:14:", `policy in vhost "/"`, "no name"}},
		{"policy with an empty name", `{"policies":[{"vhost":"/","name":"","pattern":".*","definition":{"max-length":1}}]}`, []string{"defs.json:1:14:", `policy "" in vhost "/"`, "name is empty", "give the policy a name"}},
		{"operator policy with an empty name", `{"operator_policies":[{"vhost":"/","name":"","pattern":".*","definition":{"max-length":1}}]}`, []string{`operator policy "" in vhost "/"`, "name is empty"}},
		{"policy without pattern", `{"policies":[{"vhost":"/","name":"p","definition":{"max-length":1}}]}`, []string{`policy "p" in vhost "/"`, "pattern"}},
		{"policy bad apply-to", `{"policies":[{"vhost":"/","name":"p","pattern":".*","apply-to":"everything","definition":{"max-length":1}}]}`, []string{`policy "p"`, `apply-to "everything"`}},
		{"policy without pattern: what it is", `{"policies":[{"vhost":"/","name":"p","definition":{"max-length":1}}]}`, []string{`no "pattern"; set it to a regular expression matched against object names, such as "^orders\\."`}},
		{"policy priority a fraction", `{"policies":[{"vhost":"/","name":"p","pattern":".*","priority":1.5,"definition":{"max-length":1}}]}`, []string{`policy "p"`, "priority must be an integer, found the number 1.5"}},
		{"policy pattern not a string", `{"policies":[{"vhost":"/","name":"p","pattern":7,"definition":{"max-length":1}}]}`, []string{`policy "p"`, `"pattern" must be a string, found a number`}},
		{"operator policy parameter apply-to", `{"parameters":[{"vhost":"/","component":"operator_policy","name":"op","value":{"pattern":"^q","apply-to":"queue","definition":{"max-length":1}}}]}`, []string{`operator policy "op"`, `apply-to "queue" is not valid; use one of queues, exchanges, all, classic_queues, quorum_queues, streams`}},
		{"exchange internal not a bool", `{"exchanges":[{"name":"x","vhost":"/","type":"topic","internal":"no"}]}`, []string{`exchange "x" in vhost "/"`, `"internal" must be true or false, found the string "no"`}},
		{"policy definition empty", `{"policies":[{"vhost":"/","name":"p","pattern":".*","definition":{}}]}`, []string{`policy "p"`, "definition is empty"}},
		{"policy definition missing", `{"policies":[{"vhost":"/","name":"p","pattern":".*"}]}`, []string{`policy "p"`, "definition"}},
		{"user limit not an integer", `{"users":[{"name":"u","limits":{"max-connections":"twomincepies"}}]}`, []string{`user "u"`, "max-connections must be an integer", `"twomincepies"`}},
		{"user limit fraction", `{"users":[{"name":"u","limits":{"max-channels":1.5}}]}`, []string{`user "u"`, "max-channels must be an integer"}},
		{"user limit unknown", `{"users":[{"name":"u","limits":{"max-queues":1}}]}`, []string{`user "u"`, `unknown user limit "max-queues"`}},
		{"bad destination_type", `{"bindings":[{"source":"x","vhost":"/","destination":"q","destination_type":"café_29","routing_key":"#"}]}`, []string{`binding from "x" to "q" in vhost "/"`, `destination_type "café_29"`}},
		{"binding to an empty destination", `{"bindings":[{"source":"x","vhost":"/","destination":"","destination_type":"queue","routing_key":"#"}]}`, []string{`binding from "x" to "" in vhost "/"`, "destination is empty", "name the queue to bind"}},
		{"binding without destination_type", `{"bindings":[{"source":"x","vhost":"/","destination":"q"}]}`, []string{`binding from "x" to "q"`, "destination_type"}},
		{"exchange without type", `{"exchanges":[{"name":"x","vhost":"/","durable":true}]}`, []string{`exchange "x" in vhost "/"`, "no exchange type"}},
		{"bad queue type", `{"queues":[{"name":"q","vhost":"/","arguments":{"x-queue-type":"lazy"}}]}`, []string{`queue "q" in vhost "/"`, `queue type "lazy"`}},
		{"conflicting queue types", `{"queues":[{"name":"q","vhost":"/","type":"classic","arguments":{"x-queue-type":"quorum"}}]}`, []string{`queue "q"`, "must agree"}},
		{"durable not a bool", `{"queues":[{"name":"q","vhost":"/","durable":"yes"}]}`, []string{`queue "q" in vhost "/"`, `"durable" must be true or false`}},
		{"arguments not an object", `{"queues":[{"name":"q","vhost":"/","arguments":["x"]}]}`, []string{`queue "q"`, `"arguments" must be a JSON object`}},
		{"queue without name", `{"queues":[{"vhost":"/"}]}`, []string{"queues[0]", "has no name"}},
		{"bad default queue type", `{"vhosts":[{"name":"v","default_queue_type":"fast"}]}`, []string{`vhost "v"`, `"fast"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Read("defs.json", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Errorf("error is %T, want ErrorList", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestNegativeUserLimitIsAccepted(t *testing.T) {
	// RabbitMQ validates user limits as integers; a negative one means "no limit".
	if _, _, err := Read("defs.json", []byte(`{"users":[{"name":"u","limits":{"max-connections":-1,"max-channels":0}}]}`)); err != nil {
		t.Errorf("negative user limit rejected: %v", err)
	}
}

func TestEveryProblemIsReported(t *testing.T) {
	src := `{"exchanges":[{"name":"a","vhost":"/","type":"bogus"},{"name":"b","vhost":"/","type":"also bogus"}]}`
	_, _, err := Read("defs.json", []byte(src))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
}

func TestByteOrderMark(t *testing.T) {
	top, _ := mustRead(t, "\xef\xbb\xbf{\"queues\":[{\"name\":\"q\",\"vhost\":\"/\",\"durable\":true}]}", ReadOptions{})
	if top.Vhosts["/"].Queues["q"] == nil {
		t.Error("queue q missing after a UTF-8 byte order mark")
	}
}

func TestPositions(t *testing.T) {
	data := []byte("ab\ncé\nx")
	ix := newLineIndex(data)
	for _, tt := range []struct{ off, line, col int }{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {6, 2, 3}, {7, 3, 1}, {100, 3, 2}, {4, 2, 2}, {1, 1, 2}, {6, 2, 3}} {
		// The same index answers in any order; and a fresh one agrees.
		if l, c := ix.position(tt.off); l != tt.line || c != tt.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", tt.off, l, c, tt.line, tt.col)
		}
		if l, c := newLineIndex(data).position(tt.off); l != tt.line || c != tt.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", tt.off, l, c, tt.line, tt.col)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"queues":[{"name":"q","vhost":"/","arguments":{"x-queue-type":"quorum"}}],"bindings":[{"source":"x","vhost":"/","destination":"q","destination_type":"queue"}]}`))
	f.Add([]byte(`{"rabbitmq_definition_format":"single_virtual_host","queues":[{"name":"q"}],"policies":[{"name":"p","pattern":".*","definition":{}}]}`))
	f.Add([]byte(`{"users":[{"limits":{"max-connections":"x"}}],"parameters":[{"component":"operator_policy","value":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		top, rep, err := ReadWithOptions("fuzz.json", data, ReadOptions{})
		if err == nil && (top == nil || rep == nil) {
			t.Fatal("nil topology or report without an error")
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}

// BenchmarkReadMinified reads a one-line export of 20,000 queues, as the
// management API writes it.
func BenchmarkReadMinified(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"queues":[`)
	for i := 0; i < 20000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"name":"q.é.` + strconv.Itoa(i) + `","vhost":"/","durable":true,"auto_delete":false,"arguments":{"x-queue-type":"quorum"}}`)
	}
	sb.WriteString(`]}`)
	data := []byte(sb.String())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Read("big.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// A parameter RabbitMQ refuses is refused here (its export would not load),
// and permissions in a file without users are not dropped silently.
func TestParametersAndPermissionsWithoutUsers(t *testing.T) {
	_, _, err := Read("defs.json", []byte(`{"parameters":[{"vhost":"/","component":"federation-upstream","name":"up","value":{"expires":1}}]}`))
	if err == nil || !strings.Contains(err.Error(), `federation upstream "up"`) || !strings.Contains(err.Error(), `has no "uri"`) {
		t.Errorf("an upstream without uri: %v, want a refusal naming it", err)
	}
	_, rep := mustRead(t, `{"vhosts":[{"name":"/"}],"permissions":[{"user":"guest","vhost":"/","configure":".*","write":".*","read":".*"}]}`, ReadOptions{})
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], `permission of user "guest" in vhost "/": the file has no users`) {
		t.Errorf("warnings = %q, want one about guest's permission left out", rep.Warnings)
	}
}

// RabbitMQ 4.3's export (from 4.2.9 and 4.3.3, streamed): a vhost is
// {name, limits (an object), metadata} only, with description, tags and
// default queue type under metadata (protected_from_deletion too); queues
// carry their type; exchanges have no "internal" key (internal ones are
// left out); user tags are a list. Read loses nothing of what it holds.
func TestExport43Shape(t *testing.T) {
	src := `{"rabbit_version":"4.3.6","rabbitmq_version":"4.3.6","product_name":"RabbitMQ","product_version":"4.3.6",
	  "users":[{"name":"svc","password_hash":"abc","hashing_algorithm":"rabbit_password_hashing_sha256","tags":["management"],"limits":{}}],
	  "vhosts":[{"name":"orders","limits":{"max-queues":100,"max-connections":10},
	    "metadata":{"description":"orders of 4.3","tags":[],"default_queue_type":"quorum","protected_from_deletion":false}}],
	  "permissions":[{"user":"svc","vhost":"orders","configure":"^$","write":".*","read":".*"}],
	  "queues":[{"name":"work","vhost":"orders","durable":true,"auto_delete":false,"type":"quorum","arguments":{"x-queue-type":"quorum","x-delivery-limit":5}}],
	  "exchanges":[{"name":"events","vhost":"orders","type":"topic","durable":true,"auto_delete":false,"arguments":{}}],
	  "bindings":[{"source":"events","vhost":"orders","destination":"work","destination_type":"queue","routing_key":"a.#","arguments":{}}]}`
	top, _ := mustRead(t, src, ReadOptions{})
	v := top.Vhosts["orders"]
	if v == nil || v.Description != "orders of 4.3" || v.DefaultQueueType != "quorum" {
		t.Fatalf("vhost orders = %+v, want the description and default queue type of its metadata", v)
	}
	if l := v.Items.Get(kind.VhostLimits, "orders"); l == nil || !cmp.Equal(l.Settings, topology.Args{"max-queues": int64(100), "max-connections": int64(10)}) {
		t.Errorf("limits of vhost orders = %+v, want max-queues 100 and max-connections 10", l)
	}
	if q := v.Queues["work"]; q == nil || q.Type != topology.QueueQuorum || !cmp.Equal(q.Arguments, topology.Args{"x-delivery-limit": int64(5)}) {
		t.Errorf("queue work = %+v", q)
	}
	if x := v.Exchanges["events"]; x == nil || x.Type != "topic" || x.Internal {
		t.Errorf("exchange events = %+v", x)
	}
	if len(v.Bindings) != 1 || v.Bindings[0].RoutingKey != "a.#" {
		t.Errorf("bindings = %v", v.Bindings)
	}
	if u := top.Items.Get(kind.User, "svc"); u == nil || !cmp.Equal(u.Settings["tags"], []any{"management"}) {
		t.Errorf("user svc = %+v", u)
	}
	if p := v.Items.Get(kind.Permission, "svc"); p == nil {
		t.Error("the permission of svc on orders was not read")
	}
}

// TestDanglingBindingsOfAStreamedExport: RabbitMQ 4.3.3+'s definitions
// export leaves internal exchanges and clients' exclusive queues out but
// keeps their bindings (rmqversion StreamsDefinitions; seen on 4.3.6).
// The warning on bindings whose ends the file does not declare said only
// that lint reports them (whose MQ401 advises correcting the name); for
// such an export it now says why they are missing and what to do: declare
// the internal exchange, or export from the broker itself, and leave a
// client's queue's bindings to the client. Older exports, and files that
// do not say which RabbitMQ wrote them, keep the plain warning.
func TestDanglingBindingsOfAStreamedExport(t *testing.T) {
	const why = `RabbitMQ %s's definitions export leaves out internal exchanges and exclusive queues (a client's own, gone with its connection) but keeps their bindings: declare such an exchange in the file (internal: true), or export from the broker itself (mqctl export without --from)`
	for _, tc := range []struct {
		version string // "" for a file that does not say
		explain bool
	}{
		{"4.3.6", true},
		{"4.3.3", true},
		{"4.3.2", false},
		{"4.0.5", false},
		{"3.10.8", false},
		{"", false},
	} {
		head := ""
		if tc.version != "" {
			head = `"rabbitmq_version":"` + tc.version + `","rabbit_version":"` + tc.version + `",`
		}
		src := `{` + head + `"exchanges":[{"name":"orders","vhost":"v","type":"topic","durable":true,"auto_delete":false,"arguments":{}}],
		"queues":[],
		"bindings":[
		  {"source":"orders","vhost":"v","destination":"app.excl","destination_type":"queue","routing_key":"a","arguments":{}},
		  {"source":"orders","vhost":"v","destination":"internal.x","destination_type":"exchange","routing_key":"k","arguments":{}}
		]}`
		_, rep := mustRead(t, src, ReadOptions{})
		joined := strings.Join(rep.Warnings, "\n")
		if !strings.Contains(joined, `vhost "v": bindings refer to objects the file does not declare: `) || !strings.Contains(joined, `queue "app.excl"`) || !strings.Contains(joined, `exchange "internal.x"`) {
			t.Errorf("version %q: warnings %q; want the bindings named", tc.version, rep.Warnings)
		}
		if got := strings.Contains(joined, fmt.Sprintf(why, tc.version)); got != tc.explain {
			t.Errorf("version %q: warnings %q; explained %v, want %v", tc.version, rep.Warnings, got, tc.explain)
		}
	}
}

// TestListedTwice: an object a definitions file lists twice is read as
// RabbitMQ's import leaves it, and the warning names both entries, how
// they differ and which one the broker keeps: the last of a policy,
// operator policy or runtime parameter (the import sets them one after
// the other); either of a queue, exchange, vhost or permission (it adds
// them concurrently), mqctl keeping the first; of a user, none (the
// import fails). Measured on 3.10.8, 4.0.5 and 4.3.6 (see importOf).
func TestListedTwice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		src   string
		check func(t *testing.T, top *topology.Topology)
		warn  []string // in the one warning; none when nil
		not   []string // not in any warning
	}{
		{
			name: "a policy: the last",
			src: `{"policies":[
			  {"name":"p","vhost":"/","pattern":"^q","apply-to":"queues","priority":0,"definition":{"max-length":5}},
			  {"name":"p","vhost":"/","pattern":"^q","apply-to":"queues","priority":0,"definition":{"max-length":7}}]}`,
			check: func(t *testing.T, top *topology.Topology) {
				if p := top.Vhosts["/"].Policies["p"]; p == nil || !topology.ValueEqual(p.Definition["max-length"], int64(7)) || p.Pos.Line != 3 {
					t.Errorf("policy p = %+v, want the last entry's (max-length 7, line 3)", p)
				}
			},
			warn: []string{`policy "p" in vhost "/" is listed twice, at defs.json:2:`, `definition.max-length 5, then 7`, "the last, at defs.json:3:", "mqctl kept it too"},
		},
		{
			name: "an operator policy: the last",
			src: `{"parameters":[
			  {"vhost":"/","component":"operator_policy","name":"op","value":{"pattern":"^q","apply-to":"queues","priority":0,"definition":{"max-length":5}}},
			  {"vhost":"/","component":"operator_policy","name":"op","value":{"pattern":"^q","apply-to":"queues","priority":0,"definition":{"max-length":9}}}]}`,
			check: func(t *testing.T, top *topology.Topology) {
				if p := top.Vhosts["/"].OperatorPolicies["op"]; p == nil || !topology.ValueEqual(p.Definition["max-length"], int64(9)) {
					t.Errorf("operator policy op = %+v, want the last entry's (max-length 9)", p)
				}
			},
			warn: []string{`operator policy "op" in vhost "/" is listed twice`, `definition.max-length 5, then 9`, "the last, at defs.json:3:"},
		},
		{
			name: "an exchange: either; the first kept",
			src: `{"exchanges":[
			  {"name":"x","vhost":"/","type":"topic","durable":true,"auto_delete":false,"internal":false,"arguments":{}},
			  {"name":"x","vhost":"/","type":"fanout","durable":true,"auto_delete":false,"internal":false,"arguments":{}}]}`,
			check: func(t *testing.T, top *topology.Topology) {
				if x := top.Vhosts["/"].Exchanges["x"]; x == nil || x.Type != "topic" {
					t.Errorf("exchange x = %+v, want the first entry's (topic)", x)
				}
			},
			warn: []string{`exchange "x" in vhost "/" is listed twice`, `type "topic", then "fanout"`, "which is not defined", "mqctl kept the first, at defs.json:2:"},
		},
		{
			name: "a queue's arguments: either; the first kept",
			src: `{"queues":[
			  {"name":"q","vhost":"/","durable":true,"auto_delete":false,"arguments":{"x-max-length":10}},
			  {"name":"q","vhost":"/","durable":true,"auto_delete":false,"arguments":{"x-max-length":20,"x-queue-type":"quorum"}}]}`,
			check: func(t *testing.T, top *topology.Topology) {
				if q := top.Vhosts["/"].Queues["q"]; q == nil || q.Type != "classic" || !topology.ValueEqual(q.Arguments["x-max-length"], int64(10)) {
					t.Errorf("queue q = %+v, want the first entry's", q)
				}
			},
			warn: []string{`queue "q" in vhost "/" is listed twice`, `arguments.x-max-length 10, then 20`, `arguments.x-queue-type absent, then "quorum"`, "adds queues concurrently"},
		},
		{
			name: "a queue listed twice alike: nothing to say",
			src: `{"queues":[
			  {"name":"q","vhost":"/","durable":true,"auto_delete":false,"arguments":{}},
			  {"name":"q","vhost":"/","durable":true,"auto_delete":false,"arguments":{}}]}`,
		},
		{
			name: "a permission: either; the first kept",
			src: `{"users":[{"name":"u","password_hash":"","tags":""}],"permissions":[
			  {"user":"u","vhost":"/","configure":"first","write":".*","read":".*"},
			  {"user":"u","vhost":"/","configure":"second","write":".*","read":".*"}]}`,
			check: func(t *testing.T, top *topology.Topology) {
				if it := top.Vhosts["/"].Items.Get(kind.Permission, "u"); it == nil || it.Settings["configure"] != "first" {
					t.Errorf("permission of u = %+v, want the first entry's", it)
				}
			},
			warn: []string{`permission of user "u" in vhost "/" is listed twice`, `configure "first", then "second"`, "mqctl kept the first"},
		},
		{
			name: "a user listed twice alike: the import fails all the same",
			src: `{"users":[
			  {"name":"u","password_hash":"SECRETHASH","tags":""},
			  {"name":"u","password_hash":"SECRETHASH","tags":""}]}`,
			warn: []string{`user "u" is listed twice`, "identically", "almost always refuses this file (HTTP 400 user_already_exists"},
			not:  []string{"SECRETHASH"},
		},
		{
			name: "a shovel: the last, its URIs not shown",
			src: `{"parameters":[
			  {"vhost":"/","component":"shovel","name":"s","value":{"src-uri":"amqp://u:pw1@h","src-queue":"a","dest-uri":"amqp://","dest-queue":"b"}},
			  {"vhost":"/","component":"shovel","name":"s","value":{"src-uri":"amqp://u:pw2@h","src-queue":"a","dest-uri":"amqp://","dest-queue":"c"}}]}`,
			check: func(t *testing.T, top *topology.Topology) {
				if it := top.Vhosts["/"].Items.Get(kind.Shovel, "s"); it == nil || it.Settings["dest-queue"] != "c" {
					t.Errorf("shovel s = %+v, want the last entry's", it)
				}
			},
			warn: []string{`shovel "s" in vhost "/" is listed twice`, "(value.dest-queue; value.src-uri)", "the last, at defs.json:3:"},
			not:  []string{"pw1", "pw2"},
		},
		{
			// A kind that holds no secret (kind.Spec.Secret) shows the
			// values that differ, as queues and policies do.
			name: "an upstream set: the last, the values shown",
			src: `{"parameters":[
			  {"vhost":"/","component":"federation-upstream-set","name":"s","value":[{"upstream":"a"}]},
			  {"vhost":"/","component":"federation-upstream-set","name":"s","value":[{"upstream":"b"}]}]}`,
			warn: []string{`federation upstream set "s" in vhost "/" is listed twice`, `(value [{"upstream":"a"}], then [{"upstream":"b"}])`, "the last, at defs.json:3:"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, rep := mustRead(t, tc.src, ReadOptions{})
			if tc.check != nil {
				tc.check(t, top)
			}
			if tc.warn == nil {
				if len(rep.Warnings) != 0 {
					t.Errorf("warnings %q, want none", rep.Warnings)
				}
				return
			}
			if len(rep.Warnings) != 1 {
				t.Fatalf("warnings %q, want one", rep.Warnings)
			}
			for _, s := range tc.warn {
				if !strings.Contains(rep.Warnings[0], s) {
					t.Errorf("warning lacks %q: %s", s, rep.Warnings[0])
				}
			}
			for _, s := range tc.not {
				if strings.Contains(rep.Warnings[0], s) {
					t.Errorf("warning shows %q: %s", s, rep.Warnings[0])
				}
			}
		})
	}
}

// TestErrorsAtTheField: an error about one field of an object of a
// definitions file (marked | in the source: its value) points at that
// field, or at the key of an object-valued one, not at the object's
// first line.
func TestErrorsAtTheField(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"an exchange type", `{"exchanges":[{"name":"x","vhost":"/",
  "durable":true,
  "type":|"definitly not direct"}]}`},
		{"a queue's x-queue-type", `{"queues":[{"name":"q","vhost":"/","durable":true,
  "arguments":{"x-max-length":1,
    "x-queue-type":|"quorom"}}]}`},
		{"a dead-letter routing key without exchange", `{"queues":[{"name":"q","vhost":"/","durable":true,
  "arguments":{"x-dead-letter-routing-key":|"dlq"}}]}`},
		{"a binding's destination type", `{"bindings":[{"source":"x","vhost":"/","destination":"q",
  "destination_type":|"queues","routing_key":"k","arguments":{}}]}`},
		{"a user's limit", `{"users":[{"name":"u","password_hash":"","tags":"",
  "limits": {"max-connections" : |"twomincepies"}}]}`},
		{"a flag that is no boolean", `{"queues":[{"name":"q","vhost":"/",
  "durable":|"yes"}]}`},
		{"a policy's priority", `{"policies":[{"name":"p","vhost":"/","pattern":"^q",
  "priority":|"high","definition":{"max-length":1}}]}`},
		{"a policy's apply-to", `{"policies":[{"name":"p","vhost":"/","pattern":"^q",
  "apply-to":|"queue","definition":{"max-length":1}}]}`},
		{"an operator policy parameter's apply-to: the parameter", `{"parameters":[|{"vhost":"/","component":"operator_policy","name":"op",
  "value":{"pattern":"^q","apply-to":"queue","definition":{"max-length":1}}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := strings.Index(tc.src, "|")
			src := tc.src[:i] + tc.src[i+1:]
			line := strings.Count(src[:i], "\n") + 1
			want := fmt.Sprintf("defs.json:%d:%d", line, i-strings.LastIndex(src[:i], "\n"))
			_, _, err := ReadWithOptions("defs.json", []byte(src), ReadOptions{})
			var list ErrorList
			if !errors.As(err, &list) || len(list) != 1 {
				t.Fatalf("want one error, got %v", err)
			}
			if got := list[0].Pos.String(); got != want {
				t.Errorf("error at %s, want %s: %v", got, want, list[0])
			}
		})
	}
}

// TestEveryBadSettingIsReported: the settings of a policy (and of an
// exchange, a queue) are read from their topology.Definition one by one,
// and each one refused is reported, not only the first.
func TestEveryBadSettingIsReported(t *testing.T) {
	_, _, err := ReadWithOptions("defs.json", []byte(`{"policies":[{"name":"p","vhost":"/","apply-to":"queue","priority":"high","definition":{"max-length":1}}],
  "exchanges":[{"name":"x","vhost":"/","type":"topic","durable":"yes","internal":1}]}`), ReadOptions{})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 5 {
		t.Fatalf("want 5 errors, got %v", err)
	}
	for _, want := range []string{`no "pattern"`, `apply-to "queue" is not valid`, "priority must be an integer", `"durable" must be true or false`, `"internal" must be true or false`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no error says %q: %v", want, err)
		}
	}
}
