package broker_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestDefinitionsReadMatchesLists reads one vhost three ways: ReadTopology
// as an administrator (from the vhost's definitions export on RabbitMQ 4.3,
// which streams it; from the lists on 4.0 and 3.10, where the export is the
// slower read), ReadState as the same administrator (always the lists: the
// export has no queue statistics) and ReadTopology as a user with the
// management tag only (the lists: the export needs the administrator tag).
// All three give the same topology and the same fingerprint, which a saved
// plan compares. The vhost holds what the export lacks or holds
// differently on 4.3: an internal exchange (left out of it), an
// exchange-to-exchange binding, bindings with arguments, a policy and an
// operator policy (a runtime parameter there), queues of every type, an
// exclusive queue with a binding (the queue left out, the binding kept)
// and a server-named queue that is not exclusive, both of which mqctl
// never manages.
func TestDefinitionsReadMatchesLists(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t)
	admin := connect(t, b)
	v := sample(vh, "mqctl test "+t.Name()) // the description testbroker gave the vhost
	testbroker.Declare(t, admin, vh, v)

	// An exclusive queue, bound, and a server-named one that is not
	// exclusive, bound too: held by this connection until the test ends.
	conn, err := amqp.Dial(b.AMQPURL(vh))
	if err != nil {
		t.Fatalf("AMQP dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	classic := amqp.Table{"x-queue-type": "classic"}
	excl, err := ch.QueueDeclare("exclusive.one", false, true, true, false, classic)
	if err != nil {
		t.Fatal(err)
	}
	named, err := ch.QueueDeclare("", true, false, false, false, classic)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{excl.Name, named.Name} {
		if err := ch.QueueBind(q, "order.#", "orders", false, nil); err != nil {
			t.Fatal(err)
		}
	}

	user, pass := b.User(t, "management")
	b.Permit(t, user, vh)
	mgmt, err := broker.Connect(t.Context(), broker.Config{Server: b.URL, Username: user, Password: pass})
	if err != nil {
		t.Fatal(err)
	}

	read := func(c *broker.Client, stats bool) (*topology.Vhost, *broker.Live) {
		t.Helper()
		f := c.ReadTopology
		if stats {
			f = c.ReadState
		}
		top, live, err := f(t.Context(), []string{vh})
		if err != nil {
			t.Fatal(err)
		}
		if top.Vhosts[vh] == nil {
			t.Fatalf("vhost %s not read", vh)
		}
		return top.Vhosts[vh], live
	}
	fromDefs, liveDefs := read(admin, false)
	fromLists, liveLists := read(admin, true)
	fromUser, liveUser := read(mgmt, false)

	// Where each read came from, per version: measured quicker (see
	// broker.readSource) and readable by the user.
	wantSource := broker.SourceLists
	if b.Version().AtLeast(4, 3) {
		wantSource = broker.SourceDefinitions
	}
	for _, r := range []struct {
		who, got, want string
	}{
		{"ReadTopology as administrator", liveDefs.Source, wantSource},
		{"ReadState as administrator", liveLists.Source, broker.SourceLists},
		{"ReadTopology as management user", liveUser.Source, broker.SourceLists},
	} {
		if r.got != r.want {
			t.Errorf("RabbitMQ %s, %s: Source = %q, want %q", b.Version(), r.who, r.got, r.want)
		}
	}

	// Every read holds the sample as declared, and nothing else (mqctl
	// declared no ownership record here).
	for _, r := range []struct {
		name string
		got  *topology.Vhost
		live *broker.Live
	}{{"definitions", fromDefs, liveDefs}, {"lists", fromLists, liveLists}, {"management user", fromUser, liveUser}} {
		if diff := cmp.Diff(v, r.got, cmpTopology); diff != "" {
			t.Errorf("%s read (source %s) vs the sample declared (-declared +read):\n%s", r.name, r.live.Source, diff)
		}
		if len(r.live.Unread[vh]) > 0 {
			t.Errorf("%s read: unread kinds %v", r.name, r.live.Unread[vh])
		}
	}
	if diff := cmp.Diff(fromLists, fromDefs, cmpTopology); diff != "" {
		t.Errorf("lists vs definitions (-lists +definitions):\n%s", diff)
	}
	if liveDefs.Fingerprint != liveLists.Fingerprint || liveUser.Fingerprint != liveLists.Fingerprint {
		t.Errorf("fingerprints differ: %s (ReadTopology, %s), %s (lists), %s (management user)",
			liveDefs.Fingerprint, liveDefs.Source, liveLists.Fingerprint, liveUser.Fingerprint)
	}

	// What the read from the definitions does not record: the properties
	// keys, which ListPropertiesKeys gives as the lists do.
	keys, err := admin.ListPropertiesKeys(t.Context(), vh)
	if err != nil {
		t.Fatal(err)
	}
	for _, bd := range fromLists.Bindings {
		want, ok := liveLists.PropertiesKey(vh, bd)
		if !ok || keys[bd.Key()] != want {
			t.Errorf("binding %s: ListPropertiesKeys says %q, the lists %q (%v)", bd.Key(), keys[bd.Key()], want, ok)
		}
		if _, ok := liveDefs.PropertiesKey(vh, bd); ok && liveDefs.Source == broker.SourceDefinitions {
			t.Errorf("binding %s: a properties_key from the definitions export, which has none", bd.Key())
		}
	}

	// The export itself, as the read relies on it: refused to the
	// management user (401 "Not administrator user": forbidden, never
	// absent); on 4.3 without the internal exchange and the exclusive
	// queue, but with the exclusive queue's binding.
	var doc json.RawMessage
	if err := mgmt.GetJSON(t.Context(), &doc, "read definitions", vh, "definitions", vh); !errors.Is(err, broker.ErrForbidden) || errors.Is(err, broker.ErrNotFound) {
		t.Errorf("the definitions export as a management user: %v, want a refusal (ErrForbidden)", err)
	}
	var export struct {
		Exchanges []struct{ Name string } `json:"exchanges"`
		Queues    []struct{ Name string } `json:"queues"`
		Bindings  []struct {
			Source, Destination string
		} `json:"bindings"`
	}
	if err := json.Unmarshal(b.GetAPI(t, "definitions/"+url.PathEscape(vh)), &export); err != nil {
		t.Fatal(err)
	}
	has := func(names []string, n string) bool { return slices.Contains(names, n) }
	var xs, qs, dests []string
	for _, x := range export.Exchanges {
		xs = append(xs, x.Name)
	}
	for _, q := range export.Queues {
		qs = append(qs, q.Name)
	}
	for _, bd := range export.Bindings {
		dests = append(dests, bd.Destination)
	}
	if has(qs, excl.Name) {
		t.Errorf("RabbitMQ %s exports the exclusive queue %s", b.Version(), excl.Name)
	}
	if !has(qs, named.Name) {
		t.Errorf("RabbitMQ %s leaves the server-named durable queue %s out of its export: %v", b.Version(), named.Name, qs)
	}
	if b.Version().AtLeast(4, 3) {
		if has(xs, "orders.internal") {
			t.Errorf("RabbitMQ %s exports the internal exchange orders.internal: the read takes exchanges from their listing for it", b.Version())
		}
		if !has(dests, excl.Name) {
			t.Errorf("RabbitMQ %s leaves the exclusive queue's binding out of its export: definitions.LiveVhost.Export drops it for nothing", b.Version())
		}
	}
}
