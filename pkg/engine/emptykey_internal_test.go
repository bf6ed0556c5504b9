package engine

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
)

// A plan notes the file's topic bindings with the empty key where the
// broker routes them with 4.3.0's topic binding index, which delivers to
// them every message published with an empty routing key to another topic
// exchange: from the feature flags the broker reports (v4 enabled, v5
// not), else from its version (4.3.0). 4.3.6 with both flags (a new node,
// the project's broker) and the indexes before 4.3 do not leak.
func TestNoteEmptyKeyTopicBindings(t *testing.T) {
	t.Parallel()
	const file = `version: 1
vhosts:
  v:
    exchanges:
      t: { type: topic }
      d: { type: direct }
    queues:
      empty: {}
      keyed: {}
      direct: {}
    bindings:
      - { source: t, destination: empty, routing_key: "" }
      - { source: t, destination: keyed, routing_key: "a.#" }
      - { source: d, destination: direct, routing_key: "" }
`
	desired, err := loader.LoadBytes("f.yaml", []byte(file), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const flags43 = `[{"name":"topic_binding_projection_v4","state":"enabled"},{"name":"topic_binding_projection_v5","state":"%s"}]`
	for _, tc := range []struct {
		name, version, flags string // flags "": none reported (404)
		want                 string // in the note; "" for none
	}{
		{"4.3.0, flags not reported", "4.3.0", "", "upgrade to RabbitMQ 4.3.1 or later and enable feature flag topic_binding_projection_v5"},
		{"4.3.0, index v4", "4.3.0", `[{"name":"topic_binding_projection_v4","state":"enabled"}]`, "upgrade to RabbitMQ 4.3.1 or later"},
		{"4.3.0 upgraded from 4.2, index v3", "4.3.0", `[{"name":"topic_binding_projection_v4","state":"disabled"}]`, ""},
		{"4.3.6, v5 enabled", "4.3.6", strings.Replace(flags43, "%s", "enabled", 1), ""},
		{"4.3.6, v5 not enabled", "4.3.6", strings.Replace(flags43, "%s", "disabled", 1), "enable feature flag topic_binding_projection_v5 once every node runs 4.3.1 or later"},
		{"4.3.6, flags not reported", "4.3.6", "", ""},
		{"4.0.5", "4.0.5", `[]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAPI(t, tc.version, "rabbit@a", func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path == "/api/feature-flags" && tc.flags != "" {
					_, _ = w.Write([]byte(tc.flags))
					return true
				}
				return false
			})
			if _, err := c.ReadFacts(context.Background()); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			notesTo(c, &stderr).noteEmptyKeyTopicBindings(desired)
			note := stderr.String()
			if tc.want == "" {
				if note != "" {
					t.Errorf("RabbitMQ %s: a note where the broker does not leak:\n%s", tc.version, note)
				}
				return
			}
			if strings.Count(note, "\n") != 1 || !strings.Contains(note, `topic binding from exchange "t" to queue "empty" in vhost "v" has the empty routing key`) ||
				!strings.Contains(note, "also receives every message published with an empty routing key to any other topic exchange") ||
				!strings.Contains(note, tc.want) || strings.Contains(note, `"keyed"`) || strings.Contains(note, `"direct"`) {
				t.Errorf("RabbitMQ %s: note\n%s\nwant one naming only the empty-key topic binding, with %q", tc.version, note, tc.want)
			}
		})
	}
}
