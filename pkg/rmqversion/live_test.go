package rmqversion_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// probeArgs are the queue arguments the live test declares on every queue
// type: each one some type refuses, and a few every type takes.
var probeArgs = map[string]any{
	"x-max-priority": 5, "x-queue-mode": "lazy", "x-queue-version": 2, "x-message-ttl": 1000,
	"x-expires": 100000, "x-max-length": 10, "x-max-length-bytes": 1000, "x-overflow": "reject-publish",
	"x-delivery-limit": 5, "x-single-active-consumer": true, "x-dead-letter-exchange": "dlx",
	"x-dead-letter-strategy": "at-most-once", "x-queue-master-locator": "client-local",
	"x-queue-leader-locator": "balanced", "x-max-age": "1D", "x-stream-max-segment-size-bytes": 1000000,
	"x-initial-cluster-size": 1, "x-quorum-initial-group-size": 1,
	// Quorum queues' own from 4.3.
	"x-consumer-timeout": 60000, "x-consumer-disconnected-timeout": 60000, "x-delayed-retry-type": "all",
	"x-delayed-retry-min": 100, "x-delayed-retry-max": 1000,
}

// TestRefusedQueueArgumentsAgainstBroker declares a queue of each type with
// each probe argument and checks that the broker refuses exactly what
// RefusesQueueArgument predicts for its version. The one difference between
// 3.10 and 4.0: a classic queue takes x-queue-leader-locator on 4.0 only.
func TestRefusedQueueArgumentsAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	n := 0
	for _, typ := range []string{topology.QueueClassic, topology.QueueQuorum, topology.QueueStream} {
		for arg, val := range probeArgs {
			n++
			name := fmt.Sprintf("probe-%d", n)
			resp, err := b.RH.DeclareQueue(vh, name, rabbithole.QueueSettings{Durable: true,
				Arguments: map[string]any{"x-queue-type": typ, arg: val}})
			refused := err != nil
			if resp != nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				refused = refused || resp.StatusCode == http.StatusBadRequest
			}
			if want := v.RefusesQueueArgument(typ, arg); refused != want {
				t.Errorf("RabbitMQ %s, %s queue with %s: broker refused=%v (%v), mqctl predicts refused=%v", v, typ, arg, refused, err, want)
			}
		}
	}
	// Values: x-queue-version 1 on a classic queue (4.3 removed v1).
	for _, val := range []int{1, 2} {
		n++
		resp, err := b.RH.DeclareQueue(vh, fmt.Sprintf("probe-%d", n), rabbithole.QueueSettings{Durable: true,
			Arguments: map[string]any{"x-queue-version": val}})
		refused := err != nil
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			refused = refused || resp.StatusCode == http.StatusBadRequest
		}
		if _, want := v.RefusesQueueArgumentValue(topology.QueueClassic, "x-queue-version", val); refused != want {
			t.Errorf("RabbitMQ %s, classic queue with x-queue-version %d: broker refused=%v (%v), mqctl predicts refused=%v", v, val, refused, err, want)
		}
	}
	// Values of quorum queues' consumer timeouts: 4.3.6 refuses a negative
	// one ({value_negative,-5}) and a string ("expected integer, got
	// longstr"); 4.0.5 and 3.10.8 store either unchecked; 0 is taken by all.
	for _, c := range []struct {
		arg  string
		val  any
		on43 bool // refused by 4.3.6
	}{
		{"x-consumer-timeout", -5, true},
		{"x-consumer-timeout", "abc", true},
		{"x-consumer-timeout", 0, false},
		{"x-consumer-disconnected-timeout", -1, true},
		{"x-consumer-disconnected-timeout", "abc", true},
	} {
		n++
		resp, err := b.RH.DeclareQueue(vh, fmt.Sprintf("probe-%d", n), rabbithole.QueueSettings{Durable: true,
			Arguments: map[string]any{"x-queue-type": topology.QueueQuorum, c.arg: c.val}})
		refused := err != nil
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			refused = refused || resp.StatusCode == http.StatusBadRequest
		}
		if want := c.on43 && v.AtLeast(4, 3); refused != want {
			t.Errorf("RabbitMQ %s, quorum queue with %s %v: broker refused=%v (%v), want refused=%v", v, c.arg, c.val, refused, err, want)
		}
		if _, predicted := v.RefusesQueueArgumentValue(topology.QueueQuorum, c.arg, topology.Normalize(c.val)); predicted != refused {
			t.Errorf("RabbitMQ %s, quorum queue with %s %v: broker refused=%v, mqctl predicts refused=%v", v, c.arg, c.val, refused, predicted)
		}
	}
	if got, want := v.RefusesQueueArgument(topology.QueueClassic, "x-queue-leader-locator"), !v.AtLeast(4, 0); got != want {
		t.Errorf("x-queue-leader-locator on a classic queue: 3.10 refuses it, 4.0 takes it; RabbitMQ %s predicted refused=%v", v, got)
	}
}

// TestRefusedPoliciesAgainstBroker: 4.0 refuses ha-* keys, 3.10 takes them;
// 3.10 refuses apply-to classic_queues, 4.0 takes it. Check predicts both.
func TestRefusedPoliciesAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	cases := []struct {
		name string
		p    topology.Policy
	}{
		{"mirroring", topology.Policy{Name: "mirror", Pattern: "^m$", ApplyTo: "queues", Definition: topology.Args{"ha-mode": "all"}}},
		{"apply-to by type", topology.Policy{Name: "cq", Pattern: "^c$", ApplyTo: "classic_queues", Definition: topology.Args{"max-length": 10}}},
		{"plain", topology.Policy{Name: "plain", Pattern: "^p$", ApplyTo: "queues", Definition: topology.Args{"max-length": 10}}},
		// Delayed retry in a policy: 4.3.1+ (4.3.6 takes it; 4.0.5 and
		// 3.10.8 refuse the keys they do not know).
		{"delayed retry", topology.Policy{Name: "dr", Pattern: "^d$", ApplyTo: "queues", Definition: topology.Args{"delayed-retry-type": "all", "delayed-retry-min": 100}}},
		// Values 4.3.1+ validates (rabbit_quorum_queue validate_policy/1):
		// each refused everywhere, 4.3.6 for its value.
		{"delayed retry max below min", topology.Policy{Name: "dr-max", Pattern: "^d1$", ApplyTo: "queues", Definition: topology.Args{"delayed-retry-type": "all", "delayed-retry-min": 1000, "delayed-retry-max": 50}}},
		{"delayed retry unknown type", topology.Policy{Name: "dr-type", Pattern: "^d2$", ApplyTo: "queues", Definition: topology.Args{"delayed-retry-type": "sometimes", "delayed-retry-min": 10}}},
		{"delayed retry type without min", topology.Policy{Name: "dr-min", Pattern: "^d3$", ApplyTo: "queues", Definition: topology.Args{"delayed-retry-type": "failed"}}},
		{"delayed retry disabled without min", topology.Policy{Name: "dr-off", Pattern: "^d4$", ApplyTo: "queues", Definition: topology.Args{"delayed-retry-type": "disabled"}}},
		// queue-master-locator: refused where the broker denies the
		// deprecated feature (4.3's default).
		{"queue master locator", topology.Policy{Name: "qml", Pattern: "^l$", ApplyTo: "queues", Definition: topology.Args{"queue-master-locator": "client-local"}}},
	}
	for _, c := range cases {
		resp, err := b.RH.PutPolicy(vh, c.p.Name, rabbithole.Policy{Pattern: c.p.Pattern, ApplyTo: c.p.ApplyTo,
			Definition: rabbithole.PolicyDefinition(c.p.Definition)})
		refused := err != nil
		if resp != nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		top := topology.New()
		vhost := topology.NewVhost(vh)
		p := c.p
		vhost.Policies[p.Name] = &p
		top.Vhosts[vh] = vhost
		predicted := v.Check(top) != nil
		if refused != predicted {
			t.Errorf("RabbitMQ %s, policy %s: broker refused=%v (%v), Check predicts refused=%v", v, c.name, refused, err, predicted)
		}
	}
}

// TestPolicyKeysAgainstBroker: the policy keys a version does not know
// and the keys an operator policy may not set make the broker refuse the
// whole policy (HTTP 400 "not recognised policy settings"). Each version's
// answer, measured: consumer-timeout in a policy: 3.10.8 refuses, 4.0.5
// and 4.3.6 take; consumer-disconnected-timeout in a policy: 3.10.8 and
// 4.0.5 refuse, 4.3.6 takes; in an operator policy consumer-timeout,
// consumer-disconnected-timeout and dead-letter-exchange are refused by
// all three, max-length taken by all three, overflow taken by 4.0.5 and
// 4.3.6 (3.12.7+), delayed-retry-min taken by 4.3.6 alone; x-queue-type,
// queue-type, max-priority, single-active-consumer and x- argument names
// (x-max-in-memory-length, x-message-ttl) refused by all three. Check
// predicts each for the broker of the run.
func TestPolicyKeysAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	is := func(major, minor int) bool { return v.AtLeast(major, minor) }
	cases := []struct {
		name  string
		k     kind.Kind
		def   topology.Args
		takes bool
	}{
		{"policy consumer-timeout", kind.Policy, topology.Args{"consumer-timeout": int64(60000)}, is(4, 0)},
		{"policy consumer-disconnected-timeout", kind.Policy, topology.Args{"consumer-disconnected-timeout": int64(60000)}, is(4, 3)},
		{"operator policy consumer-timeout", kind.OperatorPolicy, topology.Args{"consumer-timeout": int64(60000)}, false},
		{"operator policy consumer-disconnected-timeout", kind.OperatorPolicy, topology.Args{"consumer-disconnected-timeout": int64(60000)}, false},
		{"operator policy dead-letter-exchange", kind.OperatorPolicy, topology.Args{"dead-letter-exchange": "dlx"}, false},
		{"operator policy max-length", kind.OperatorPolicy, topology.Args{"max-length": int64(10)}, true},
		{"operator policy overflow", kind.OperatorPolicy, topology.Args{"overflow": "reject-publish"}, is(4, 0)},
		{"operator policy delayed-retry-min", kind.OperatorPolicy, topology.Args{"delayed-retry-min": int64(100)}, is(4, 3)},
		// What only a queue's declaration sets (NeverPolicyKey): refused by
		// all three, in a policy as in an operator policy.
		{"policy x-queue-type", kind.Policy, topology.Args{"x-queue-type": "quorum", "max-length": int64(10)}, false},
		{"policy queue-type", kind.Policy, topology.Args{"queue-type": "quorum"}, false},
		{"policy max-priority", kind.Policy, topology.Args{"max-priority": int64(10)}, false},
		{"policy single-active-consumer", kind.Policy, topology.Args{"single-active-consumer": true}, false},
		{"policy x-max-in-memory-length", kind.Policy, topology.Args{"x-max-in-memory-length": int64(1000)}, false},
		{"policy x-message-ttl", kind.Policy, topology.Args{"x-message-ttl": int64(1000)}, false},
		{"operator policy x-message-ttl", kind.OperatorPolicy, topology.Args{"x-message-ttl": int64(1000)}, false},
		// A key misspelt (MisspeltPolicyKey): refused whole by all three.
		{"policy max_length", kind.Policy, topology.Args{"max_length": int64(10)}, false},
		{"policy dead-letter-exchnage", kind.Policy, topology.Args{"dead-letter-exchnage": "dlx"}, false},
		{"operator policy max_length", kind.OperatorPolicy, topology.Args{"max_length": int64(10)}, false},
	}
	for i, c := range cases {
		name := fmt.Sprintf("probe-%d", i)
		body, _ := json.Marshal(map[string]any{"pattern": "^none$", "definition": c.def})
		spec, _ := kind.Of(c.k)
		status, msg := send(t, b, http.MethodPut, "/api/"+spec.APIPath+"/"+url.PathEscape(vh)+"/"+name, string(body))
		refused := status == http.StatusBadRequest
		if !refused && status >= 300 {
			t.Fatalf("%s: %d %s", c.name, status, msg)
		}
		if refused == c.takes {
			t.Errorf("RabbitMQ %s, %s: broker refused=%v (%s), want refused=%v", v, c.name, refused, msg, !c.takes)
		}
		top := topology.New()
		vhost := topology.NewVhost(vh)
		vhost.PoliciesOf(c.k)[name] = &topology.Policy{Name: name, Pattern: "^none$", ApplyTo: "all", Definition: c.def}
		top.Vhosts[vh] = vhost
		if predicted := v.Check(top) != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, %s: broker refused=%v, Check predicts refused=%v (%v)", v, c.name, refused, predicted, v.Check(top))
		}
	}
}

// TestRefusedSettingsAgainstBroker: 3.10 refuses a shovel's
// src-predeclared and dest-predeclared and an upstream's queue-type, and
// takes an upstream's ha-policy; 4.0 the other way round. Check predicts
// each, for the broker it runs against.
func TestRefusedSettingsAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	uri := "amqp:///" + vh
	cases := []struct {
		name      string
		component string
		k         kind.Kind
		value     map[string]any
		on40      bool // whether 4.0 takes it (3.10 does the opposite, but for the plain ones)
		plain     bool
	}{
		{"plain shovel", "shovel", kind.Shovel, map[string]any{"src-uri": uri, "src-queue": "a", "dest-uri": uri, "dest-queue": "b"}, true, true},
		{"shovel src-predeclared", "shovel", kind.Shovel, map[string]any{"src-uri": uri, "src-queue": "a", "dest-uri": uri, "dest-queue": "b", "src-predeclared": true}, true, false},
		{"shovel dest-predeclared", "shovel", kind.Shovel, map[string]any{"src-uri": uri, "src-queue": "a", "dest-uri": uri, "dest-queue": "b", "dest-predeclared": true}, true, false},
		{"plain upstream", "federation-upstream", kind.FederationUpstream, map[string]any{"uri": "amqp://localhost:1/none"}, true, true},
		{"upstream queue-type", "federation-upstream", kind.FederationUpstream, map[string]any{"uri": "amqp://localhost:1/none", "queue-type": "quorum"}, true, false},
		{"upstream ha-policy", "federation-upstream", kind.FederationUpstream, map[string]any{"uri": "amqp://localhost:1/none", "ha-policy": "all"}, false, false},
	}
	for i, c := range cases {
		name := fmt.Sprintf("probe-%d", i)
		body, _ := json.Marshal(map[string]any{"value": c.value})
		status, msg := send(t, b, http.MethodPut, "/api/parameters/"+c.component+"/"+url.PathEscape(vh)+"/"+name, string(body))
		refused := status == http.StatusBadRequest
		if !refused && status >= 300 {
			t.Fatalf("%s: %d %s", c.name, status, msg)
		}
		takes := c.on40 == v.AtLeast(4, 0) || c.plain
		if refused == takes {
			t.Errorf("RabbitMQ %s, %s: broker refused=%v (%s), want refused=%v", v, c.name, refused, msg, !takes)
		}
		top := topology.New()
		vhost := topology.NewVhost(vh)
		vhost.Items.Put(&topology.Item{Kind: c.k, Name: name, Settings: topology.Args(c.value).Normalized()})
		top.Vhosts[vh] = vhost
		if predicted := v.Check(top) != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, %s: broker refused=%v, Check predicts refused=%v", v, c.name, refused, predicted)
		}
	}
	// The shovel keys of 4.3 (src-consumer-name from 4.3.0,
	// src-delete-after-duration from 4.3.5): 4.3.6 takes them, 4.0.5 and
	// 3.10.8 refuse them ("Unrecognised terms").
	// A local shovel (4.2.0) and the amqp10 keys of 4.3 (src-predeclared
	// and dest-predeclared from 4.3.0, src-consumer-args from 4.3.3):
	// 4.3.6 takes them; 4.0.5 refuses local ("src-protocol" not one of
	// amqp10, amqp091) and 3.10.8 too, and both refuse the amqp10 keys.
	local := map[string]any{"src-protocol": "local", "src-uri": uri, "src-queue": "a", "dest-protocol": "local", "dest-uri": uri, "dest-queue": "b"}
	amqp10 := map[string]any{"src-protocol": "amqp10", "src-uri": uri, "src-address": "/queues/a", "dest-protocol": "amqp10", "dest-uri": uri, "dest-address": "/queues/b"}
	with := func(base map[string]any, extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, x := range base {
			out[k] = x
		}
		for k, x := range extra {
			out[k] = x
		}
		return out
	}
	for i, value := range []map[string]any{
		with(local, nil),
		with(local, map[string]any{"src-predeclared": true, "dest-predeclared": true}),
		with(amqp10, map[string]any{"src-predeclared": true}),
		with(amqp10, map[string]any{"dest-predeclared": true}),
		with(amqp10, map[string]any{"src-consumer-args": map[string]any{"x-priority": 1}}),
		with(map[string]any{"src-uri": uri, "src-queue": "a", "dest-uri": uri, "dest-queue": "b"}, map[string]any{"src-consumer-name": "replayer"}),
		with(map[string]any{"src-uri": uri, "src-queue": "a", "dest-uri": uri, "dest-queue": "b"}, map[string]any{"src-delete-after-duration": 600}),
	} {
		extra := value
		name := fmt.Sprintf("probe43-%d", i)
		body, _ := json.Marshal(map[string]any{"value": value})
		status, msg := send(t, b, http.MethodPut, "/api/parameters/shovel/"+url.PathEscape(vh)+"/"+name, string(body))
		refused := status == http.StatusBadRequest
		if value["src-protocol"] == "local" && !v.AtLeast(4, 2) {
			// 4.0.5 and 3.10.8 answer 500 with no body (their validation
			// has no clause for the protocol), and keep no shovel.
			if status != http.StatusInternalServerError {
				t.Errorf("RabbitMQ %s, a local shovel: %d %s, want 500", v, status, msg)
			}
			if got, _ := send(t, b, http.MethodGet, "/api/parameters/shovel/"+url.PathEscape(vh)+"/"+name, ""); got != http.StatusNotFound {
				t.Errorf("RabbitMQ %s, a local shovel answered 500, then read back: %d, want 404", v, got)
			}
			refused = true
		}
		if refused == v.AtLeast(4, 3) {
			t.Errorf("RabbitMQ %s, shovel %v: broker refused=%v (%d %s)", v, extra, refused, status, msg)
		}
		top := topology.New()
		vhost := top.Vhost(vh)
		vhost.Items.Put(&topology.Item{Kind: kind.Shovel, Name: name, Settings: topology.Args(value).Normalized()})
		if predicted := v.Check(top) != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, shovel %v: broker refused=%v, Check predicts refused=%v", v, extra, refused, predicted)
		}
	}
	// A shovel's src-queue-args and dest-queue-args: its validation checks
	// each value as a declare does (4.3.6: HTTP 400 "invalid arg
	// 'x-max-length' in src-queue-args: {value_negative,-1}"), not what
	// the queue's type refuses: 4.3.6 refuses the first five; 4.0.5 and
	// 3.10.8 take every one (their validation checks nothing).
	plain := map[string]any{"src-uri": uri, "src-queue": "a", "dest-uri": uri, "dest-queue": "b"}
	for i, extra := range []map[string]any{
		{"src-queue-args": map[string]any{"x-max-length": -1}},
		{"dest-queue-args": map[string]any{"x-expires": 0}},
		{"dest-queue-args": map[string]any{"x-overflow": "bogus"}},
		{"dest-queue-args": map[string]any{"x-message-ttl": "x"}},
		{"dest-queue-args": map[string]any{"x-queue-version": 1}},
		{"src-queue-args": map[string]any{"x-queue-type": "quorum", "x-max-priority": 10}},
		{"dest-queue-args": map[string]any{"x-max-length": 5}},
	} {
		value := with(plain, extra)
		name := fmt.Sprintf("probe-args-%d", i)
		body, _ := json.Marshal(map[string]any{"value": value})
		status, msg := send(t, b, http.MethodPut, "/api/parameters/shovel/"+url.PathEscape(vh)+"/"+name, string(body))
		refused := status == http.StatusBadRequest
		if !refused && status >= 300 {
			t.Fatalf("shovel %v: %d %s", extra, status, msg)
		}
		top := topology.New()
		top.Vhost(vh).Items.Put(&topology.Item{Kind: kind.Shovel, Name: name, Settings: topology.Args(value).Normalized()})
		if predicted := v.Check(top) != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, shovel %v: broker refused=%v (%s), Check predicts refused=%v", v, extra, refused, msg, predicted)
		}
		if !refused {
			send(t, b, http.MethodDelete, "/api/parameters/shovel/"+url.PathEscape(vh)+"/"+name, "")
		}
	}
	// amqp:/// is vhost "", not the default vhost: every version refuses
	// the shovel (user may not connect to vhost ""), and so does the
	// shovel's validation; amqp:// is the default vhost, taken.
	spec, _ := kind.Of(kind.Shovel)
	for i, src := range []string{"amqp:///", "amqp://"} {
		// From amq.direct: the shovel's own queue (server-named,
		// exclusive) goes with it.
		value := map[string]any{"src-uri": src, "src-exchange": "amq.direct", "src-exchange-key": vh, "dest-uri": uri, "dest-queue": "b"}
		body, _ := json.Marshal(map[string]any{"value": value})
		name := fmt.Sprintf("probe-uri-%d", i)
		status, msg := send(t, b, http.MethodPut, "/api/parameters/shovel/"+url.PathEscape(vh)+"/"+name, string(body))
		refused := status == http.StatusBadRequest
		if want := src == "amqp:///"; refused != want || (refused && !strings.Contains(msg, `may not connect to vhost \"\"`)) {
			t.Errorf("RabbitMQ %s, shovel with src-uri %s: broker refused=%v (%d %s), want %v", v, src, refused, status, msg, want)
		}
		if problems := spec.Item.Validate(value); (len(problems) > 0) != refused {
			t.Errorf("RabbitMQ %s, shovel with src-uri %s: broker refused=%v, validation says %v", v, src, refused, problems)
		}
		if !refused {
			send(t, b, http.MethodDelete, "/api/parameters/shovel/"+url.PathEscape(vh)+"/"+name, "")
		}
	}
}

// TestTopicHashLimitAgainstBroker: 4.3.5+ refuses a topic binding key
// with three '#' words, and takes two; 3.10 and 4.0 take both. Check
// predicts it for the broker of the run.
func TestTopicHashLimitAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	send(t, b, http.MethodPut, "/api/exchanges/"+url.PathEscape(vh)+"/t", `{"type":"topic","durable":true}`)
	send(t, b, http.MethodPut, "/api/queues/"+url.PathEscape(vh)+"/q", `{"durable":true}`)
	for _, key := range []string{"#.a.#", "#.a.#.b.#"} {
		status, msg := send(t, b, http.MethodPost, "/api/bindings/"+url.PathEscape(vh)+"/e/t/q/q", `{"routing_key":"`+key+`"}`)
		refused := status == http.StatusBadRequest
		top := topology.New()
		vhost := topology.NewVhost(vh)
		vhost.Exchanges["t"] = &topology.Exchange{Name: "t", Type: "topic", Durable: true}
		vhost.Queues["q"] = &topology.Queue{Name: "q", Durable: true}
		vhost.Bindings = []*topology.Binding{{Source: "t", Destination: "q", DestinationType: topology.DestQueue, RoutingKey: key}}
		top.Vhosts[vh] = vhost
		if predicted := v.Check(top) != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, topic binding key %q: broker refused=%v (%d %s), Check predicts refused=%v", v, key, refused, status, msg, predicted)
		}
		if want := v.AtLeast(4, 3) && rmqversion.TopicHashWords(key) > 2; refused != want {
			t.Errorf("RabbitMQ %s, topic binding key %q: refused=%v, want %v (4.3.5+ refuses three '#' words)", v, key, refused, want)
		}
	}
}

// send makes one management API request of b with a JSON body, and
// returns the answer's status and body.
func send(t *testing.T, b *testbroker.Broker, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, b.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(b.Username, b.Password)
	req.Header.Set("Content-Type", "application/json")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	msg, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(msg)
}

// TestLocalRandomBindingsAgainstBroker: from 4.0 an x-local-random
// exchange takes a binding with an empty key to a classic queue, and
// refuses one with a key, one to a quorum queue or a stream, and one to an
// exchange; Check predicts each for the broker of the run. 3.10 has no
// such exchange type: it refuses the exchange (HTTP 400 "unknown exchange
// type").
func TestLocalRandomBindingsAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	ev := url.PathEscape(vh)
	status, msg := send(t, b, http.MethodPut, "/api/exchanges/"+ev+"/rpc", `{"type":"x-local-random","durable":true}`)
	if !v.LocalRandomExchange() {
		if status != http.StatusBadRequest || !strings.Contains(msg, "unknown exchange type") {
			t.Errorf("RabbitMQ %s took an x-local-random exchange: %d %s", v, status, msg)
		}
		return
	}
	if status >= 300 {
		t.Fatalf("RabbitMQ %s refused an x-local-random exchange: %d %s", v, status, msg)
	}
	send(t, b, http.MethodPut, "/api/exchanges/"+ev+"/other", `{"type":"fanout","durable":true}`)
	queues := map[string]string{"cq": topology.QueueClassic, "qq": topology.QueueQuorum, "sq": topology.QueueStream}
	for name, typ := range queues {
		if status, msg := send(t, b, http.MethodPut, "/api/queues/"+ev+"/"+name, `{"durable":true,"arguments":{"x-queue-type":"`+typ+`"}}`); status >= 300 {
			t.Fatalf("declare %s: %d %s", name, status, msg)
		}
	}
	cases := []struct {
		name    string
		binding topology.Binding
		refused bool
	}{
		{"a classic queue", topology.Binding{Destination: "cq", DestinationType: topology.DestQueue}, false},
		{"a classic queue with arguments", topology.Binding{Destination: "cq", DestinationType: topology.DestQueue, Arguments: topology.Args{"a": int64(1)}}, false},
		{"a classic queue with a key", topology.Binding{Destination: "cq", DestinationType: topology.DestQueue, RoutingKey: "k"}, true},
		{"a quorum queue", topology.Binding{Destination: "qq", DestinationType: topology.DestQueue}, true},
		{"a stream", topology.Binding{Destination: "sq", DestinationType: topology.DestQueue}, true},
		{"an exchange", topology.Binding{Destination: "other", DestinationType: topology.DestExchange}, true},
	}
	for _, c := range cases {
		bd := c.binding
		bd.Source = "rpc"
		body := `{"routing_key":"` + bd.RoutingKey + `"`
		if len(bd.Arguments) > 0 {
			body += `,"arguments":{"a":1}`
		}
		status, msg := send(t, b, http.MethodPost, "/api/bindings/"+ev+"/e/rpc/"+map[string]string{topology.DestQueue: "q", topology.DestExchange: "e"}[bd.DestinationType]+"/"+bd.Destination, body+"}")
		refused := status == http.StatusBadRequest
		if refused != c.refused {
			t.Errorf("RabbitMQ %s, binding x-local-random to %s: refused=%v (%d %s), want %v", v, c.name, refused, status, msg, c.refused)
		}
		top := topology.New()
		vhost := topology.NewVhost(vh)
		vhost.Exchanges["rpc"] = &topology.Exchange{Name: "rpc", Type: "x-local-random", Durable: true}
		vhost.Exchanges["other"] = &topology.Exchange{Name: "other", Type: "fanout", Durable: true}
		for name, typ := range queues {
			vhost.Queues[name] = &topology.Queue{Name: name, Type: typ, Durable: true}
		}
		vhost.Bindings = []*topology.Binding{&bd}
		top.Vhosts[vh] = vhost
		err := v.Check(top)
		if predicted := err != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, binding x-local-random to %s: broker refused=%v (%d %s), Check predicts refused=%v (%v)", v, c.name, refused, status, msg, predicted, err)
		}
		if refused && err != nil {
			// The broker's words are in the refusal mqctl gives.
			var broker struct{ Reason string }
			_ = json.Unmarshal([]byte(msg), &broker)
			if !strings.Contains(err.Error(), broker.Reason) {
				t.Errorf("RabbitMQ %s, binding to %s: the broker says %q, mqctl's refusal does not: %v", v, c.name, broker.Reason, err)
			}
		}
	}
}

// TestTopicPermissionExchangeAgainstBroker: 4.3.2+ refuses a topic
// permission for an exchange the vhost does not have, and takes one for
// the default exchange; 4.0.5 and 3.10.8 take both. CheckTopicPermission-
// Exchanges predicts each for the broker of the run.
func TestTopicPermissionExchangeAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	user, _ := b.User(t)
	for _, x := range []string{"nosuch", ""} {
		status, msg := send(t, b, http.MethodPut, "/api/topic-permissions/"+url.PathEscape(vh)+"/"+url.PathEscape(user), `{"exchange":"`+x+`","write":".*","read":".*"}`)
		refused := status == http.StatusBadRequest
		if want := v.TopicPermissionNeedsExchange() && x != ""; refused != want {
			t.Errorf("RabbitMQ %s, topic permission for exchange %q: refused=%v (%d %s), want %v", v, x, refused, status, msg, want)
		}
		top := topology.New()
		vhost := top.Vhost(vh)
		vhost.Items.Put(&topology.Item{Kind: kind.TopicPermission, Name: user, Settings: topology.Args{x: map[string]any{"write": ".*"}}})
		if predicted := v.CheckTopicPermissionExchanges(top, nil) != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, topic permission for exchange %q: broker refused=%v, mqctl predicts refused=%v", v, x, refused, predicted)
		}
	}
}

// TestPatternLengthAgainstBroker: 4.3.2+ refuses a policy pattern and a
// permission regexp over 1024 bytes, and takes one of 1024; 4.0.5 and
// 3.10.8 take both. Check predicts each for the broker of the run.
func TestPatternLengthAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	user, _ := b.User(t)
	var names []string
	for i := range 120 {
		names = append(names, fmt.Sprintf("queue%03d", i))
	}
	long := "^(" + strings.Join(names, "|") + ")$"  // 1,083 bytes
	edge := "^q" + strings.Repeat("x?", 510) + "z$" // 1,024 bytes
	for _, expr := range []string{long, edge} {
		want := v.PatternLimit() && len(expr) > rmqversion.MaxPatternBytes
		body, _ := json.Marshal(map[string]any{"pattern": expr, "apply-to": "queues", "definition": map[string]any{"max-length": 5}})
		status, msg := send(t, b, http.MethodPut, "/api/policies/"+url.PathEscape(vh)+"/p", string(body))
		if refused := status == http.StatusBadRequest; refused != want {
			t.Errorf("RabbitMQ %s, a policy pattern of %d bytes: refused=%v (%d %s), want %v", v, len(expr), refused, status, msg, want)
		}
		body, _ = json.Marshal(map[string]any{"configure": expr, "write": "^$", "read": "^$"})
		status, msg = send(t, b, http.MethodPut, "/api/permissions/"+url.PathEscape(vh)+"/"+url.PathEscape(user), string(body))
		if refused := status == http.StatusBadRequest; refused != want {
			t.Errorf("RabbitMQ %s, a permission regexp of %d bytes: refused=%v (%d %s), want %v", v, len(expr), refused, status, msg, want)
		}
		top := topology.New()
		vhost := top.Vhost(vh)
		vhost.Policies["p"] = &topology.Policy{Name: "p", Pattern: expr, ApplyTo: "queues", Definition: topology.Args{"max-length": 5}}
		vhost.Items.Put(&topology.Item{Kind: kind.Permission, Name: user, Settings: topology.Args{"configure": expr, "write": "^$", "read": "^$"}})
		err := v.Check(top)
		if predicted := err != nil; predicted != want {
			t.Errorf("RabbitMQ %s, patterns of %d bytes: Check predicts refused=%v (%v), the broker %v", v, len(expr), predicted, err, want)
		}
		if want && (err == nil || strings.Count(err.Error(), "over 1024 bytes") != 2) {
			t.Errorf("RabbitMQ %s: want the policy and the permission refused: %v", v, err)
		}
	}
}

// TestDeclareArgsAgainstBroker: the values every declare checks
// (rabbit_amqqueue:declare_args/0) are judged by Check as the broker of
// the run judges them: each taken or refused alike, on every version
// (3.10 refuses the leader locator min-masters, 4.0 and 4.3 take it).
func TestDeclareArgsAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	for i, c := range []struct {
		typ, arg string
		val      any
	}{
		{"classic", "x-max-length", int64(-1)},
		{"classic", "x-max-length", int64(0)},
		{"classic", "x-max-length", "10"},
		{"classic", "x-max-length-bytes", int64(-5)},
		{"classic", "x-message-ttl", int64(-1)},
		{"classic", "x-message-ttl", int64(0)},
		{"classic", "x-message-ttl", int64(400_000_000_000)},
		{"classic", "x-expires", int64(0)},
		{"classic", "x-expires", int64(1000)},
		{"classic", "x-max-priority", int64(300)},
		{"classic", "x-max-priority", int64(255)},
		{"classic", "x-overflow", "drop-tail"},
		{"classic", "x-single-active-consumer", "yes"},
		{"classic", "x-dead-letter-exchange", int64(5)},
		{"classic", "x-queue-version", int64(3)},
		{"quorum", "x-queue-leader-locator", "bogus"},
		{"quorum", "x-queue-leader-locator", "min-masters"},
		{"quorum", "x-queue-leader-locator", "balanced"},
		{"quorum", "x-dead-letter-strategy", "at-most-twice"},
		{"quorum", "x-quorum-initial-group-size", int64(0)},
		{"stream", "x-initial-cluster-size", int64(0)},
		{"stream", "x-stream-max-segment-size-bytes", int64(-1)},
	} {
		name := fmt.Sprintf("q%d", i)
		args, _ := json.Marshal(map[string]any{"x-queue-type": c.typ, c.arg: c.val})
		status, msg := send(t, b, http.MethodPut, "/api/queues/"+url.PathEscape(vh)+"/"+name, `{"durable":true,"arguments":`+string(args)+`}`)
		refused := status == http.StatusBadRequest
		if !refused {
			send(t, b, http.MethodDelete, "/api/queues/"+url.PathEscape(vh)+"/"+name, "")
		}
		top := topology.New()
		vhost := topology.NewVhost(vh)
		vhost.Queues[name] = &topology.Queue{Name: name, Type: c.typ, Durable: true, Arguments: topology.Args{c.arg: c.val}}
		top.Vhosts[vh] = vhost
		err := v.Check(top)
		if predicted := err != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, %s queue with %s %v: broker refused=%v (%d %s), Check predicts refused=%v (%v)", v, c.typ, c.arg, c.val, refused, status, msg, predicted, err)
		}
	}
}

// TestNullArgumentsAgainstBroker: a null argument value, or a list or
// table holding one, is refused by the broker on a queue, an exchange and
// a binding (400 null_not_allowed; a binding's 500), as Check predicts;
// the same arguments with values are taken.
func TestNullArgumentsAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	esc := url.PathEscape(vh)
	if status, msg := send(t, b, http.MethodPut, "/api/exchanges/"+esc+"/h", `{"type":"headers","durable":true}`); status >= 300 {
		t.Fatalf("declare exchange h: %d %s", status, msg)
	}
	if status, msg := send(t, b, http.MethodPut, "/api/queues/"+esc+"/q", `{"durable":true}`); status >= 300 {
		t.Fatalf("declare queue q: %d %s", status, msg)
	}
	for i, c := range []struct {
		object string // queue, exchange or binding
		args   topology.Args
		want   int // the broker's answer
	}{
		{"queue", topology.Args{"x-k": nil}, http.StatusBadRequest},
		{"queue", topology.Args{"x-k": []any{int64(1), nil}}, http.StatusBadRequest},
		{"queue", topology.Args{"x-k": "v"}, http.StatusCreated},
		{"exchange", topology.Args{"x-k": nil}, http.StatusBadRequest},
		{"exchange", topology.Args{"x-k": map[string]any{"a": nil}}, http.StatusBadRequest},
		{"binding", topology.Args{"x-match": "any", "flag": nil}, http.StatusInternalServerError},
		{"binding", topology.Args{"x-match": "any", "flag": []any{nil}}, http.StatusInternalServerError},
		{"binding", topology.Args{"x-match": "any", "flag": "on"}, http.StatusCreated},
	} {
		name := fmt.Sprintf("n%d", i)
		body, _ := json.Marshal(map[string]any{"durable": true, "type": "direct", "arguments": c.args, "routing_key": name})
		top := topology.New()
		vhost := topology.NewVhost(vh)
		vhost.Exchanges["h"] = &topology.Exchange{Name: "h", Type: "headers", Durable: true}
		vhost.Queues["q"] = &topology.Queue{Name: "q", Type: "classic", Durable: true}
		var status int
		var msg string
		switch c.object {
		case "queue":
			status, msg = send(t, b, http.MethodPut, "/api/queues/"+esc+"/"+name, string(body))
			vhost.Queues[name] = &topology.Queue{Name: name, Type: "classic", Durable: true, Arguments: c.args}
		case "exchange":
			status, msg = send(t, b, http.MethodPut, "/api/exchanges/"+esc+"/"+name, string(body))
			vhost.Exchanges[name] = &topology.Exchange{Name: name, Type: "direct", Durable: true, Arguments: c.args}
		default:
			status, msg = send(t, b, http.MethodPost, "/api/bindings/"+esc+"/e/h/q/q", string(body))
			vhost.Bindings = append(vhost.Bindings, &topology.Binding{Source: "h", Destination: "q", DestinationType: topology.DestQueue, RoutingKey: name, Arguments: c.args})
		}
		if status != c.want {
			t.Errorf("RabbitMQ %s, %s with arguments %v: broker answered %d %s, want %d", v, c.object, c.args, status, msg, c.want)
		}
		top.Vhosts[vh] = vhost
		err := v.Check(top)
		if refused, predicted := status >= 400, err != nil; predicted != refused {
			t.Errorf("RabbitMQ %s, %s with arguments %v: broker refused=%v (%d %s), Check predicts refused=%v (%v)", v, c.object, c.args, refused, status, msg, predicted, err)
		}
	}
}

// TestPolicyMaxAgeAgainstBroker: RabbitMQ's answer to a policy's max-age
// that is no age, by version, and the version table says each (the status
// in its reason, or no refusal where the broker takes it). Measured:
//   - a number (5, 5.5), true, false, null or a table: 500 with no body on
//     4.3.6, 4.0.5 and 3.10.8 (the check fails: badarg) and no policy kept;
//   - text that does not start with a digit ("week", "", [5]): 400 "is
//     not a valid max age" on 4.3.6, 500 on 4.0.5 and 3.10.8;
//   - a whole number without a unit ("7") or with another ("1week"), or 0D:
//     400 on all three;
//   - a list whose strings spell an age (["7", "D"]) and "7D": taken by all
//     three. The table refuses the list on 3.10 all the same: a stream the
//     policy applies to would take the node down once it rolled a segment
//     (ListMaxAgeStopsNode; this test declares no stream, and must not).
func TestPolicyMaxAgeAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	line := v.Line()
	for _, c := range []struct {
		value string // as JSON
		want  map[string]int
	}{
		{`5`, map[string]int{"4.3": 500, "4.0": 500, "3.10": 500}},
		{`5.5`, map[string]int{"4.3": 500, "4.0": 500, "3.10": 500}},
		{`true`, map[string]int{"4.3": 500, "4.0": 500, "3.10": 500}},
		{`false`, map[string]int{"4.3": 500, "4.0": 500, "3.10": 500}},
		{`null`, map[string]int{"4.3": 500, "4.0": 500, "3.10": 500}},
		{`{"a": 1}`, map[string]int{"4.3": 500, "4.0": 500, "3.10": 500}},
		{`"week"`, map[string]int{"4.3": 400, "4.0": 500, "3.10": 500}},
		{`""`, map[string]int{"4.3": 400, "4.0": 500, "3.10": 500}},
		{`[5]`, map[string]int{"4.3": 400, "4.0": 500, "3.10": 500}},
		{`"7"`, map[string]int{"4.3": 400, "4.0": 400, "3.10": 400}},
		{`"1week"`, map[string]int{"4.3": 400, "4.0": 400, "3.10": 400}},
		{`"0D"`, map[string]int{"4.3": 400, "4.0": 400, "3.10": 400}},
		{`["7D", 5]`, map[string]int{"4.3": 400, "4.0": 400, "3.10": 400}},
		{`["7", "D"]`, map[string]int{"4.3": 201, "4.0": 201, "3.10": 201}},
		{`"7D"`, map[string]int{"4.3": 201, "4.0": 201, "3.10": 201}},
	} {
		want, ok := c.want[line]
		if !ok {
			t.Fatalf("no answer stated for RabbitMQ %s", line)
		}
		path := "/api/policies/" + url.PathEscape(vh) + "/age"
		status, body := send(t, b, http.MethodPut, path, `{"pattern": "^s$", "apply-to": "queues", "definition": {"max-age": `+c.value+`}}`)
		if status == http.StatusNoContent {
			status = http.StatusCreated
		}
		if status != want {
			t.Errorf("RabbitMQ %s, max-age %s: HTTP %d %s, want %d", v, c.value, status, body, want)
		}
		if kept, _ := send(t, b, http.MethodGet, path, ""); (kept == http.StatusOK) != (status == http.StatusCreated) {
			t.Errorf("RabbitMQ %s, max-age %s: answered %d, and GET of the policy answers %d", v, c.value, status, kept)
		}
		send(t, b, http.MethodDelete, path, "")

		var val any
		if err := json.Unmarshal([]byte(c.value), &val); err != nil {
			t.Fatal(err)
		}
		top := topology.New()
		top.Vhost(vh).Policies["age"] = &topology.Policy{Name: "age", Pattern: "^s$", ApplyTo: "queues", Definition: topology.Args{"max-age": topology.Normalize(val)}}
		err := v.Check(top)
		stops := rmqversion.ListMaxAge(val) && v.ListMaxAgeStopsNode()
		switch {
		case want == http.StatusCreated && stops && (err == nil || !strings.Contains(err.Error(), "takes the policy (HTTP 201), but") || !strings.Contains(err.Error(), "the whole node shuts down") || !strings.Contains(err.Error(), `write it as one string, "7D"`)):
			t.Errorf("RabbitMQ %s takes max-age %s, and its streams' retention would take the node down: the table should refuse it, saying so, and says: %v", v, c.value, err)
		case want == http.StatusCreated && !stops && err != nil:
			t.Errorf("RabbitMQ %s takes max-age %s, and the table refuses it: %v", v, c.value, err)
		case want != http.StatusCreated && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(HTTP %d ", want))):
			t.Errorf("RabbitMQ %s answers max-age %s with HTTP %d, and the table says: %v", v, c.value, want, err)
		case want == http.StatusInternalServerError && !strings.Contains(err.Error(), `such as "7D" or "12h"`) && !strings.Contains(err.Error(), "write an age such as 7D, 12h") && !strings.Contains(err.Error(), `write it as one string, an age such as "7D"`):
			t.Errorf("max-age %s: the refusal gives no age to write: %v", c.value, err)
		}
	}
}

// TestQueueMaxAgeAgainstBroker: RabbitMQ's reason for refusing a stream's
// x-max-age that is no age, by version, is the one the version table
// gives. Measured: 4.3.6, 4.0.5 and 3.10.8 refuse 5, true, 5.5 and a table
// with {unacceptable_type,long} (bool, double, table) and "7" with
// invalid_max_age; "D" and "" with invalid_max_age on 4.3.6, and on 4.0.5
// and 3.10.8 the check fails ({'EXIT',{badarg,…}}), all with HTTP 400; a
// list (["7", "D"]) with {unacceptable_type,array}, whose fix is the list
// as one string.
func TestQueueMaxAgeAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := b.Version()
	crashes := !v.AtLeast(4, 3)
	for _, c := range []struct {
		value string // as JSON
		says  string // in the broker's reason
	}{
		{`5`, "{unacceptable_type,long}"},
		{`true`, "{unacceptable_type,bool}"},
		{`5.5`, "{unacceptable_type,double}"},
		{`{"a": 1}`, "{unacceptable_type,table}"},
		{`"7"`, "invalid_max_age"},
		{`"D"`, map[bool]string{true: "{'EXIT',", false: "invalid_max_age"}[crashes]},
		{`""`, map[bool]string{true: "{'EXIT',", false: "invalid_max_age"}[crashes]},
		{`["7", "D"]`, "{unacceptable_type,array}"},
	} {
		path := "/api/queues/" + url.PathEscape(vh) + "/s"
		status, body := send(t, b, http.MethodPut, path, `{"durable": true, "arguments": {"x-queue-type": "stream", "x-max-age": `+c.value+`}}`)
		send(t, b, http.MethodDelete, path, "")
		var reason struct{ Reason string }
		_ = json.Unmarshal([]byte(body), &reason)
		if status != http.StatusBadRequest || !strings.Contains(reason.Reason, c.says) {
			t.Errorf("RabbitMQ %s, x-max-age %s: HTTP %d %s, want 400 saying %s", v, c.value, status, body, c.says)
		}
		var val any
		if err := json.Unmarshal([]byte(c.value), &val); err != nil {
			t.Fatal(err)
		}
		why, refused := v.RefusesQueueArgumentValue(topology.QueueStream, topology.MaxAgeArgument, val)
		if !refused || !strings.Contains(why, strings.TrimSuffix(c.says, ",")) {
			t.Errorf("RabbitMQ %s, x-max-age %s: the table says %q (refused %v), want it to say %s", v, c.value, why, refused, c.says)
		}
		if fix := v.QueueArgValueFix(topology.QueueStream, topology.MaxAgeArgument, val); strings.HasPrefix(c.value, "[") && !strings.Contains(fix, `write it as one string, "7D"`) {
			t.Errorf("RabbitMQ %s, x-max-age %s: the fix is %q, want the list as one string", v, c.value, fix)
		}
	}
}
