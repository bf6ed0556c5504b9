package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/schema"
)

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.JSON()))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schema.ID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schema.ID) // also checks the schema against the 2020-12 meta-schema
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return s
}

// instance converts a YAML document into the JSON value a YAML-aware
// editor validates: aliases and merge keys resolved, every key a string.
func instance(data []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(jsonCompatible(v))
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func jsonCompatible(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonCompatible(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonCompatible(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonCompatible(e)
		}
		return out
	default:
		return x
	}
}

func TestSchemaID(t *testing.T) {
	var doc struct {
		ID     string `json:"$id"`
		Schema string `json:"$schema"`
	}
	if err := json.Unmarshal(schema.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ID != schema.ID || doc.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$id %q, $schema %q", doc.ID, doc.Schema)
	}
}

// validFiles are the example topologies of the repository and this
// package's fixtures.
func validFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "valid", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join("..", "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "ci" {
			return filepath.SkipDir // CI pipelines (examples/ci), not topology files
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join("..", "topology.yaml")); err == nil {
		files = append(files, filepath.Join("..", "topology.yaml"))
	}
	return files
}

func TestValidFiles(t *testing.T) {
	s := compile(t)
	for _, path := range validFiles(t) {
		t.Run(path, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			inst, err := instance(data)
			if err != nil {
				t.Fatalf("YAML: %v", err)
			}
			if err := s.Validate(inst); err != nil {
				t.Errorf("schema rejects %s:\n%v", path, err)
			}
			// The fixtures of this package load too (the examples are
			// loaded, with their environment, by examples_test).
			if strings.HasPrefix(path, "testdata") {
				if _, err := loader.Load([]string{path}, loader.Options{}); err != nil {
					t.Errorf("loader rejects %s:\n%v", path, err)
				}
			}
		})
	}
}

// TestBadFiles: files the loader rejects for an unknown field, a bad enum
// value or a wrong type are rejected by the schema too.
func TestBadFiles(t *testing.T) {
	s := compile(t)
	vhost := func(body string) string {
		var sb strings.Builder
		sb.WriteString("version: 1\nvhosts:\n  /:\n")
		for line := range strings.SplitSeq(body, "\n") {
			sb.WriteString("    " + line + "\n")
		}
		return sb.String()
	}
	tests := []struct{ name, src string }{
		// Unknown fields.
		{"unknown top-level field", "version: 1\nvhost: {}\n"},
		{"unknown vhost field", vhost("queue: {a: {}}")},
		{"unknown exchange field", vhost("exchanges:\n  x: {colour: red}")},
		{"unknown queue field", vhost("queues:\n  a: {maxPriority: 5}")},
		{"unknown limits field", vhost("queues:\n  a: {limits: {max_len: 5}}")},
		{"unknown binding field", vhost("queues:\n  a: {bindings: [{exchange: x, routing_kye: y}]}")},
		{"unknown dead_letter field", vhost("queues:\n  a: {dead_letter: {exchange: x, key: y}}")},
		{"unknown field in a DLQ mapping", vhost("queues:\n  a: {dead_letter: {exchange: x, queue: {name: d, colour: red}}}")},
		{"unknown retry field", vhost("queues:\n  a: {retry: {delay: [10s]}}")},
		{"unknown vhost binding field", vhost("bindings:\n  - {source: a, destination: b, key: c}")},
		{"unknown policy field", vhost("policies:\n  p: {pattern: x, definition: {a: 1}, applyTo: all}")},
		{"unknown defaults field", vhost("defaults:\n  queues: {}")},
		{"unknown lint field", "version: 1\nlint: {rule: {MQ101: off}}\n"},
		// Bad enum values.
		{"queue type", vhost("queues:\n  a: {type: qourum}")},
		{"exchange type", vhost("exchanges:\n  x: {type: broadcast}")},
		{"overflow", vhost("queues:\n  a: {limits: {overflow: drop-tail}}")},
		{"dead-letter strategy", vhost("queues:\n  a: {dead_letter: {exchange: d, strategy: exactly-once}}")},
		{"apply_to", vhost("policies:\n  p: {pattern: x, apply_to: queue, definition: {max-length: 1}}")},
		{"destination_type", vhost("bindings:\n  - {source: a, destination: b, destination_type: topic}")},
		{"default_queue_type", vhost("default_queue_type: lazy")},
		{"lint severity", "version: 1\nlint: {rules: {MQ101: warn}}\n"},
		{"version", "version: 2\n"},
		// Wrong types.
		{"boolean as yes", vhost("queues:\n  a: {durable: yes}")},
		{"integer as text", vhost("queues:\n  a: {max_priority: ten}")},
		{"priority out of range", vhost("queues:\n  a: {max_priority: 300}")},
		{"routing key as a number", vhost("queues:\n  a: {bindings: [{exchange: x, routing_key: 404}]}")},
		{"queue as a list", vhost("queues:\n  a: [1]")},
		{"bindings as a mapping", vhost("queues:\n  a: {bindings: {exchange: x}}")},
		{"bad duration", vhost("queues:\n  a: {limits: {message_ttl: 10 sec}}")},
		{"fractional duration", vhost("queues:\n  a: {limits: {message_ttl: 1.5}}")},
		{"bad size", vhost("queues:\n  a: {limits: {max_length_bytes: 10mb}}")},
		{"negative max_length", vhost("queues:\n  a: {limits: {max_length: -1}}")},
		{"zero delay", vhost("queues:\n  a: {retry: {delays: [0s]}}")},
		{"delays and backoff", vhost("queues:\n  a: {type: quorum, retry: {delays: [10s], backoff: {min: 1s}}}")},
		{"backoff without min", vhost("queues:\n  a: {type: quorum, retry: {backoff: {max: 1m}}}")},
		{"unknown backoff field", vhost("queues:\n  a: {type: quorum, retry: {backoff: {min: 1s, factor: 2}}}")},
		{"zero backoff", vhost("queues:\n  a: {type: quorum, retry: {backoff: {min: 0}}}")},
		{"retry when", vhost("queues:\n  a: {type: quorum, retry: {backoff: {min: 1s}, when: nacked}}")},
		{"zero attempts", vhost("queues:\n  a: {type: quorum, retry: {backoff: {min: 1s}, attempts: 0}}")},
		{"attempts without backoff", vhost("queues:\n  a: {type: quorum, retry: {attempts: 3}}")},
		{"when with delays", vhost("queues:\n  a: {type: quorum, retry: {delays: [10s], when: all}}")},
		{"tests as a mapping", "version: 1\ntests: {a: 1}\n"},
		// Other rules both enforce.
		{"missing version", "vhosts: {}\n"},
		{"amq. queue", vhost("queues:\n  amq.gen: {}")},
		{"amq. exchange", vhost("exchanges:\n  amq.custom: {}")},
		{"routing_key and routing_keys", vhost("queues:\n  a: {bindings: [{exchange: x, routing_key: a, routing_keys: [b]}]}")},
		{"binding without exchange", vhost("queues:\n  a: {bindings: [{routing_key: a}]}")},
		{"policy without definition", vhost("policies:\n  p: {pattern: x}")},
		{"dead_letter without exchange or queue", vhost("queues:\n  a: {dead_letter: {routing_key: x}}")},
		{"DLQ mapping without name", vhost("queues:\n  a: {dead_letter: {exchange: d, queue: {type: quorum}}}")},
		// The kinds whose parts are generated from pkg/kind and, for
		// the typed kinds, pkg/topology's Definitions
		// (TestGeneratedFromKinds).
		{"operator policy apply_to", vhost("operator_policies:\n  p: {pattern: x, apply_to: everything, definition: {max-length: 1}}")},
		{"policy priority a word", vhost("policies:\n  p: {pattern: x, priority: high, definition: {max-length: 1}}")},
		{"operator policy empty definition", vhost("operator_policies:\n  p: {pattern: x, definition: {}}")},
		{"exchange durable a word", vhost("exchanges:\n  x: {durable: sometimes}")},
		{"queue auto_delete a number", vhost("queues:\n  q: {auto_delete: 3}")},
		{"amq. operator policy name is fine, a setting is not", vhost("operator_policies:\n  amq.p: {pattern: x, definition: {max-length: 1}, internal: true}")},
		{"vhost limit below -1", vhost("limits: {max-queues: -2}")},
		{"shovel ack-mode", vhost("shovels:\n  s: {src-uri: amqp://, src-queue: a, dest-uri: amqp://, dest-queue: b, ack-mode: fast}")},
		{"shovel without dest-uri", vhost("shovels:\n  s: {src-uri: amqp://, src-queue: a}")},
		{"shovel self-deleting at once", vhost("shovels:\n  s: {src-uri: amqp://, src-queue: a, dest-uri: amqp://, src-delete-after-duration: 0}")},
		{"upstream queue-type", vhost("federation_upstreams:\n  u: {uri: amqp://h, queue-type: stream}")},
		{"upstream set member without upstream", vhost("federation_upstream_sets:\n  s: [{max-hops: 2}]")},
		{"user tag empty", "version: 1\nusers:\n  u: {password: x, tags: [\"\"]}\n"},
		{"user limit as text", "version: 1\nusers:\n  u: {password: x, limits: {max-channels: many}}\n"},
		{"topic permission without exchange", "version: 1\nvhosts:\n  v: {}\nusers:\n  u: {password: x, topic_permissions: {v: [{write: \".*\"}]}}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := loader.LoadBytes("bad.yaml", []byte(tt.src), loader.Options{}); err == nil {
				t.Fatalf("the loader accepts it; the table is wrong:\n%s", tt.src)
			}
			inst, err := instance([]byte(tt.src))
			if err != nil {
				t.Fatalf("YAML: %v", err)
			}
			if err := s.Validate(inst); err == nil {
				t.Errorf("schema accepts what the loader rejects:\n%s", tt.src)
			}
		})
	}
}
