package rmqversion_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in, want, line string
		err            bool
	}{
		{in: "4.0", want: "4.0", line: "4.0"},
		{in: "4.0.5", want: "4.0.5", line: "4.0"},
		{in: "3.10.8", want: "3.10.8", line: "3.10"},
		{in: "4.1.0-beta.1", want: "4.1.0", line: "4.1"},
		{in: " 3.13.7+2.gabc ", want: "3.13.7", line: "3.13"},
		{in: "4", err: true},
		{in: "four.0", err: true},
		{in: "4..1", err: true},
		{in: "", err: true},
	}
	for _, c := range cases {
		v, err := rmqversion.Parse(c.in)
		if c.err {
			if err == nil || !strings.Contains(err.Error(), "MAJOR.MINOR") {
				t.Errorf("Parse(%q) = %v, %v; want an error that shows the form", c.in, v, err)
			}
			continue
		}
		if err != nil || v.String() != c.want || v.Line() != c.line {
			t.Errorf("Parse(%q) = %v (line %s), %v; want %s (line %s)", c.in, v, v.Line(), err, c.want, c.line)
		}
	}
	if got := (rmqversion.Version{}).String(); got != "4.3" {
		t.Errorf("the zero Version is %q, want the default 4.3", got)
	}
}

func TestBehaviourByVersion(t *testing.T) {
	v310, v312, v40 := rmqversion.MustParse("3.10.8"), rmqversion.MustParse("3.12"), rmqversion.MustParse("4.0.5")
	checks := []struct {
		name string
		f    func(rmqversion.Version) bool
		want [3]bool // 3.10, 3.12, 4.0
	}{
		{"stores default queue type", rmqversion.Version.StoresDefaultQueueType, [3]bool{false, true, true}},
		{"fills default queue type", rmqversion.Version.FillsDefaultQueueType, [3]bool{false, false, true}},
		{"apply-to by queue type", rmqversion.Version.PolicyApplyToQueueTypes, [3]bool{false, true, true}},
		{"classic mirroring", rmqversion.Version.ClassicMirroring, [3]bool{true, true, false}},
		{"deprecates transient queues", rmqversion.Version.DeprecatesTransientQueues, [3]bool{false, false, true}},
		{"placements without statistics", rmqversion.Version.PlacementsWithoutStats, [3]bool{false, false, true}},
	}
	for _, c := range checks {
		for i, v := range []rmqversion.Version{v310, v312, v40} {
			if got := c.f(v); got != c.want[i] {
				t.Errorf("%s on %s = %v, want %v", c.name, v, got, c.want[i])
			}
		}
	}
	// Quorum queues read message priorities from 4.0 (release notes of
	// 4.0.0; rabbit_fifo at v3.13.7 knows consumer priorities only).
	for v, want := range map[string]rmqversion.QuorumPriority{"3.13.7": rmqversion.QuorumFIFO, "4.0.0": rmqversion.QuorumTwoClasses, "4.2": rmqversion.QuorumTwoClasses, "4.3.0": rmqversion.QuorumStrict} {
		if got := rmqversion.MustParse(v).QuorumPriorities(); got != want {
			t.Errorf("quorum priorities on %s: %v, want %v", v, got, want)
		}
	}
	if v310.QuorumDeliveryLimit() != 0 || v40.QuorumDeliveryLimit() != 20 {
		t.Errorf("quorum delivery limit: 3.10 %d (want none), 4.0 %d (want 20)", v310.QuorumDeliveryLimit(), v40.QuorumDeliveryLimit())
	}
}

func TestCheck(t *testing.T) {
	top := func(q *topology.Queue, p *topology.Policy) *topology.Topology {
		tp := topology.New()
		v := topology.NewVhost("orders")
		if q != nil {
			v.Queues[q.Name] = q
		}
		if p != nil {
			v.Policies[p.Name] = p
		}
		tp.Vhosts["orders"] = v
		return tp
	}
	cases := []struct {
		name    string
		t       *topology.Topology
		version string
		want    string // "" = accepted
	}{
		{"quorum priority on 4.0", top(&topology.Queue{Name: "jobs", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-priority": 5}}, nil), "4.0",
			`queue "jobs" in vhost "orders": x-max-priority: RabbitMQ 4.0 refuses this argument on a quorum queue`},
		{"quorum priority on 4.0, its fix", top(&topology.Queue{Name: "jobs", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-priority": 5}}, nil), "4.0",
			`two high messages for each normal one, not strictly`},
		{"quorum priority on 4.3, its fix", top(&topology.Queue{Name: "jobs", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-priority": 5}}, nil), "4.3",
			`on RabbitMQ 4.3 they deliver strictly by the message's priority, 0 to 31`},
		{"quorum priority by the vhost's default type", top(&topology.Queue{Name: "jobs", Type: "quorum", Durable: true, TypeFromVhost: true, Arguments: topology.Args{"x-max-priority": 5}}, nil), "4.3",
			`it is a quorum queue only because the file gives it no type and vhost "orders" has default_queue_type: quorum; to keep x-max-priority, write type: classic; otherwise quorum queues need no argument`},
		{"quorum priority on 3.10", top(&topology.Queue{Name: "jobs", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-priority": 5}}, nil), "3.10",
			`x-max-priority: RabbitMQ 3.10 refuses this argument on a quorum queue`},
		{"quorum priority on 3.10, its fix", top(&topology.Queue{Name: "jobs", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-priority": 5}}, nil), "3.10",
			`quorum queues ignore message priorities before RabbitMQ 4.0`},
		{"quorum priority from the vhost's defaults", top(&topology.Queue{Name: "jobs", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-priority": 5},
			FromDefaults: map[string]topology.Inherited{"x-max-priority": {Field: "max_priority", Pos: topology.Pos{File: "t.yaml", Line: 6, Col: 23}}}}, nil), "4.3",
			`Remove it. Queue "jobs" takes x-max-priority from defaults.queue.max_priority of vhost "orders" (t.yaml:6:23), not from a field of its own: to leave it out of this queue alone, write max_priority: null on it`},
		{"stream length limit from the vhost's defaults", top(&topology.Queue{Name: "log", Type: "stream", Durable: true, Arguments: topology.Args{"x-max-length": 5},
			FromDefaults: map[string]topology.Inherited{"x-max-length": {Field: "limits.max_length", Pos: topology.Pos{File: "t.yaml", Line: 7, Col: 30}}}}, nil), "4.3",
			`to leave it out of this queue alone, write limits on it without max_length (or limits: null): a field the queue sets replaces the default's whole field`},
		{"classic priority", top(&topology.Queue{Name: "jobs", Durable: true, Arguments: topology.Args{"x-max-priority": 5}}, nil), "4.0", ""},
		{"stream max length", top(&topology.Queue{Name: "log", Type: "stream", Durable: true, Arguments: topology.Args{"x-max-length": 5}}, nil), "3.10",
			"streams are bounded by max_length_bytes"},
		{"classic leader locator on 3.10", top(&topology.Queue{Name: "jobs", Durable: true, Arguments: topology.Args{"x-queue-leader-locator": "balanced"}}, nil), "3.10",
			"x-queue-leader-locator for classic queues arrived in 4.0"},
		{"classic leader locator on 4.0", top(&topology.Queue{Name: "jobs", Durable: true, Arguments: topology.Args{"x-queue-leader-locator": "balanced"}}, nil), "4.0", ""},
		{"ha on 4.0", top(nil, &topology.Policy{Name: "ha", Pattern: ".*", Definition: topology.Args{"ha-mode": "all"}}), "4.0",
			`policy "ha" in vhost "orders": ha-mode: classic queue mirroring was removed in RabbitMQ 4.0`},
		{"ha on 3.10", top(nil, &topology.Policy{Name: "ha", Pattern: ".*", Definition: topology.Args{"ha-mode": "all"}}), "3.10", ""},
		{"apply-to streams on 3.10", top(nil, &topology.Policy{Name: "s", Pattern: ".*", ApplyTo: "streams", Definition: topology.Args{"max-age": "1D"}}), "3.10",
			"apply_to: streams: apply-to by queue type arrived in RabbitMQ 3.12"},
		{"apply-to streams on 4.0", top(nil, &topology.Policy{Name: "s", Pattern: ".*", ApplyTo: "streams", Definition: topology.Args{"max-age": "1D"}}), "4.0", ""},
	}
	for _, c := range cases {
		assertCheck(t, c.name, c.version, c.t, c.want)
	}
}

// TestCheckShovelQueueArgs: a shovel's validation checks each of its
// src-queue-args and dest-queue-args as a queue declare does (measured on
// 4.3.6, HTTP 400 "invalid arg 'x-max-length' in src-queue-args:
// {value_negative,-1}"); what the queue's type refuses is not checked
// there (it fails when the shovel declares the queue).
func TestCheckShovelQueueArgs(t *testing.T) {
	shovel := func(key string, args map[string]any) *topology.Topology {
		tp := topology.New()
		tp.Vhost("orders").Items.Put(&topology.Item{Kind: kind.Shovel, Name: "s", Settings: topology.Args{
			"src-uri": "amqp:///orders", "src-queue": "a", "dest-uri": "amqp:///orders", "dest-queue": "b", key: args}.Normalized()})
		return tp
	}
	for _, c := range []struct {
		name, version string
		t             *topology.Topology
		want          string // "" = accepted
	}{
		{"a negative length", "4.3", shovel("src-queue-args", map[string]any{"x-max-length": -1}),
			`shovel "s" in vhost "orders": src-queue-args.x-max-length: RabbitMQ 4.3 refuses the shovel (HTTP 400 invalid arg 'x-max-length' in src-queue-args: {value_negative,-1}); write a whole number of messages, 0 or more`},
		{"an expiry of 0", "4.3", shovel("dest-queue-args", map[string]any{"x-expires": 0}), "dest-queue-args.x-expires: RabbitMQ 4.3 refuses the shovel (HTTP 400 invalid arg 'x-expires' in dest-queue-args: {value_zero,0})"},
		{"an unknown overflow", "4.3", shovel("dest-queue-args", map[string]any{"x-overflow": "bogus"}), "dest-queue-args.x-overflow"},
		// Before 4.3 the broker takes every value (measured on 4.0.5 and
		// 3.10.8: TestRefusedSettingsAgainstBroker).
		{"an expiry of 0 on 3.10", "3.10", shovel("dest-queue-args", map[string]any{"x-expires": 0}), ""},
		{"a negative length on 4.0", "4.0", shovel("src-queue-args", map[string]any{"x-max-length": -1}), ""},
		{"an unknown overflow on 4.2", "4.2", shovel("dest-queue-args", map[string]any{"x-overflow": "bogus"}), ""},
		{"a TTL that is no number", "4.3", shovel("dest-queue-args", map[string]any{"x-message-ttl": "x"}), "dest-queue-args.x-message-ttl"},
		{"classic queues v1 on 4.3", "4.3", shovel("dest-queue-args", map[string]any{"x-queue-version": 1}), "unsupported queue version '1'"},
		{"classic queues v1 on 4.0", "4.0", shovel("dest-queue-args", map[string]any{"x-queue-version": 1}), ""},
		{"a type's refusal is not the validation's", "4.3", shovel("src-queue-args", map[string]any{"x-queue-type": "quorum", "x-max-priority": 10}), ""},
		{"good values", "4.3", shovel("dest-queue-args", map[string]any{"x-max-length": 5, "x-queue-type": "quorum"}), ""},
	} {
		assertCheck(t, c.name, c.version, c.t, c.want)
	}
}

// TestCheckTopicPermissionExchanges: from 4.3.2 a topic permission needs
// its exchange: declared in the file, held by the broker (has), or one of
// the broker's own. 4.3.1 and 4.0 take any name.
func TestCheckTopicPermissionExchanges(t *testing.T) {
	top := topology.New()
	v := top.Vhost("shop")
	v.Exchanges["orders"] = &topology.Exchange{Name: "orders", Type: "topic", Durable: true}
	v.Items.Put(&topology.Item{Kind: kind.TopicPermission, Name: "svc", Settings: topology.Args{
		"orders": map[string]any{"write": ".*"}, "amq.topic": map[string]any{"write": ".*"}, "": map[string]any{"write": ".*"},
		"events": map[string]any{"write": ".*"}, "legacy": map[string]any{"write": ".*"}}})
	has := func(vhost, x string) bool { return vhost == "shop" && x == "legacy" }
	err := rmqversion.MustParse("4.3.2").CheckTopicPermissionExchanges(top, has)
	if err == nil || !strings.Contains(err.Error(), `exchange "events"`) || strings.Contains(err.Error(), `"legacy"`) || strings.Contains(err.Error(), `"orders"`) || strings.Contains(err.Error(), "amq.topic") {
		t.Errorf("4.3.2: %v; want exchange events alone refused", err)
	}
	for _, ver := range []string{"4.3.1", "4.0.5", "3.10.8"} {
		if err := rmqversion.MustParse(ver).CheckTopicPermissionExchanges(top, has); err != nil {
			t.Errorf("%s: %v; want none refused", ver, err)
		}
	}
}

// TestCheckExchangeTypes: a core exchange type of a later version is
// refused from the table (x-local-random before 4.0); x-modulus-hash,
// the rabbitmq_sharding plugin's before 4.3, is not, as no plugin type is
// offline. A live broker's list of exchange types wins over the table.
func TestCheckExchangeTypes(t *testing.T) {
	withFacts := func(version string, types ...string) rmqversion.Version {
		return rmqversion.MustParse(version).WithFacts(&rmqversion.Facts{ExchangeTypes: types})
	}
	core := []string{"direct", "fanout", "headers", "topic"}
	cases := []struct {
		typ     string
		version rmqversion.Version
		want    string // "" = accepted
	}{
		{"x-local-random", rmqversion.MustParse("3.10"),
			`exchange "lr" in vhost "orders": type: x-local-random: RabbitMQ 3.10 has no exchange type x-local-random (a core type from 4.0) and refuses the exchange (HTTP 400 "unknown exchange type"); use another type (direct, fanout, topic or headers), or target RabbitMQ 4.0 or later`},
		{"x-local-random", rmqversion.MustParse("3.13.7"), "RabbitMQ 3.13 has no exchange type x-local-random"},
		{"x-local-random", rmqversion.MustParse("4.0"), ""},
		{"x-local-random", rmqversion.MustParse("4.3"), ""},
		{"x-modulus-hash", rmqversion.MustParse("3.10"), ""},
		{"x-modulus-hash", rmqversion.MustParse("4.0"), ""},
		{"x-modulus-hash", rmqversion.MustParse("4.3"), ""},
		{"x-consistent-hash", rmqversion.MustParse("3.10"), ""},
		// The broker's facts win.
		{"x-local-random", withFacts("3.10.8", append(core, "x-local-random")...), ""},
		{"x-local-random", withFacts("4.0.5", core...), `this broker offers no exchange type "x-local-random"`},
		{"x-modulus-hash", withFacts("4.0.5", core...), "rabbitmq-plugins enable rabbitmq_sharding"},
		{"x-modulus-hash", withFacts("4.0.5", append(core, "x-modulus-hash")...), ""},
		{"x-local-random", rmqversion.MustParse("3.10").WithFacts(&rmqversion.Facts{}), "RabbitMQ 3.10 has no exchange type x-local-random"},
	}
	for _, c := range cases {
		top := topology.New()
		top.Vhost("orders").Exchanges["lr"] = &topology.Exchange{Name: "lr", Type: c.typ, Durable: true}
		err := c.version.Check(top)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s on %s: Check = %v, want accepted", c.typ, c.version, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s on %s: Check = %v, want a refusal containing %q", c.typ, c.version, err, c.want)
		}
	}
}

// TestCheckRefusedOnEveryVersion: what RabbitMQ refuses whatever its
// version — a headers binding's x-match other than the four, a binding
// key an x-consistent-hash exchange cannot read as a weight, a quorum
// queue or stream that is not durable or is auto-delete — is refused for
// every target; a weight over 10000 from 4.2.6.
func TestCheckRefusedOnEveryVersion(t *testing.T) {
	bind := func(source, key string, args topology.Args) *topology.Topology {
		tp := topology.New()
		v := tp.Vhost("orders")
		v.Exchanges["h"] = &topology.Exchange{Name: "h", Type: "headers", Durable: true}
		v.Exchanges["ch"] = &topology.Exchange{Name: "ch", Type: "x-consistent-hash", Durable: true}
		v.Exchanges["d"] = &topology.Exchange{Name: "d", Type: "direct", Durable: true}
		v.Queues["q"] = &topology.Queue{Name: "q", Durable: true}
		v.Bindings = append(v.Bindings, &topology.Binding{Source: source, Destination: "q", DestinationType: topology.DestQueue, RoutingKey: key, Arguments: args})
		return tp
	}
	queue := func(q *topology.Queue) *topology.Topology {
		tp := topology.New()
		tp.Vhost("orders").Queues[q.Name] = q
		return tp
	}
	every := []string{"3.10", "4.0", "4.3"}
	cases := []struct {
		name     string
		t        *topology.Topology
		versions []string
		want     string // "" = accepted
	}{
		{"x-match bogus", bind("h", "", topology.Args{"x-match": "bogus", "k": "v"}), every,
			`binding from "h" to queue "q" in vhost "orders": arguments: x-match "bogus" is not valid: RabbitMQ refuses the binding (HTTP 400 binding_invalid); use all, any, all-with-x or any-with-x`},
		{"x-match not a string", bind("h", "", topology.Args{"x-match": int64(1)}), every, "x-match is 1, not a string"},
		{"x-match on amq.match", bind("amq.match", "", topology.Args{"x-match": "every"}), every, `x-match "every" is not valid`},
		{"x-match any-with-x", bind("h", "", topology.Args{"x-match": "any-with-x", "x-k": "v"}), every, ""},
		{"no x-match", bind("h", "", topology.Args{"k": "v"}), every, ""},
		{"x-match on a direct exchange", bind("d", "k", topology.Args{"x-match": "bogus"}), every, ""},
		{"consistent hash, a word", bind("ch", "abc", nil), every,
			`binding from "ch" to queue "q" in vhost "orders": routing key "abc": RabbitMQ refuses it: an x-consistent-hash exchange takes the destination's weight, an integer, as the binding key (HTTP 400 "The binding key must be an integer")`},
		{"consistent hash, no key", bind("ch", "", nil), every, "The binding key must be an integer"},
		{"consistent hash, zero", bind("ch", "0", nil), every, "The binding key must be greater than 0"},
		{"consistent hash, a weight", bind("ch", "10", nil), every, ""},
		{"consistent hash, 10000", bind("ch", "10000", nil), every, ""},
		{"consistent hash, over 10000", bind("ch", "10001", nil), []string{"4.2.6", "4.3"}, "The binding key must not exceed 10000"},
		{"consistent hash, over 10000 before 4.2.6", bind("ch", "99999999999999999999", nil), []string{"3.10", "4.0", "4.2.5"}, ""},
		{"consistent hash key on an undeclared exchange", bind("other", "abc", nil), every, ""},
		{"stream not durable", queue(&topology.Queue{Name: "s", Type: "stream"}), every,
			`queue "s" in vhost "orders": durable: false: RabbitMQ refuses to declare a stream queue that is not durable (PRECONDITION_FAILED "invalid property 'non-durable'"); set durable: true`},
		{"stream auto-delete", queue(&topology.Queue{Name: "s", Type: "stream", Durable: true, AutoDelete: true}), every,
			`auto_delete: true: RabbitMQ refuses to declare a stream queue that is auto-delete (PRECONDITION_FAILED "invalid property 'auto-delete'")`},
		{"quorum not durable", queue(&topology.Queue{Name: "qq", Type: "quorum"}), every, "a quorum queue that is not durable"},
		{"classic transient auto-delete", queue(&topology.Queue{Name: "c", Type: "classic", AutoDelete: true}), every, ""},
		{"durable stream", queue(&topology.Queue{Name: "s", Type: "stream", Durable: true}), every, ""},
		{"queue argument null", queue(&topology.Queue{Name: "c", Type: "classic", Durable: true, Arguments: topology.Args{"x-message-ttl": nil}}), every,
			`queue "c" in vhost "orders": x-message-ttl: null: RabbitMQ refuses an argument without a value (HTTP 400 null_not_allowed; a binding's, HTTP 500); give x-message-ttl a value, or remove it`},
		{"queue argument list holding null", queue(&topology.Queue{Name: "c", Type: "classic", Durable: true, Arguments: topology.Args{"x-k": []any{int64(1), nil}}}), every,
			`queue "c" in vhost "orders": x-k (a list holding null): RabbitMQ refuses an argument without a value`},
		{"exchange argument null", func() *topology.Topology {
			tp := topology.New()
			tp.Vhost("orders").Exchanges["x"] = &topology.Exchange{Name: "x", Type: "direct", Durable: true, Arguments: topology.Args{"x-k": nil}}
			return tp
		}(), every, `exchange "x" in vhost "orders": x-k: null: RabbitMQ refuses an argument without a value`},
		{"headers binding argument null", bind("h", "", topology.Args{"x-match": "any", "flag": nil}), every,
			`binding from "h" to queue "q" in vhost "orders": flag: null: RabbitMQ refuses an argument without a value (HTTP 400 null_not_allowed; a binding's, HTTP 500); give flag the value the message's header must have (a headers binding matches a header by its value), or remove it`},
		{"binding argument table holding null", bind("d", "k", topology.Args{"t": map[string]any{"a": nil}}), every,
			`binding from "d" to queue "q" in vhost "orders": t (a table holding null): RabbitMQ refuses an argument without a value (HTTP 400 null_not_allowed; a binding's, HTTP 500); give t a value, or remove it`},
		{"arguments with values", bind("h", "", topology.Args{"x-match": "any", "flag": "", "list": []any{int64(1)}}), every, ""},
	}
	for _, c := range cases {
		for _, ver := range c.versions {
			err := rmqversion.MustParse(ver).Check(c.t)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s on %s: Check = %v, want accepted", c.name, ver, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s on %s: Check = %v, want a refusal containing %q", c.name, ver, err, c.want)
			}
		}
	}
}

// TestCheckPolicyValues: RabbitMQ validates each key of a policy's (or an
// operator policy's) definition and refuses the whole policy for a value it
// does not take (rabbit_policies:validate_policy0/2 at v3.10.8, v4.0.5 and
// v4.3.5); Check says so before anything changes.
func TestCheckPolicyValues(t *testing.T) {
	policy := func(k kind.Kind, def topology.Args) *topology.Topology {
		tp := topology.New()
		v := tp.Vhost("orders")
		v.PoliciesOf(k)["p"] = &topology.Policy{Name: "p", Pattern: "^q", ApplyTo: "queues", Definition: def}
		return tp
	}
	every := []string{"3.10", "4.0", "4.3"}
	cases := []struct {
		name     string
		kind     kind.Kind
		def      topology.Args
		versions []string
		want     string // "" = accepted
	}{
		{"max-length a word", kind.Policy, topology.Args{"max-length": "ten"}, every,
			`policy "p" in vhost "orders": max-length: ten: RabbitMQ refuses the whole policy (HTTP 400 "Validation failed": "ten" is not a valid maximum length); write a whole number of messages, 0 or more`},
		{"max-length a number", kind.Policy, topology.Args{"max-length": int64(10)}, every, ""},
		{"max-length null", kind.Policy, topology.Args{"max-length": nil}, every,
			`policy "p" in vhost "orders": max-length: null: RabbitMQ refuses the whole policy (HTTP 400 "Validation failed": null is not a valid maximum length); write a whole number of messages, 0 or more`},
		{"max-length a string of digits", kind.Policy, topology.Args{"max-length": "10"}, every, `"10" is not a valid maximum length); write it without quotes: a quoted value is a string, and RabbitMQ wants a number here (a quoted ${VAR} too`},
		{"max-length a negative string", kind.Policy, topology.Args{"max-length": "-1"}, every, `"-1" is not a valid maximum length); write a whole number of messages, 0 or more`},
		{"max-length negative", kind.Policy, topology.Args{"max-length": int64(-1)}, every, "-1 is not a valid maximum length"},
		{"max-length-bytes a fraction", kind.Policy, topology.Args{"max-length-bytes": 1.5}, every, "1.5 is not a valid maximum length in bytes"},
		{"message-ttl a word", kind.Policy, topology.Args{"message-ttl": "1h"}, every, `"1h" is not a valid message TTL`},
		{"message-ttl zero", kind.Policy, topology.Args{"message-ttl": int64(0)}, every, ""},
		{"message-ttl past ten years", kind.Policy, topology.Args{"message-ttl": int64(400_000_000_000)}, every, ""},
		{"expires zero", kind.OperatorPolicy, topology.Args{"expires": int64(0)}, every,
			`operator policy "p" in vhost "orders": expires: 0: RabbitMQ refuses the whole policy (HTTP 400 "Validation failed": 0 is not a valid queue expiry)`},
		{"overflow unknown", kind.Policy, topology.Args{"overflow": "drop-tail"}, every, `"drop-tail" is not a valid overflow value`},
		{"overflow reject-publish-dlx", kind.Policy, topology.Args{"overflow": "reject-publish-dlx"}, every, ""},
		{"dead-letter-exchange a number", kind.Policy, topology.Args{"dead-letter-exchange": int64(5)}, every, "5 is not a valid dead letter exchange name"},
		{"dead-letter-exchange the default", kind.Policy, topology.Args{"dead-letter-exchange": ""}, every, ""},
		{"dead-letter-strategy unknown", kind.Policy, topology.Args{"dead-letter-strategy": "exactly-once"}, every, "is not a valid dead letter strategy"},
		{"queue-mode unknown", kind.Policy, topology.Args{"queue-mode": "eager"}, every, "is not a valid queue-mode value"},
		{"queue-version 1", kind.Policy, topology.Args{"queue-version": int64(1)}, every, ""},
		{"queue-version 3", kind.Policy, topology.Args{"queue-version": int64(3)}, every, "3 is not a valid queue-version value"},
		{"queue-leader-locator random", kind.Policy, topology.Args{"queue-leader-locator": "random"}, every, ""},
		{"queue-leader-locator unknown", kind.Policy, topology.Args{"queue-leader-locator": "closest"}, every, "is not a valid queue leader locator value"},
		{"delivery-limit negative before 4.0", kind.Policy, topology.Args{"delivery-limit": int64(-1)}, []string{"3.10"}, "-1 is not a valid delivery limit"},
		{"delivery-limit negative from 4.0", kind.Policy, topology.Args{"delivery-limit": int64(-1)}, []string{"4.0", "4.3"}, ""},
		{"stream segment too large", kind.Policy, topology.Args{"stream-max-segment-size-bytes": int64(3_000_000_001)}, every, "is not a valid segment size"},
		{"stream filter size too small", kind.Policy, topology.Args{"stream-filter-size-bytes": int64(8)}, []string{"4.0", "4.3"}, "Valid range is 16-255"},
		{"max-age no age", kind.Policy, topology.Args{"max-age": "1week"}, every, `"1week" is not a valid max age`},
		{"max-age an age", kind.Policy, topology.Args{"max-age": "7D"}, every, ""},
		{"max-age a number", kind.Policy, topology.Args{"max-age": int64(5)}, every,
			`policy "p" in vhost "orders": max-age: 5: RabbitMQ refuses the whole policy (HTTP 500 with no body: the broker's check of max-age fails on a number (badarg from rabbit_amqqueue:check_max_age/1 in its log) and it keeps no policy); write the age as a number and its unit, such as "7D" or "12h"`},
		{"max-age true", kind.Policy, topology.Args{"max-age": true}, every, "(HTTP 500 with no body: the broker's check of max-age fails on true or false"},
		{"max-age no digit, before the fix", kind.Policy, topology.Args{"max-age": "week"}, []string{"3.10", "4.0", "4.2.8", "4.3.0"}, "(HTTP 500 with no body: the broker's check of max-age fails on text that does not start with a digit"},
		{"max-age no digit, from the fix", kind.Policy, topology.Args{"max-age": "week"}, []string{"4.2.9", "4.3.1", "4.3"}, `(HTTP 400 "Validation failed": "week" is not a valid max age`},
		// A list the policy's check takes, which no stream reads as an age:
		// before 3.13.1 its retention crashes until the node shuts down.
		{"max-age a list spelling an age, before 3.13.1", kind.Policy, topology.Args{"max-age": []any{"7", "D"}}, []string{"3.10", "3.12", "3.13.0"},
			`policy "p" in vhost "orders": max-age: ["7", "D"]: RabbitMQ %s takes the policy (HTTP 201), but a stream reads a max-age only from one string (rabbit_stream_queue:max_age/1) and hands the list to its retention as it is: once a stream the policy applies to rolls a segment, the node's stream retention process crashes on it (badarith in osiris_log:eval_age/2), again and again, until its supervisor gives up and the whole node shuts down`},
		{"max-age a list spelling an age, the fix", kind.Policy, topology.Args{"max-age": []any{"7", "D"}}, []string{"3.10"}, `; write it as one string, "7D": a list is no age to a stream`},
		{"max-age a list of one age", kind.Policy, topology.Args{"max-age": []any{"12h"}}, []string{"3.10"}, `max-age: ["12h"]: RabbitMQ 3.10 takes the policy (HTTP 201), but`},
		{"max-age a nested list", kind.Policy, topology.Args{"max-age": []any{"1", []any{"2", "h"}}}, []string{"3.10"}, `write it as one string, "12h"`},
		{"max-age a list of a character code", kind.Policy, topology.Args{"max-age": []any{int64('7'), "D"}}, []string{"3.10"}, `write it as one string, "55D"`},
		{"max-age a list spelling an age, from 3.13.1", kind.Policy, topology.Args{"max-age": []any{"7", "D"}}, []string{"3.13.1", "4.0", "4.1", "4.2", "4.3"}, ""},
		{"max-age a list, operator policy", kind.OperatorPolicy, topology.Args{"max-age": []any{"7", "D"}}, []string{"3.10"}, `operator policy "p" in vhost "orders": max-age: RabbitMQ`},
		// Lists the check refuses: the fix is one string, from the list
		// where its parts, as written, make an age.
		{"max-age a list of a number and a unit", kind.Policy, topology.Args{"max-age": []any{int64(7), "D"}}, every, `write it as one string, "7D": a list is no age to a stream`},
		{"max-age a list of no age", kind.Policy, topology.Args{"max-age": []any{"1", "week"}}, every,
			`(HTTP 400 "Validation failed": ["1", "week"] is not a valid max age (an age is a whole number above 0 followed by one unit, Y, M, D, h, m or s)); write it as one string, an age such as "7D", "12h" or "30m"`},
		{"a plugin's key", kind.Policy, topology.Args{"federation-upstream-set": "all"}, every, ""},
		{"consumer-timeout before 3.12", kind.Policy, topology.Args{"consumer-timeout": int64(60000)}, []string{"3.10"}, "policies may set consumer-timeout from 3.12"},
		{"consumer-timeout from 3.12", kind.Policy, topology.Args{"consumer-timeout": int64(60000)}, []string{"3.12", "4.0", "4.3"}, ""},
		{"consumer-disconnected-timeout before 4.3", kind.Policy, topology.Args{"consumer-disconnected-timeout": int64(60000)}, []string{"3.10", "4.0", "4.2"}, "policies may set consumer-disconnected-timeout from 4.3"},
		{"consumer-disconnected-timeout negative on 4.3", kind.Policy, topology.Args{"consumer-disconnected-timeout": int64(-1)}, []string{"4.3"}, "-1 is not a valid consumer disconnected timeout"},
		{"operator policy consumer-timeout", kind.OperatorPolicy, topology.Args{"consumer-timeout": int64(60000)}, every, `operator policy "p" in vhost "orders": consumer-timeout: RabbitMQ`},
		{"operator policy dead-letter-exchange", kind.OperatorPolicy, topology.Args{"dead-letter-exchange": "dlx"}, every, "move dead-letter-exchange to a policy"},
		{"operator policy overflow before 3.12.7", kind.OperatorPolicy, topology.Args{"overflow": "reject-publish"}, []string{"3.10", "3.12.6"}, "operator policies may set overflow from 3.12.7"},
		{"operator policy overflow from 3.12.7", kind.OperatorPolicy, topology.Args{"overflow": "reject-publish"}, []string{"3.12.7", "4.0", "4.3"}, ""},
		{"operator policy limits", kind.OperatorPolicy, topology.Args{"max-length": int64(10), "message-ttl": int64(1000), "delivery-limit": int64(5)}, every, ""},
	}
	for _, c := range cases {
		for _, ver := range c.versions {
			v := rmqversion.MustParse(ver)
			err := v.Check(policy(c.kind, c.def))
			want := c.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, v)
			}
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s on %s: Check = %v, want accepted", c.name, ver, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("%s on %s: Check = %v, want a refusal containing %q", c.name, ver, err, want)
			}
		}
	}
}

// TestCheckPolicyKeyOnce: a key the version does not know is refused for
// the key alone, not also for a value its later validation would refuse
// (4.0.5 answers "not recognised policy settings" whatever the value).
func TestCheckPolicyKeyOnce(t *testing.T) {
	tp := topology.New()
	tp.Vhost("orders").Policies["p"] = &topology.Policy{Name: "p", Pattern: "^q", ApplyTo: "queues",
		Definition: topology.Args{"consumer-disconnected-timeout": int64(-1)}}
	var re *rmqversion.RefusalsError
	if err := rmqversion.MustParse("4.0").Check(tp); !errors.As(err, &re) || len(re.Refusals) != 1 || !strings.Contains(re.Refusals[0].Reason, "not recognised policy settings") {
		t.Errorf("4.0, consumer-disconnected-timeout -1: Check = %v, want one refusal, of the key", err)
	}
}

// assertCheck checks that version's Check accepts t (want "") or refuses
// it with a RefusalsError whose text holds want.
func assertCheck(t *testing.T, name, version string, top *topology.Topology, want string) {
	t.Helper()
	err := rmqversion.MustParse(version).Check(top)
	if want == "" {
		if err != nil {
			t.Errorf("%s: Check = %v, want accepted", name, err)
		}
		return
	}
	var re *rmqversion.RefusalsError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: Check = %v, want a RefusalsError containing %q", name, err, want)
	}
}

// TestMisspeltPolicyKey: a policy key one edit (or only dashes, case or
// an x-) from one RabbitMQ knows is refused with that key as the fix; one
// further off, perhaps a plugin's, is left to the broker, never given a
// wrong guess (x-queue-type is two edits from queue-mode).
func TestMisspeltPolicyKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{"max_length", "max-length"},
		{"Max-Length", "max-length"},
		{"x-message-ttl", "message-ttl"},
		{"x-max-in-memory-length", "max-in-memory-length"},
		{"dead-letter-exchnage", "dead-letter-exchange"},
		{"federation-upstream-sets", "federation-upstream-set"},
		{"max-length", ""},
		{"ha-mode", ""},
		{"federation-upstream", ""},
		{"x-queue-type", ""},
		{"my-plugin-setting", ""},
	}
	for _, tt := range tests {
		if got := rmqversion.MisspeltPolicyKey(tt.key); got != tt.want {
			t.Errorf("MisspeltPolicyKey(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	for _, k := range []kind.Kind{kind.Policy, kind.OperatorPolicy} {
		why, fix := rmqversion.MustParse("4.3").PolicyKeyRefusal(k, "max_length")
		if !strings.Contains(why, `"max_length" is no policy key`) || !strings.HasPrefix(fix, `write "max-length"`) {
			t.Errorf("%s max_length: why %q, fix %q", k, why, fix)
		}
	}
}

// TestQuotedValueFix: a number (or true or false) in quotes, which only
// its quotes make wrong, is refused with the fix to remove them, a quoted
// ${VAR} too (x-max-length: "${N}" stays a string in an argument, whatever
// N holds: RabbitMQ answers {unacceptable_type,longstr}); the refusal
// said "write a whole number of messages", which it was. A value that is
// wrong unquoted too keeps the fix for the value.
func TestQuotedValueFix(t *testing.T) {
	const unquote = "write it without quotes: a quoted value is a string, and RabbitMQ wants a number here (a quoted ${VAR} too, whatever its value: write that mapping one entry per line, where ${VAR} needs no quotes and takes the type of its value)"
	v := rmqversion.MustParse("4.3")
	for _, c := range []struct {
		typ, arg string
		val      any
		want     string
	}{
		{"classic", "x-max-length", "10", unquote},
		{"quorum", "x-message-ttl", "1000", unquote},
		{"classic", "x-single-active-consumer", "true", strings.Replace(unquote, "a number", "true or false", 1)},
		{"classic", "x-max-length", "-1", "write a whole number of messages, 0 or more"},
		{"classic", "x-max-length", "ten", "write a whole number of messages, 0 or more"},
		{"classic", "x-expires", "0", "write a whole number of milliseconds, from 1 to 315360000000 (ten years)"},
		{"classic", "x-max-length", int64(-1), "write a whole number of messages, 0 or more"},
	} {
		if _, refused := v.RefusesQueueArgumentValue(c.typ, c.arg, c.val); !refused {
			t.Errorf("%s %s: %#v: not refused, want refused", c.typ, c.arg, c.val)
		}
		if got := v.QueueArgValueFix(c.typ, c.arg, c.val); got != c.want {
			t.Errorf("%s %s: %#v: fix %q\nwant %q", c.typ, c.arg, c.val, got, c.want)
		}
	}
}
