package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ignoreItems leaves the generic kinds' items (and which of them a
// topology declares) out of a comparison.
var ignoreItems = cmp.Options{cmpopts.IgnoreFields(topology.Vhost{}, "Items"), cmpopts.IgnoreFields(topology.Topology{}, "Items", "Sections")}

// anyValue resolves every ${VAR} of an export: what a user sets before
// applying it.
func anyValue(name string) (string, bool) { return "value-of-" + name, true }

// exportValues resolves the ${VAR}s of the export of t as a user does
// before applying it: a URI's to the URI the source held (secretValues;
// the loader judges a URI), any other to anyValue.
func exportValues(t *topology.Topology) func(name string) (string, bool) {
	env := secretValues(t)
	return func(name string) (string, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		return anyValue(name)
	}
}

// rejected lists the corpus files RabbitMQ refuses to import, with what
// mqctl's message must say about each.
var rejected = map[string]string{
	"failing_case12.json": `exchange "invalid_type" in vhost "/": exchange type "definitly not direct"`,
	"failing_case17.json": `policy in vhost "/": the policy has no name`,
	"failing_case19.json": `user "limited_guest": user limit max-connections must be an integer, found the string "twomincepies"`,
	"failing_case20.json": "failing_case20.json:6:29: not valid JSON",
	"failing_case21.json": `queue "qq.1" has no "vhost" field`,
	"failing_case27.json": `binding from "x_demo_27" to "q_demo_27" in vhost "/": destination_type "not_a_real_destination_type_27" is not valid`,
	"failing_case28.json": `destination_type "日本語_28" is not valid`,
	"failing_case29.json": `destination_type "café_29" is not valid`,
	"alphagov__govuk-aws__publishing-rabbitmq-schema.json.tpl": "looks like a template",
}

// TestCorpus reads every definitions file of the corpus. The ones RabbitMQ
// rejects must be rejected with a message naming the problem; every other
// one must export (with and without sugar) to a file that loads back into
// exactly the queues, exchanges, bindings and policies of the source.
func TestCorpus(t *testing.T) {
	t.Parallel()
	dir, files := corpus.Files(t)
	for _, path := range files {
		base := filepath.Base(path)
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			top, _, err := definitions.Read(base, data)
			want, mustReject := rejected[base]
			if mustReject || strings.HasPrefix(base, "failing_case") {
				if err == nil {
					t.Fatalf("accepted; RabbitMQ rejects this file and so must mqctl")
				}
				if !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name the file and say %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			expect, err := objectsFromJSON(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, sugar := range []bool{false, true} {
				var buf bytes.Buffer
				if err := WriteYAML(&buf, top, Options{Sugar: sugar, Source: base}); err != nil {
					t.Fatal(err)
				}
				// The export's ${VAR} placeholders (passwords, URIs with
				// credentials) resolved as a user resolves them.
				back, err := loader.LoadBytes(base+".yaml", buf.Bytes(), loader.Options{LookupEnv: exportValues(top)})
				if gap, ok := loaderGaps[base]; ok && err != nil && strings.Contains(err.Error(), gap) {
					t.Logf("sugar=%t: not compared: the loader refuses the export (%s)", sugar, gap)
					continue
				}
				if err != nil {
					t.Fatalf("sugar=%t: the export does not load: %v\n%s", sugar, err, numbered(buf.String()))
				}
				if diff := cmp.Diff(expect, objectsOf(back)); diff != "" {
					t.Errorf("sugar=%t: the export does not hold the source's objects (-source +export):\n%s", sugar, diff)
				}
				// Items are compared by TestCorpusItems, passwords aside.
				if diff := cmp.Diff(sorted(top), sorted(back), topologyOpts, ignoreItems); diff != "" {
					t.Errorf("sugar=%t: loading the export gives another topology (-read +loaded):\n%s", sugar, diff)
				}
			}
		})
	}
}

// objectSet renders each object as identity => fields, so that two sets
// compare with cmp.Diff.
type objectSet struct {
	Queues, Exchanges, Policies, OperatorPolicies map[string]string
	Bindings                                      map[string]bool
}

func newObjectSet() objectSet {
	return objectSet{Queues: map[string]string{}, Exchanges: map[string]string{}, Policies: map[string]string{}, OperatorPolicies: map[string]string{}, Bindings: map[string]bool{}}
}

func queueFields(typ string, durable, autoDelete bool, args topology.Args) string {
	return fmt.Sprintf("type=%s durable=%t auto_delete=%t args=%s", typ, durable, autoDelete, args.Canonical())
}

func exchangeFields(typ string, durable, autoDelete, internal bool, args topology.Args) string {
	return fmt.Sprintf("type=%s durable=%t auto_delete=%t internal=%t args=%s", typ, durable, autoDelete, internal, args.Canonical())
}

func bindingID(vhost, src, dt, dst, key string, args topology.Args) string {
	return fmt.Sprintf("%s|%s -> %s %s|%s|%s", vhost, src, dt, dst, key, args.Canonical())
}

func policyFields(pattern, applyTo string, priority int64, def topology.Args) string {
	return fmt.Sprintf("pattern=%s apply-to=%s priority=%d definition=%s", pattern, applyTo, priority, def.Canonical())
}

// objectsOf is the object set of a loaded topology.
func objectsOf(t *topology.Topology) objectSet {
	s := newObjectSet()
	for vn, v := range t.Vhosts {
		for n, q := range v.Queues {
			s.Queues[vn+"|"+n] = queueFields(q.Type, q.Durable, q.AutoDelete, q.Arguments)
		}
		for n, x := range v.Exchanges {
			s.Exchanges[vn+"|"+n] = exchangeFields(x.Type, x.Durable, x.AutoDelete, x.Internal, x.Arguments)
		}
		for _, b := range v.Bindings {
			s.Bindings[bindingID(vn, b.Source, b.DestinationType, b.Destination, b.RoutingKey, b.Arguments)] = true
		}
		for n, p := range v.Policies {
			s.Policies[vn+"|"+n] = policyFields(p.Pattern, p.ApplyTo, int64(p.Priority), p.Definition)
		}
		for n, p := range v.OperatorPolicies {
			s.OperatorPolicies[vn+"|"+n] = policyFields(p.Pattern, p.ApplyTo, int64(p.Priority), p.Definition)
		}
	}
	return s
}

// objectsFromJSON reads the objects of a definitions file straight from its
// JSON, independently of package definitions: what RabbitMQ would declare
// on import (amq.* names and the default exchange are skipped; of a queue
// listed twice, the first declaration counts).
func objectsFromJSON(data []byte) (objectSet, error) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return objectSet{}, err
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
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	flag := func(m map[string]any, k string, def bool) bool {
		if b, ok := m[k].(bool); ok {
			return b
		}
		return def
	}
	args := func(m map[string]any, k string) topology.Args {
		a, _ := m[k].(map[string]any)
		return topology.Args(a).Normalized()
	}
	single := str(doc, "rabbitmq_definition_format") == "single_virtual_host"
	singleName := str(doc, "original_vhost_name")
	if singleName == "" {
		singleName = "/"
	}
	vhostOf := func(m map[string]any) string {
		if single {
			return singleName
		}
		return str(m, "vhost")
	}
	dqt := map[string]string{}
	for _, v := range list("vhosts") {
		t := str(v, "default_queue_type")
		if meta, ok := v["metadata"].(map[string]any); ok && t == "" {
			t = str(meta, "default_queue_type")
		}
		dqt[str(v, "name")] = t
	}
	if single {
		dqt[singleName] = str(doc, "default_queue_type")
	}

	s := newObjectSet()
	for _, q := range list("queues") {
		name, vh := str(q, "name"), vhostOf(q)
		id := vh + "|" + name
		if _, dup := s.Queues[id]; dup || strings.HasPrefix(name, "amq.") {
			continue
		}
		a := args(q, "arguments")
		typ := str(q, "type")
		if t, ok := a["x-queue-type"].(string); ok {
			typ = t
			delete(a, "x-queue-type")
		}
		if typ == "" {
			typ = dqt[vh]
		}
		if typ == "" || typ == "undefined" {
			typ = "classic"
		}
		s.Queues[id] = queueFields(typ, flag(q, "durable", true), flag(q, "auto_delete", false), a)
	}
	for _, x := range list("exchanges") {
		name := str(x, "name")
		if name == "" || strings.HasPrefix(name, "amq.") {
			continue
		}
		s.Exchanges[vhostOf(x)+"|"+name] = exchangeFields(str(x, "type"), flag(x, "durable", true), flag(x, "auto_delete", false), flag(x, "internal", false), args(x, "arguments"))
	}
	for _, b := range list("bindings") {
		if str(b, "source") == "" || (str(b, "destination_type") == "queue" && strings.HasPrefix(str(b, "destination"), "amq.")) {
			continue
		}
		s.Bindings[bindingID(vhostOf(b), str(b, "source"), str(b, "destination_type"), str(b, "destination"), str(b, "routing_key"), args(b, "arguments"))] = true
	}
	policy := func(into map[string]string, vh, name string, p map[string]any) {
		applyTo := str(p, "apply-to")
		if applyTo == "" {
			applyTo = "all"
		}
		prio, _ := topology.Normalize(p["priority"]).(int64)
		into[vh+"|"+name] = policyFields(str(p, "pattern"), applyTo, prio, args(p, "definition"))
	}
	for _, p := range list("policies") {
		policy(s.Policies, vhostOf(p), str(p, "name"), p)
	}
	for _, p := range list("operator_policies") {
		policy(s.OperatorPolicies, vhostOf(p), str(p, "name"), p)
	}
	for _, p := range list("parameters") {
		if v, ok := p["value"].(map[string]any); ok && str(p, "component") == "operator_policy" {
			policy(s.OperatorPolicies, vhostOf(p), str(p, "name"), v)
		}
	}
	return s, nil
}
