package broker

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// export43 is what RabbitMQ 4.3.6 answers for the vhost of lists4x: the
// internal exchange events left out, the exclusive queues left out with
// one of their bindings kept, operator policies as runtime parameters.
const export43 = `{"description":"","metadata":{"description":"team v","tags":["mqctl"],"default_queue_type":"quorum"},
  "rabbitmq_version":"4.3.6","limits":{},"exchanges":[],
  "parameters":[{"component":"operator_policy","name":"cap","value":{"apply-to":"quorum_queues","definition":{"delivery-limit":50},"pattern":".*","priority":3}}],
  "policies":[{"apply-to":"queues","definition":{"message-ttl":60000.0,"max-length-bytes":9007199254740993},"name":"ttl","pattern":".*","priority":0}],
  "queues":[{"arguments":{"x-queue-type":"classic"},"auto_delete":false,"durable":true,"name":"plain","type":"classic"},
    {"arguments":{"x-queue-type":"quorum","x-delivery-limit":20},"auto_delete":false,"durable":true,"name":"votes","type":"quorum"}],
  "bindings":[{"arguments":{},"destination":"plain","destination_type":"queue","routing_key":"a.*","source":"events"},
    {"arguments":{},"destination":"mine-only","destination_type":"queue","routing_key":"b","source":"events"}]}`

// versionBroker serves lists4x and export43 as RabbitMQ version does to a
// user with tags; definitions, when not "", is the answer to GET
// /api/definitions/v instead of export43 ("401 …" sends a 401).
func versionBroker(t *testing.T, version, tags, definitions string) (*Client, func() []string) {
	t.Helper()
	if definitions == "" {
		definitions = export43
	}
	answers := map[string]string{
		"/api/vhosts": `[{"name":"v","description":"","tags":[],"default_queue_type":"quorum",
			"metadata":{"description":"team v","tags":["mqctl"],"default_queue_type":"quorum"}}]`,
		"/api/definitions/v": definitions,
	}
	for k, v := range lists4x {
		answers[k] = v
	}
	return fakeVersionAsked(t, version, tags, answers)
}

// TestReadTopologySource: ReadTopology reads from the definitions export
// only where the broker streams it (4.3.3+), for an administrator; the
// lists otherwise, and ReadState always (the export has no statistics).
// Both give one topology and one fingerprint; a refusal of the export
// (the administrator tag taken away since the login) is never "absent":
// every vhost is read again from the lists.
func TestReadTopologySource(t *testing.T) {
	t.Parallel()
	lc, _ := versionBroker(t, "4.1.0", `["administrator"]`, "")
	lists, want, err := lc.ReadTopology(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	notAdmin := `401 {"error":"not_authorised","reason":"Not administrator user"}`
	for _, tc := range []struct {
		name, version, tags, definitions string
		stats                            bool
		source                           string
	}{
		{"4.3.6 administrator", "4.3.6", `["administrator"]`, "", false, SourceDefinitions},
		{"4.3.3 administrator", "4.3.3", `["administrator"]`, "", false, SourceDefinitions},
		{"4.3.2 administrator", "4.3.2", `["administrator"]`, "", false, SourceLists},
		{"4.0.5 administrator", "4.0.5", `["administrator"]`, "", false, SourceLists},
		{"4.3.6 with statistics", "4.3.6", `["administrator"]`, "", true, SourceLists},
		{"4.3.6 management user", "4.3.6", `["management"]`, "", false, SourceLists},
		{"4.3.6 administrator refused the export", "4.3.6", `["administrator"]`, notAdmin, false, SourceLists},
		{"unknown version", "dev", `["administrator"]`, "", false, SourceLists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, asked := versionBroker(t, tc.version, tc.tags, tc.definitions)
			read := c.ReadTopology
			if tc.stats {
				read = c.ReadState
			}
			top, live, err := read(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if live.Source != tc.source {
				t.Errorf("Source = %q, want %q (asked %v)", live.Source, tc.source, asked())
			}
			if live.Fingerprint != want.Fingerprint {
				t.Errorf("fingerprint %s, want the lists' %s; read %+v", live.Fingerprint, want.Fingerprint, top.Vhosts["v"])
			}
			usedExport := slices.Contains(asked(), "/api/definitions/v")
			listedQueues := slices.Contains(asked(), "/api/queues/v")
			if tc.source == SourceDefinitions && (listedQueues || len(live.PropertiesKeys["v"]) > 0) {
				t.Errorf("read from the definitions, yet listed the queues (%v) or has properties keys %v", listedQueues, live.PropertiesKeys)
			}
			if tc.definitions == "" && usedExport != (tc.source == SourceDefinitions) {
				t.Errorf("asked for the export: %v, with Source %q", usedExport, tc.source)
			}
		})
	}
	// The topology itself, read both ways.
	dc, _ := versionBroker(t, "4.3.6", `["administrator"]`, "")
	defs, live, err := dc.ReadTopology(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if live.Source != SourceDefinitions || want.Source != SourceLists {
		t.Fatalf("sources %q and %q", want.Source, live.Source)
	}
	if diff := cmp.Diff(lists, defs, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("lists vs definitions (-lists +definitions):\n%s", diff)
	}
}
