package definitions

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/topology"
)

func decodeDoc(t *testing.T, src string) *Document {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	doc := new(Document)
	if err := doc.DecodeStream(dec); err != nil {
		t.Fatalf("DecodeStream: %v", err)
	}
	return doc
}

func decodeQueues(t *testing.T, src string) []Queue {
	t.Helper()
	if src == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	list, err := DecodeList[Queue](dec)
	if err != nil {
		t.Fatalf("DecodeList: %v", err)
	}
	return list
}

func working(q *topology.Queue) *topology.Queue { q.Role = topology.RoleWorking; return q }

// The live answers of RabbitMQ 4.0 and 3.10 map onto the model a plan
// compares with the file: a queue's type never appears among its
// arguments, what the broker builds in or keeps to one connection is left
// out, and 3.10's operator policies (runtime parameters) read like 4.0's.
func TestMapLive(t *testing.T) {
	tests := []struct {
		name   string
		vhost  LiveVhost
		defs   string // the definitions answer (or the lists' objects)
		listed string // the queue list answer; "" when not read
		want   func(v *topology.Vhost)
		keys   map[string]string // properties keys wanted; nil: not asked for
	}{
		{
			name:  "4.0 stores x-queue-type on every queue",
			vhost: LiveVhost{Name: "v"},
			defs: `{"queues":[
				{"name":"c","durable":true,"auto_delete":false,"arguments":{"x-queue-type":"classic"}},
				{"name":"q","durable":true,"auto_delete":false,"arguments":{"x-queue-type":"quorum","x-delivery-limit":20}},
				{"name":"s","durable":true,"auto_delete":false,"arguments":{"x-queue-type":"stream","x-max-age":"7D"}}]}`,
			listed: `[{"name":"c","type":"classic"},{"name":"q","type":"quorum"},{"name":"s","type":"stream"}]`,
			want: func(v *topology.Vhost) {
				v.Queues["c"] = working(&topology.Queue{Name: "c", Type: "classic", Durable: true})
				v.Queues["q"] = working(&topology.Queue{Name: "q", Type: "quorum", Durable: true, Arguments: topology.Args{"x-delivery-limit": int64(20)}})
				v.Queues["s"] = working(&topology.Queue{Name: "s", Type: "stream", Durable: true, Arguments: topology.Args{"x-max-age": "7D"}})
			},
		},
		{
			name:  "4.0 definitions report the type beside x-queue-type; a queue declared after the list takes the vhost default",
			vhost: LiveVhost{Name: "v", DefaultQueueType: "quorum"},
			defs: `{"queues":[
				{"name":"t","type":"stream","durable":true,"arguments":{}},
				{"name":"late","durable":true,"arguments":{}}]}`,
			listed: `[{"name":"t","type":"stream"}]`,
			want: func(v *topology.Vhost) {
				v.DefaultQueueType = "quorum"
				v.Queues["t"] = working(&topology.Queue{Name: "t", Type: "stream", Durable: true})
				v.Queues["late"] = working(&topology.Queue{Name: "late", Type: "quorum", Durable: true})
			},
		},
		{
			name:  "3.10 has x-queue-type only when given: the queue list's type, then classic",
			vhost: LiveVhost{Name: "/"},
			defs: `{"queues":[
				{"name":"plain","durable":true,"auto_delete":false,"arguments":{"x-message-ttl":1000}},
				{"name":"votes","durable":true,"auto_delete":false,"arguments":{"x-queue-type":"quorum"}},
				{"name":"unlisted","durable":false,"auto_delete":true,"arguments":{}}]}`,
			listed: `[{"name":"plain","type":"classic"},{"name":"votes","type":"quorum"}]`,
			want: func(v *topology.Vhost) {
				v.Queues["plain"] = working(&topology.Queue{Name: "plain", Type: "classic", Durable: true, Arguments: topology.Args{"x-message-ttl": int64(1000)}})
				v.Queues["votes"] = working(&topology.Queue{Name: "votes", Type: "quorum", Durable: true})
				v.Queues["unlisted"] = working(&topology.Queue{Name: "unlisted", Type: "classic", AutoDelete: true})
			},
		},
		{
			name:  "3.10 operator policies come as operator_policy runtime parameters; other parameters are not topology",
			vhost: LiveVhost{Name: "/"},
			defs: `{"parameters":[
				{"vhost":"/","component":"operator_policy","name":"op","value":{"pattern":"^q$","definition":{"max-length":5},"priority":0,"apply-to":"queues"}},
				{"vhost":"/","component":"shovel","name":"sh","value":{"src-uri":"amqp://"}}],
				"policies":[{"vhost":"/","name":"ttl","pattern":".*","priority":1,"definition":{"message-ttl":60000.0}}]}`,
			want: func(v *topology.Vhost) {
				v.OperatorPolicies["op"] = &topology.Policy{Name: "op", Pattern: "^q$", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(5)}}
				v.Policies["ttl"] = &topology.Policy{Name: "ttl", Pattern: ".*", ApplyTo: "all", Priority: 1, Definition: topology.Args{"message-ttl": int64(60000)}}
			},
		},
		{
			name:  "4.0 operator policies under their own key",
			vhost: LiveVhost{Name: "v"},
			defs:  `{"operator_policies":[{"vhost":"v","name":"cap","pattern":".*","apply-to":"quorum_queues","priority":3,"definition":{"delivery-limit":50}}]}`,
			want: func(v *topology.Vhost) {
				v.OperatorPolicies["cap"] = &topology.Policy{Name: "cap", Pattern: ".*", ApplyTo: "quorum_queues", Priority: 3, Definition: topology.Args{"delivery-limit": int64(50)}}
			},
		},
		{
			name:  "the definitions document has no exclusive flag: the queue list's drops the queue and its bindings",
			vhost: LiveVhost{Name: "v"},
			defs: `{"exchanges":[{"name":"x","type":"topic","durable":true,"arguments":{}}],
				"queues":[{"name":"mine","durable":false,"auto_delete":true,"arguments":{}},{"name":"q","durable":true,"arguments":{}}],
				"bindings":[
					{"source":"x","destination":"mine","destination_type":"queue","routing_key":"a","arguments":{}},
					{"source":"x","destination":"q","destination_type":"queue","routing_key":"a","arguments":{}}]}`,
			listed: `[{"name":"mine","type":"classic","exclusive":true},{"name":"q","type":"classic","exclusive":false}]`,
			want: func(v *topology.Vhost) {
				v.Exchanges["x"] = &topology.Exchange{Name: "x", Type: "topic", Durable: true}
				v.Queues["q"] = working(&topology.Queue{Name: "q", Type: "classic", Durable: true})
				v.Bindings = []*topology.Binding{{Source: "x", Destination: "q", DestinationType: "queue", RoutingKey: "a"}}
			},
		},
		{
			// As RabbitMQ 4.3.6 exports a vhost while a connection holds the
			// exclusive queue "mine" bound to x: the queue left out, its binding
			// kept; and a server-named queue that is not exclusive.
			name:  "4.3's export without the queue list: a binding to a queue the export leaves out goes with it",
			vhost: LiveVhost{Name: "v", Export: true},
			defs: `{"queues":[{"name":"q","type":"classic","durable":true,"arguments":{"x-queue-type":"classic"}},
					{"name":"amq.gen-Xyz","type":"classic","durable":true,"arguments":{"x-queue-type":"classic"}}],
				"bindings":[
					{"source":"x","destination":"mine","destination_type":"queue","routing_key":"a","arguments":{}},
					{"source":"x","destination":"amq.gen-Xyz","destination_type":"queue","routing_key":"a","arguments":{}},
					{"source":"x","destination":"q","destination_type":"queue","routing_key":"a","arguments":{}},
					{"source":"x","destination":"ix","destination_type":"exchange","routing_key":"a","arguments":{"k":"v"}}]}`,
			want: func(v *topology.Vhost) {
				v.Queues["q"] = working(&topology.Queue{Name: "q", Type: "classic", Durable: true})
				v.Bindings = []*topology.Binding{
					{Source: "x", Destination: "q", DestinationType: "queue", RoutingKey: "a"},
					{Source: "x", Destination: "ix", DestinationType: "exchange", RoutingKey: "a", Arguments: topology.Args{"k": "v"}},
				}
			},
		},
		{
			// Mapped as it is decoded, a binding comes before the queues
			// that say whether it stays.
			name:  "an export whose bindings come before its queues",
			vhost: LiveVhost{Name: "v", Export: true},
			defs: `{"bindings":[
					{"source":"x","destination":"mine","destination_type":"queue","routing_key":"a","arguments":{}},
					{"source":"x","destination":"q","destination_type":"queue","routing_key":"a","arguments":{}}],
				"queues":[{"name":"q","type":"classic","durable":true,"arguments":{"x-queue-type":"classic"}}]}`,
			want: func(v *topology.Vhost) {
				v.Queues["q"] = working(&topology.Queue{Name: "q", Type: "classic", Durable: true})
				v.Bindings = []*topology.Binding{{Source: "x", Destination: "q", DestinationType: "queue", RoutingKey: "a"}}
			},
		},
		{
			name:  "built-in exchanges, server-named queues and the default exchange's implicit bindings are left out",
			vhost: LiveVhost{Name: "v"},
			defs: `{"exchanges":[
					{"name":"","type":"direct","durable":true,"arguments":{}},
					{"name":"amq.topic","type":"topic","durable":true,"arguments":{}},
					{"name":"events","type":"fanout","durable":true,"internal":true,"arguments":{"alternate-exchange":"ae"}}],
				"queues":[{"name":"amq.gen-Xyz","durable":false,"exclusive":true,"arguments":{}},{"name":"q","durable":true,"arguments":{}}],
				"bindings":[
					{"source":"","destination":"q","destination_type":"queue","routing_key":"q","arguments":{},"properties_key":"q"},
					{"source":"events","destination":"amq.gen-Xyz","destination_type":"queue","routing_key":"","arguments":{}},
					{"source":"amq.topic","destination":"events","destination_type":"exchange","routing_key":"#","arguments":{"x-match":"all"},"properties_key":"%23~abc"}]}`,
			want: func(v *topology.Vhost) {
				v.Exchanges["events"] = &topology.Exchange{Name: "events", Type: "fanout", Durable: true, Internal: true, Arguments: topology.Args{"alternate-exchange": "ae"}}
				v.Queues["q"] = working(&topology.Queue{Name: "q", Type: "classic", Durable: true})
				v.Bindings = []*topology.Binding{{Source: "amq.topic", Destination: "events", DestinationType: "exchange", RoutingKey: "#", Arguments: topology.Args{"x-match": "all"}}}
			},
		},
		{
			name:  "the list path records each binding's properties_key",
			vhost: LiveVhost{Name: "v", PropertiesKeys: map[string]string{}},
			defs: `{"bindings":[
				{"source":"x","destination":"q","destination_type":"queue","routing_key":"k","arguments":{},"properties_key":"k"},
				{"source":"x","destination":"q","destination_type":"queue","routing_key":"k","arguments":{"a":1},"properties_key":"k~xyz"}]}`,
			want: func(v *topology.Vhost) {
				v.Bindings = []*topology.Binding{
					{Source: "x", Destination: "q", DestinationType: "queue", RoutingKey: "k"},
					{Source: "x", Destination: "q", DestinationType: "queue", RoutingKey: "k", Arguments: topology.Args{"a": int64(1)}},
				}
			},
			keys: map[string]string{
				(&topology.Binding{Source: "x", Destination: "q", DestinationType: "queue", RoutingKey: "k"}).Key():                                          "k",
				(&topology.Binding{Source: "x", Destination: "q", DestinationType: "queue", RoutingKey: "k", Arguments: topology.Args{"a": int64(1)}}).Key(): "k~xyz",
			},
		},
		{
			name:  "integers beyond 2^53 stay exact",
			vhost: LiveVhost{Name: "v", Description: "team v"},
			defs:  `{"policies":[{"name":"big","pattern":".*","apply-to":"queues","definition":{"max-length-bytes":9007199254740993}}]}`,
			want: func(v *topology.Vhost) {
				v.Description = "team v"
				v.Policies["big"] = &topology.Policy{Name: "big", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"max-length-bytes": int64(9007199254740993)}}
			},
		},
	}
	// Each case is read both ways: decoded whole then mapped (MapLive), and
	// mapped as it is decoded (DecodeReaderTo, then Finish), as a plan
	// reads an export.
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			name := tt.name
			if streamed {
				name += " (streamed)"
			}
			t.Run(name, func(t *testing.T) {
				testMapLive(t, tt.vhost, tt.defs, tt.listed, tt.want, tt.keys, streamed)
			})
		}
	}
}

// testMapLive maps defs (and the queue list listed) of vhost, whole or as
// it is decoded, and compares the vhost with the one wantOf builds.
func testMapLive(t *testing.T, vhost LiveVhost, defs, listed string, wantOf func(v *topology.Vhost), keys map[string]string, streamed bool) {
	lv := vhost
	if lv.PropertiesKeys != nil {
		lv.PropertiesKeys = map[string]string{}
	}
	lv.Listed = decodeQueues(t, listed)
	var (
		doc *Document
		got *topology.Vhost
		err error
	)
	if streamed {
		doc = new(Document)
		m := NewLiveMapper(lv)
		if err := doc.DecodeReaderTo(strings.NewReader(defs), m); err != nil {
			t.Fatalf("DecodeReaderTo: %v", err)
		}
		got, err = m.Finish(doc)
	} else {
		doc = decodeDoc(t, defs)
		got, err = MapLive(lv, doc)
	}
	if err != nil {
		t.Fatalf("MapLive: %v", err)
	}
	want := topology.NewVhost(lv.Name)
	wantOf(want)
	want.SortBindings()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("MapLive (-want +got):\n%s", diff)
	}
	if keys != nil {
		if diff := cmp.Diff(keys, lv.PropertiesKeys); diff != "" {
			t.Errorf("properties keys (-want +got):\n%s", diff)
		}
	}
	if len(doc.Queues)+len(doc.Exchanges)+len(doc.Bindings)+len(doc.Parameters) != 0 {
		t.Errorf("the document still holds objects after mapping")
	}
}

func TestMapLiveBadOperatorPolicyParameter(t *testing.T) {
	doc := decodeDoc(t, `{"parameters":[{"component":"operator_policy","name":"op","value":"not a policy"}]}`)
	_, err := MapLive(LiveVhost{Name: "v"}, doc)
	if err == nil || !strings.Contains(err.Error(), `read operator policy "op" of vhost "v"`) {
		t.Errorf("err %v, want one naming operator policy op of vhost v", err)
	}
}

// An object deleted while RabbitMQ builds a list comes out as [] in it;
// a list answer skips it rather than failing the read.
func TestDecodeList(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // queue names
		err       error    // wanted with errors.Is; nil: none
		failing   bool
	}{
		{name: "vanished objects are []", src: `[[], {"name":"a"}, [], {"name":"b"}]`, want: []string{"a", "b"}},
		{name: "null is an empty list", src: `null`},
		{name: "empty", src: `[]`},
		{name: "cut short", src: `[{"name":"a"},`, err: io.ErrUnexpectedEOF},
		{name: "nothing at all", src: ``, err: io.ErrUnexpectedEOF},
		{name: "not a list", src: `{"name":"a"}`, failing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := DecodeList[Queue](json.NewDecoder(strings.NewReader(tt.src)))
			switch {
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				return
			case tt.failing:
				if err == nil {
					t.Fatalf("no error for %s", tt.src)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			var names []string
			for _, q := range list {
				names = append(names, q.Name)
			}
			if diff := cmp.Diff(tt.want, names, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

// A definitions answer cut short is a transport failure (the broker's
// client tries again), not a malformed answer; keys the document may grow
// are read past.
func TestDocumentDecodeStream(t *testing.T) {
	for _, body := range []string{``, `{"queues":[{"name":"a"},`, `{"queues":[]`} {
		var d Document
		if err := d.DecodeStream(json.NewDecoder(strings.NewReader(body))); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q: err %v, want io.ErrUnexpectedEOF", body, err)
		}
	}
	d := decodeDoc(t, `{"rabbit_version":"4.0.5","users":[{"name":"u"}],"queues":[{"name":"a","arguments":null}],"limits":{"max-queues":1}}`)
	if len(d.Queues) != 1 || d.Queues[0].Name != "a" {
		t.Errorf("queues %+v, want queue a", d.Queues)
	}
}

// MapQueue is the one x-queue-type rule: the argument, the object's type,
// the fallbacks in order, classic.
func TestMapQueueType(t *testing.T) {
	tests := []struct {
		name      string
		q         Queue
		fallbacks []string
		want      string
		wantArgs  topology.Args
	}{
		{name: "argument wins", q: Queue{Type: "classic", Arguments: map[string]any{"x-queue-type": "quorum", "x-max-length": 5.0}}, fallbacks: []string{"stream"}, want: "quorum", wantArgs: topology.Args{"x-max-length": int64(5)}},
		{name: "object's type", q: Queue{Type: "stream"}, fallbacks: []string{"quorum"}, want: "stream"},
		{name: "first non-empty fallback", q: Queue{}, fallbacks: []string{"", "quorum", "stream"}, want: "quorum"},
		{name: "classic", q: Queue{Arguments: map[string]any{}}, want: "classic"},
		{name: "a non-string argument names no type and is dropped", q: Queue{Arguments: map[string]any{"x-queue-type": 1.0}}, want: "classic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MapQueue(tt.q, tt.fallbacks...)
			if got.Type != tt.want || !cmp.Equal(got.Arguments, tt.wantArgs, cmpopts.EquateEmpty()) {
				t.Errorf("type %q args %v, want %q %v", got.Type, got.Arguments, tt.want, tt.wantArgs)
			}
		})
	}
}

// A queue comes to the mapper alone (decoded from the stream, or taken out
// of the document): its arguments table becomes the model's, normalised
// where it is, not copied (the copies were 8 MB of garbage in the read of
// 50,000 queues).
func TestLiveMapperKeepsQueueArguments(t *testing.T) {
	args := map[string]any{"x-max-length": json.Number("5"), "x-queue-type": "quorum", "x-dead-letter-exchange": "dlx"}
	m := NewLiveMapper(LiveVhost{Name: "v"})
	m.Queue(Queue{Name: "q", Durable: true, Arguments: args})
	got := m.v.Queues["q"]
	if got == nil {
		t.Fatal("queue q not mapped")
	}
	if want := (topology.Args{"x-max-length": int64(5), "x-dead-letter-exchange": "dlx"}); !reflect.DeepEqual(got.Arguments, want) || got.Type != topology.QueueQuorum {
		t.Errorf("mapped as %s with %#v, want quorum with %#v", got.Type, got.Arguments, want)
	}
	if reflect.ValueOf(got.Arguments).UnsafePointer() != reflect.ValueOf(args).UnsafePointer() {
		t.Errorf("the queue's arguments were copied")
	}
	// MapQueue, for a queue whose table its caller keeps, copies it.
	kept := map[string]any{"x-max-length": json.Number("5")}
	if q := MapQueue(Queue{Name: "q", Arguments: kept}); reflect.ValueOf(q.Arguments).UnsafePointer() == reflect.ValueOf(kept).UnsafePointer() || kept["x-max-length"] != json.Number("5") {
		t.Errorf("MapQueue changed its caller's table: %#v", kept)
	}
}
