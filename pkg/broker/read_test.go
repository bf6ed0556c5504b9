package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// fakeBroker serves canned management API answers keyed by path (query
// ignored); an answer starting with "4xx " or "5xx " is sent with that status.
func fakeBroker(t *testing.T, tags string, answers map[string]string) *Client {
	t.Helper()
	c, _ := fakeBrokerAsked(t, tags, answers)
	return c
}

// fakeBrokerAsked is fakeBroker, and the escaped paths it was asked for.
func fakeBrokerAsked(t *testing.T, tags string, answers map[string]string) (*Client, func() []string) {
	t.Helper()
	return fakeVersionAsked(t, "4.1.0", tags, answers)
}

// fakeVersionAsked is fakeBrokerAsked for a broker of RabbitMQ version.
func fakeVersionAsked(t *testing.T, version, tags string, answers map[string]string) (*Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.EscapedPath())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/whoami":
			fmt.Fprintf(w, `{"name":"bob","tags":%s}`, tags)
			return
		case "/api/overview":
			fmt.Fprintf(w, `{"rabbitmq_version":%q}`, version)
			return
		}
		body, ok := answers[r.URL.EscapedPath()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"Object Not Found","reason":"Not Found"}`)
			return
		}
		if status, rest, ok := strings.Cut(body, " "); ok && len(status) == 3 && status[0] >= '4' && status[0] <= '5' {
			code, _ := strconv.Atoi(status)
			w.WriteHeader(code)
			body = rest
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := Connect(context.Background(), Config{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// RabbitMQ 4.x stores x-queue-type on every queue, reports a vhost default
// queue type, and lists operator policies of their own; exclusive and
// server-named queues, and the default exchange's bindings, are left out.
var lists4x = map[string]string{
	"/api/queues/v": `[
  {"name":"plain","type":"classic","messages":7,"consumers":1,"exclusive":false,"durable":true,"auto_delete":false,"arguments":{"x-queue-type":"classic"}},
  {"name":"votes","type":"quorum","exclusive":false,"durable":true,"auto_delete":false,"arguments":{"x-queue-type":"quorum","x-delivery-limit":20}},
  {"name":"amq.gen-Xyz","type":"classic","messages":0,"consumers":1,"exclusive":true,"durable":false,"auto_delete":true,"arguments":{}},
  {"name":"mine-only","type":"classic","messages":0,"consumers":1,"exclusive":true,"durable":false,"auto_delete":true,"arguments":{}}
]`,
	"/api/exchanges/v": `[
  {"name":"events","type":"topic","durable":true,"auto_delete":false,"internal":true,"arguments":{}},
  {"name":"amq.topic","type":"topic","durable":true,"auto_delete":false,"internal":false,"arguments":{}}
]`,
	// Few exchanges: their bindings are listed exchange by exchange.
	"/api/exchanges/v/events/bindings/source": `[
  {"source":"events","vhost":"v","destination":"plain","destination_type":"queue","routing_key":"a.*","arguments":{},"properties_key":"a.*"},
  {"source":"events","vhost":"v","destination":"mine-only","destination_type":"queue","routing_key":"b","arguments":{},"properties_key":"b"}
]`,
	"/api/exchanges/v/amq.topic/bindings/source": `[]`,
	"/api/policies/v": `[{"vhost":"v","name":"ttl","pattern":".*","apply-to":"queues","priority":0,
     "definition":{"message-ttl":60000.0,"max-length-bytes":9007199254740993}}]`,
	"/api/operator-policies/v": `[{"vhost":"v","name":"cap","pattern":".*","apply-to":"quorum_queues","priority":3,"definition":{"delivery-limit":50}}]`,
}

func TestReadState4xShapes(t *testing.T) {
	t.Parallel()
	answers := map[string]string{"/api/vhosts": `[{"name":"v","description":"","tags":[],"default_queue_type":"quorum",
			"metadata":{"description":"team v","tags":["mqctl"],"default_queue_type":"quorum"}}]`}
	for k, v := range lists4x {
		answers[k] = v
	}
	c := fakeBroker(t, `["administrator"]`, answers)
	top, live, err := c.ReadState(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := topology.NewVhost("v")
	want.Description = "team v"
	want.Tags = []string{"mqctl"} // from metadata, where the top level has none
	want.DefaultQueueType = "quorum"
	want.Exchanges["events"] = &topology.Exchange{Name: "events", Type: "topic", Durable: true, Internal: true}
	want.Queues["plain"] = &topology.Queue{Name: "plain", Type: "classic", Durable: true, Role: topology.RoleWorking}
	want.Queues["votes"] = &topology.Queue{Name: "votes", Type: "quorum", Durable: true, Role: topology.RoleWorking,
		Arguments: topology.Args{"x-delivery-limit": int64(20)}}
	want.Bindings = []*topology.Binding{{Source: "events", Destination: "plain", DestinationType: "queue", RoutingKey: "a.*"}}
	want.Policies["ttl"] = &topology.Policy{Name: "ttl", Pattern: ".*", ApplyTo: "queues",
		Definition: topology.Args{"message-ttl": int64(60000), "max-length-bytes": int64(9007199254740993)}}
	want.OperatorPolicies["cap"] = &topology.Policy{Name: "cap", Pattern: ".*", ApplyTo: "quorum_queues", Priority: 3,
		Definition: topology.Args{"delivery-limit": int64(50)}}
	if diff := cmp.Diff(want, top.Vhosts["v"], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ReadState (-want +got):\n%s", diff)
	}
	wantStats := map[string]QueueStats{"plain": {Messages: 7, Consumers: 1, Known: true}, "votes": {}}
	if diff := cmp.Diff(wantStats, live.Queues["v"]); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if got := live.Vhosts["v"]; got.DefaultQueueType != "quorum" || !cmp.Equal(got.Tags, []string{"mqctl"}) {
		t.Errorf("vhost info %+v", got)
	}
}

// RabbitMQ 3.10: no x-queue-type on queues declared without one, vhost
// default "undefined", operator policies as runtime parameters, tags as a
// comma-separated string on older brokers; a management user reads lists.
func TestReadState310Shapes(t *testing.T) {
	t.Parallel()
	answers := map[string]string{
		"/api/vhosts": `[{"name":"/","description":"Default virtual host","tags":"a,b","default_queue_type":"undefined"}]`,
		"/api/definitions/%2F": `{"queues":[{"name":"q","durable":true,"auto_delete":false,"arguments":{"x-message-ttl":1000}}],
			"exchanges":[],"bindings":[],"policies":[],
			"parameters":[{"vhost":"/","component":"operator_policy","name":"op","value":{"pattern":"^q$","definition":{"max-length":5},"priority":0,"apply-to":"queues"}}]}`,
		"/api/queues/%2F":            `[{"name":"q","type":"classic","messages":0,"consumers":0,"exclusive":false,"durable":true,"auto_delete":false,"arguments":{"x-message-ttl":1000}}]`,
		"/api/exchanges/%2F":         `[{"name":"","type":"direct","durable":true,"auto_delete":false,"internal":false,"arguments":{}}]`,
		"/api/bindings/%2F":          `[{"source":"","vhost":"/","destination":"q","destination_type":"queue","routing_key":"q","arguments":{},"properties_key":"q"}]`,
		"/api/policies/%2F":          `[]`,
		"/api/operator-policies/%2F": `[{"vhost":"/","name":"op","pattern":"^q$","apply-to":"queues","definition":{"max-length":5},"priority":0}]`,
	}
	want := topology.NewVhost("/")
	want.Description = "Default virtual host"
	want.Tags = []string{"a", "b"} // 3.10's comma-separated string
	want.Queues["q"] = &topology.Queue{Name: "q", Type: "classic", Durable: true, Role: topology.RoleWorking,
		Arguments: topology.Args{"x-message-ttl": int64(1000)}}
	want.OperatorPolicies["op"] = &topology.Policy{Name: "op", Pattern: "^q$", ApplyTo: "queues",
		Definition: topology.Args{"max-length": int64(5)}}

	var prints []string
	for _, tags := range []string{`["administrator"]`, `"management"`} {
		t.Run(tags, func(t *testing.T) {
			c := fakeBroker(t, tags, answers)
			top, live, err := c.ReadState(context.Background(), []string{"/"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, top.Vhosts["/"], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ReadState (-want +got):\n%s", diff)
			}
			if got := live.Vhosts["/"].Tags; !cmp.Equal(got, []string{"a", "b"}) {
				t.Errorf("tags %v", got)
			}
			prints = append(prints, live.Fingerprint)
		})
	}
	if len(prints) == 2 && prints[0] != prints[1] {
		t.Errorf("the two read paths fingerprint differently: %v", prints)
	}
}

func TestReadStateNotesUnreadOperatorPolicies(t *testing.T) {
	t.Parallel()
	c := fakeBroker(t, `["management"]`, map[string]string{
		"/api/vhosts":              `[{"name":"v"}]`,
		"/api/queues/v":            `[]`,
		"/api/exchanges/v":         `[]`,
		"/api/bindings/v":          `[]`,
		"/api/policies/v":          `[]`,
		"/api/operator-policies/v": "401 " + `{"error":"not_authorised","reason":"Not administrator user"}`,
	})
	_, live, err := c.ReadState(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	u := live.Unread["v"]
	if len(u) != 1 || u[0].Kind != kind.OperatorPolicy || !strings.Contains(u[0].Reason, `list operator policies of vhost "v": user "guest" may not do this`) ||
		!strings.Contains(u[0].Reason, "needs the administrator tag") {
		t.Errorf("Unread = %+v, want operator policies, with the broker's refusal as the reason", u)
	}
}

// A read that finds nothing in a vhost says whether the vhost is there: an
// administrator asks the vhost itself, anyone else the listing, where a
// vhost deleted while RabbitMQ 3.10 built it is [] (CI's 3.10.8 leg saw
// a missing vhost reported as a missing binding when that [] failed the
// listing).
func TestMissingVhostToldFromMissingObject(t *testing.T) {
	t.Parallel()
	bd := &topology.Binding{Source: "a", Destination: "b", DestinationType: topology.DestQueue}
	for _, tc := range []struct {
		tags   string
		listed bool // asks GET /api/vhosts
	}{
		{`["administrator"]`, false},
		{`["management"]`, true},
	} {
		c, asked := fakeBrokerAsked(t, tc.tags, map[string]string{
			"/api/vhosts":                `[[], {"name":"v"}, []]`,
			"/api/vhosts/v":              `{"name":"v"}`,
			"/api/bindings/v/e/a/q/b":    `[]`,
			"/api/bindings/gone/e/a/q/b": `[]`,
		})
		_, err := c.BindingPropertiesKey(context.Background(), "gone", bd)
		if !errors.Is(err, ErrVhostNotFound) {
			t.Errorf("%s, vhost gone: %v, want ErrVhostNotFound", tc.tags, err)
		}
		_, err = c.BindingPropertiesKey(context.Background(), "v", bd)
		if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrVhostNotFound) {
			t.Errorf("%s, binding gone: %v, want ErrNotFound, not ErrVhostNotFound", tc.tags, err)
		}
		if got := slices.Contains(asked(), "/api/vhosts"); got != tc.listed {
			t.Errorf("%s: asked GET /api/vhosts %v, want %v (asked %v)", tc.tags, got, tc.listed, asked())
		}
	}
}

// An object deleted while RabbitMQ builds a list comes out as [] in it;
// reading skips it instead of failing the whole plan.
func TestReadStateSkipsVanishedListItems(t *testing.T) {
	t.Parallel()
	c := fakeBroker(t, `["management"]`, map[string]string{
		"/api/vhosts":                        `[[], {"name":"v"}, []]`,
		"/api/queues/v":                      `[{"name":"q","type":"classic","durable":true,"arguments":{}}, []]`,
		"/api/exchanges/v":                   `[[], {"name":"x","type":"fanout","durable":true,"arguments":{}}]`,
		"/api/exchanges/v/x/bindings/source": `[{"source":"x","destination":"q","destination_type":"queue","routing_key":"","arguments":{},"properties_key":"~"}, []]`,
		"/api/policies/v":                    `[]`,
		"/api/operator-policies/v":           `[]`,
	})
	top, _, err := c.ReadState(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	v := top.Vhosts["v"]
	if v == nil || len(top.Vhosts) != 1 {
		t.Fatalf("vhosts %v, want only v", top.VhostNames())
	}
	if v.Queues["q"] == nil || v.Exchanges["x"] == nil || len(v.Bindings) != 1 {
		t.Errorf("read %v %v %d bindings, want queue q, exchange x and one binding", v.QueueNames(), v.ExchangeNames(), len(v.Bindings))
	}
}

// A definitions answer cut short is a transport failure (tried again), not
// a malformed answer.
func TestDefinitionsCutShort(t *testing.T) {
	t.Parallel()
	for _, body := range []string{``, `{"queues":[{"name":"a"},`, `{"queues":[]`} {
		var d definitionsJSON
		dec := json.NewDecoder(strings.NewReader(body))
		if err := d.decodeStream(dec); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q: err %v, want io.ErrUnexpectedEOF", body, err)
		}
	}
}

// The bindings of a vhost with few exchanges are listed exchange by
// exchange (an exchange deleted meanwhile has none); with more than
// bindingsBySource, with one listing of the vhost, whose implicit
// default-exchange bindings are left out.
func TestReadStateBindingsBySource(t *testing.T) {
	t.Parallel()
	binding := func(src, dest string) string {
		return fmt.Sprintf(`{"source":%q,"vhost":"v","destination":%q,"destination_type":"queue","routing_key":"k","arguments":{},"properties_key":"k"}`, src, dest)
	}
	exchanges := func(n int) string {
		var xs []string
		for i := range n {
			xs = append(xs, fmt.Sprintf(`{"name":"x%02d","type":"direct","durable":true,"arguments":{}}`, i))
		}
		return "[" + strings.Join(append(xs, `{"name":"","type":"direct","durable":true,"arguments":{}}`), ",") + "]"
	}
	base := map[string]string{
		"/api/vhosts":              `[{"name":"v"}]`,
		"/api/vhosts/v":            `{"name":"v"}`,
		"/api/queues/v":            `[{"name":"q","type":"classic","durable":true,"arguments":{}}]`,
		"/api/policies/v":          `[]`,
		"/api/operator-policies/v": `[]`,
	}
	for _, tt := range []struct {
		name      string
		answers   map[string]string
		want      []string // sources of the bindings read
		notListed string   // a path the read must not ask for
	}{
		{
			name: "two exchanges, one deleted meanwhile",
			answers: map[string]string{
				"/api/exchanges/v":                     exchanges(2),
				"/api/exchanges/v/x00/bindings/source": "[" + binding("x00", "q") + "]",
				// x01: 404, gone since the exchange listing.
			},
			want:      []string{"x00"},
			notListed: "/api/bindings/v",
		},
		{
			name: "more exchanges than bindingsBySource",
			answers: map[string]string{
				"/api/exchanges/v": exchanges(bindingsBySource + 1),
				"/api/bindings/v":  "[" + binding("", "q") + "," + binding("x07", "q") + "," + binding("x31", "q") + "]",
			},
			want:      []string{"x07", "x31"},
			notListed: "/api/exchanges/v/x00/bindings/source",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			answers := map[string]string{}
			for k, v := range base {
				answers[k] = v
			}
			for k, v := range tt.answers {
				answers[k] = v
			}
			c, asked := fakeBrokerAsked(t, `["management"]`, answers)
			top, live, err := c.ReadState(context.Background(), []string{"v"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range top.Vhosts["v"].Bindings {
				got = append(got, b.Source)
				if k, _ := live.PropertiesKey("v", b); k != "k" {
					t.Errorf("binding from %s: properties_key %q, want k", b.Source, k)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("bindings from %v, want %v", got, tt.want)
			}
			if slices.Contains(asked(), tt.notListed) {
				t.Errorf("asked for %s: %v", tt.notListed, asked())
			}
		})
	}
}

// A queue's internal_owner as 4.1+ reports it: false (none), or the
// owner's resource; older versions leave the column out (nil).
func TestOwnerOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""},
		{false, ""},
		{"false", ""},
		{map[string]any{"name": "fed.x", "kind": "exchange", "virtual_host": "v"}, `exchange "fed.x"`},
		{map[string]any{"name": "owner"}, `"owner"`},
		{map[string]any{}, "a plugin"},
	} {
		if got := ownerOf(tc.in); got != tc.want {
			t.Errorf("ownerOf(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Where a plan reads each vhost from its definitions export (RabbitMQ
// 4.3.3+, an administrator), that read begins beside the vhost listing,
// not after it: here the listing answers only once the export has been
// asked for (a read after the listing never asks, and the listing gives
// up after 5 s). The vhost's default queue type, which only the listing
// gives, still types the export's queues that declare none; a vhost the
// listing lacks is absent, even though its export answered.
func TestDefinitionsReadBesideTheVhostListing(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/whoami":
			fmt.Fprint(w, `{"name":"bob","tags":["administrator"]}`)
		case "/api/overview":
			fmt.Fprint(w, `{"rabbitmq_version":"4.3.6"}`)
		case "/api/vhosts":
			select {
			case <-asked:
			case <-time.After(5 * time.Second):
			}
			fmt.Fprint(w, `[{"name":"v","metadata":{"default_queue_type":"quorum"}}]`)
		case "/api/definitions/v", "/api/definitions/gone":
			once.Do(func() { close(asked) })
			fmt.Fprint(w, `{"queues":[{"name":"q","durable":true,"auto_delete":false,"arguments":{}}],"exchanges":[],"bindings":[],"policies":[]}`)
		case "/api/exchanges/v", "/api/exchanges/gone":
			fmt.Fprint(w, `[]`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"Object Not Found","reason":"Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c, err := Connect(ctx, Config{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	top, live, err := c.ReadTopology(ctx, []string{"v", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited >= 5*time.Second {
		t.Errorf("the vhost listing waited %v for the export: the export was asked for only after it", waited)
	}
	if live.Source != SourceDefinitions {
		t.Errorf("read from %q, want the definitions export", live.Source)
	}
	if got := slices.Sorted(maps.Keys(top.Vhosts)); !slices.Equal(got, []string{"v"}) {
		t.Fatalf("vhosts read %v, want [v] (gone is not listed)", got)
	}
	if q := top.Vhosts["v"].Queues["q"]; q == nil || q.Type != topology.QueueQuorum {
		t.Errorf("queue q read as %+v, want of the vhost's default type, quorum", q)
	}
}
