package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/corpus"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestApplyCorpus applies every definitions file of the corpus that mqctl
// reads, exported with sugar, to fresh vhosts (one per source vhost), and
// checks that the broker's own definitions export of those vhosts holds the
// source file's queues, exchanges, bindings and policies, and that a second
// plan is empty.
func TestApplyCorpus(t *testing.T) {
	t.Parallel()
	dir, files := corpus.Files(t)
	b := testbroker.New(t)
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			applyCorpusFile(t, b, path)
		})
	}
}

func applyCorpusFile(t *testing.T, b *testbroker.Broker, path string) {
	base := filepath.Base(path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := definitions.Read(base, data)
	if err != nil {
		// Files RabbitMQ itself refuses are pkg/export's TestCorpus's
		// business; every other file must be read.
		if strings.HasPrefix(base, "failing_case") || strings.HasSuffix(base, ".tpl") {
			return
		}
		t.Fatalf("definitions.Read: %v", err)
	}

	// One fresh vhost per source vhost.
	rename := map[string]string{}
	renamed := topology.New()
	for _, vn := range src.VhostNames() {
		v := src.Vhosts[vn]
		fresh := freshVhostName(t, b)
		rename[vn] = fresh
		v.Name = fresh
		// Users (and so their permissions) stay out: the topology is
		// applied in fresh vhosts, its users are the corpus's own. So do
		// shovels and federation links: they would connect to the hosts
		// the file names (amqp://localhost is this broker's default vhost),
		// and pkg/broker tests them against the broker.
		for _, k := range []kind.Kind{kind.Shovel, kind.FederationUpstream, kind.FederationUpstreamSet} {
			delete(v.Items, k)
		}
		renamed.Vhosts[fresh] = v
	}
	var buf bytes.Buffer
	if err := export.WriteYAML(&buf, renamed, export.Options{Sugar: true, Source: base}); err != nil {
		t.Fatal(err)
	}
	if _, err := loader.LoadBytes(base+".yaml", buf.Bytes(), loader.Options{}); err != nil {
		t.Fatalf("the export does not load: %v", err)
	}
	file := filepath.Join(t.TempDir(), "corpus.yaml")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	r := runMqctl(b, nil, "apply", "-f", file, "--auto-approve", "--quiet")
	t.Logf("apply took %s", time.Since(start).Round(time.Millisecond))
	line := b.Version().Line()
	refusals, ok := corpus.Refused[line]
	if !ok {
		t.Fatalf("no corpus expectations for RabbitMQ %s", line)
	}
	if ref, refused := refusals[base]; refused {
		if ref.AtPlan {
			if r.code != 1 || !strings.Contains(r.stderr, ref.Want) || !strings.Contains(r.stderr, "nothing was changed") {
				t.Fatalf("RabbitMQ %s: apply should refuse the file up front saying %q:\n%s", line, ref.Want, r)
			}
			for _, vh := range rename {
				if _, err := b.RH.GetVhost(vh); err == nil {
					t.Errorf("RabbitMQ %s: the refused apply created vhost %q", line, vh)
				}
			}
			return
		}
		if r.code != 1 || !strings.Contains(r.stdout, ref.Want) || !strings.Contains(r.stdout, "Failed (") {
			t.Fatalf("RabbitMQ %s: apply should fail saying %q:\n%s", line, ref.Want, r)
		}
		return
	}
	if r.code != 0 {
		t.Fatalf("apply failed:\n%s", r)
	}

	want, err := corpusObjectsOfSource(data, rename)
	if err != nil {
		t.Fatal(err)
	}
	got := newCorpusObjects()
	for _, vh := range rename {
		got.add(definitionsOf(t, b, vh), func(map[string]any) string { return vh }, nil)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the broker's definitions do not hold the source's objects (-source +broker):\n%s", diff)
	}
	if r := runMqctl(b, nil, "plan", "-f", file, "--detailed-exitcode"); r.code != 0 {
		t.Errorf("a second plan is not empty:\n%s", r)
	}
}

// corpusObjects renders each object as identity => fields (vhost names
// included), so that two sets compare with cmp.Diff.
type corpusObjects struct {
	Queues, Exchanges, Policies, OperatorPolicies map[string]string
	Bindings                                      map[string]bool
}

func newCorpusObjects() corpusObjects {
	return corpusObjects{Queues: map[string]string{}, Exchanges: map[string]string{}, Policies: map[string]string{},
		OperatorPolicies: map[string]string{}, Bindings: map[string]bool{}}
}

// corpusObjectsOfSource reads the objects of a definitions file straight
// from its JSON, independently of package definitions: what RabbitMQ
// declares on import (amq.* names and the default exchange skipped; of a
// queue listed twice, the first declaration counts), vhosts renamed.
func corpusObjectsOfSource(data []byte, rename map[string]string) (corpusObjects, error) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return corpusObjects{}, err
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	single := str(doc, "rabbitmq_definition_format") == "single_virtual_host"
	singleName := str(doc, "original_vhost_name")
	if singleName == "" {
		singleName = "/"
	}
	vhostOf := func(m map[string]any) string {
		if single {
			return rename[singleName]
		}
		return rename[str(m, "vhost")]
	}
	dqt := map[string]string{}
	for _, v := range jsonList(doc, "vhosts") {
		typ := str(v, "default_queue_type")
		if meta, ok := v["metadata"].(map[string]any); ok && typ == "" {
			typ = str(meta, "default_queue_type")
		}
		dqt[rename[str(v, "name")]] = typ
	}
	if single {
		dqt[rename[singleName]] = str(doc, "default_queue_type")
	}
	s := newCorpusObjects()
	s.add(doc, vhostOf, dqt)
	return s, nil
}

func jsonList(doc map[string]any, key string) []map[string]any {
	arr, _ := doc[key].([]any)
	var out []map[string]any
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// add adds the objects of a definitions document (a whole-broker file or
// the broker's per-vhost export) to s. dqt gives each vhost's default queue
// type. mqctl's own ownership record and apply lock are left out.
func (s corpusObjects) add(doc map[string]any, vhostOf func(map[string]any) string, dqt map[string]string) {
	str := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	flag := func(m map[string]any, k string, def bool) bool {
		if v, ok := m[k].(bool); ok {
			return v
		}
		return def
	}
	args := func(m map[string]any, k string) topology.Args {
		a, _ := m[k].(map[string]any)
		return topology.Args(a).Normalized()
	}
	for _, q := range jsonList(doc, "queues") {
		name, vh := str(q, "name"), vhostOf(q)
		id := vh + "|" + name
		if _, dup := s.Queues[id]; dup || strings.HasPrefix(name, "amq.") || name == lock.QueueName {
			continue
		}
		a := args(q, "arguments")
		typ := str(q, "type")
		if x, ok := a["x-queue-type"].(string); ok {
			typ = x
			delete(a, "x-queue-type")
		}
		if typ == "" {
			typ = dqt[vh]
		}
		if typ == "" || typ == "undefined" {
			typ = topology.QueueClassic
		}
		s.Queues[id] = fmt.Sprintf("type=%s durable=%t auto_delete=%t args=%s", typ, flag(q, "durable", true), flag(q, "auto_delete", false), a.Canonical())
	}
	for _, x := range jsonList(doc, "exchanges") {
		name := str(x, "name")
		if name == "" || strings.HasPrefix(name, "amq.") || ownership.IsRecord(name) {
			continue
		}
		s.Exchanges[vhostOf(x)+"|"+name] = fmt.Sprintf("type=%s durable=%t auto_delete=%t internal=%t args=%s",
			str(x, "type"), flag(x, "durable", true), flag(x, "auto_delete", false), flag(x, "internal", false), args(x, "arguments").Canonical())
	}
	for _, bd := range jsonList(doc, "bindings") {
		if str(bd, "source") == "" || (str(bd, "destination_type") == "queue" && strings.HasPrefix(str(bd, "destination"), "amq.")) {
			continue
		}
		s.Bindings[fmt.Sprintf("%s|%s -> %s %s|%s|%s", vhostOf(bd), str(bd, "source"), str(bd, "destination_type"), str(bd, "destination"),
			str(bd, "routing_key"), args(bd, "arguments").Canonical())] = true
	}
	policy := func(into map[string]string, vh, name string, p map[string]any) {
		applyTo := str(p, "apply-to")
		if applyTo == "" {
			applyTo = "all"
		}
		prio, _ := topology.Normalize(p["priority"]).(int64)
		into[vh+"|"+name] = fmt.Sprintf("pattern=%s apply-to=%s priority=%d definition=%s", str(p, "pattern"), applyTo, prio, args(p, "definition").Canonical())
	}
	for _, p := range jsonList(doc, "policies") {
		policy(s.Policies, vhostOf(p), str(p, "name"), p)
	}
	for _, p := range jsonList(doc, "operator_policies") {
		policy(s.OperatorPolicies, vhostOf(p), str(p, "name"), p)
	}
	for _, p := range jsonList(doc, "parameters") {
		if v, ok := p["value"].(map[string]any); ok && str(p, "component") == "operator_policy" {
			policy(s.OperatorPolicies, vhostOf(p), str(p, "name"), v)
		}
	}
}
