package rmqversion_test

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A shovel, a federation upstream or an upstream set is a plugin's
// runtime parameter: a node that does not run the plugin refuses it (HTTP
// 400 "component … not found"), after the changes before it. Where the
// broker reports the plugins it runs on every node, Check refuses them
// before anything changes; offline, and where it does not say, the broker
// judges. Federation's parameters are rabbitmq_federation_common's from
// 4.2, rabbitmq_federation's before.
func TestCheckRefusesWhatNoPluginRuns(t *testing.T) {
	const file = `version: 1
vhosts:
  v:
    queues:
      a: {}
      b: {}
    shovels:
      s: { src-uri: "amqp://", src-queue: a, dest-uri: "amqp://", dest-queue: b }
    federation_upstreams:
      up: { uri: "amqp://remote" }
    federation_upstream_sets:
      set: [{ upstream: up }]
`
	top, err := loader.LoadBytes("topology.yaml", []byte(file), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const (
		shovel   = `topology.yaml:8:7: shovel "s" in vhost "v": plugin rabbitmq_shovel: this broker does not run it on every node, and a node without it refuses the shovel (HTTP 400 "component shovel not found"); enable it on every node (rabbitmq-plugins enable rabbitmq_shovel), or remove the shovel from the file`
		upstream = `federation upstream "up" in vhost "v": plugin rabbitmq_federation: this broker does not run it on every node`
		set      = `federation upstream set "set" in vhost "v": plugin rabbitmq_federation: this broker does not run it on every node`
	)
	for _, tc := range []struct {
		name    string
		plugins []string // nil: not reported
		want    []string
		notWant []string
	}{
		{"not reported", nil, nil, []string{"does not run it"}},
		{"all of them (4.3.6)", []string{"rabbitmq_management", "rabbitmq_shovel", "rabbitmq_federation", "rabbitmq_federation_common"}, nil, []string{"does not run it"}},
		{"federation before 4.2", []string{"rabbitmq_shovel", "rabbitmq_federation"}, nil, []string{"does not run it"}},
		{"federation's parameters alone (4.2+)", []string{"rabbitmq_shovel", "rabbitmq_federation_common"}, nil, []string{"does not run it"}},
		{"no shovel plugin", []string{"rabbitmq_management", "rabbitmq_federation"}, []string{shovel}, []string{upstream}},
		{"no federation", []string{"rabbitmq_management", "rabbitmq_shovel"}, []string{upstream, set}, []string{`shovel "s"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := checkWithPlugins(top, tc.plugins)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("plugins %v: Check lacks %q:\n%s", tc.plugins, w, msg)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("plugins %v: Check says %q:\n%s", tc.plugins, w, msg)
				}
			}
		})
	}
}

// A policy with federation-upstream or federation-upstream-set is refused
// whole (HTTP 400 "not recognised policy settings") by a node that does not
// run federation's plugin, once the changes before it were made: where the
// broker reports the plugins it runs on every node, Check refuses it before
// anything changes, naming the key and the fix. An operator policy refuses
// these keys on every broker (PolicyKeyRefusal), plugin or not. Every
// shared test broker runs the plugin, so the facts are faked here.
func TestCheckRefusesFederationPolicyKeysWhereNoPluginRuns(t *testing.T) {
	const file = `version: 1
vhosts:
  v:
    policies:
      fed: { pattern: "^x\\.", apply_to: exchanges, definition: { federation-upstream-set: all } }
      one: { pattern: "^y\\.", apply_to: exchanges, definition: { federation-upstream: up } }
      plain: { pattern: "^q\\.", definition: { max-length: 10 } }
`
	top, err := loader.LoadBytes("topology.yaml", []byte(file), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const (
		set = `topology.yaml:5:92: policy "fed" in vhost "v": federation-upstream-set: this broker does not run plugin rabbitmq_federation on every node, and a node without it refuses the whole policy (HTTP 400 "not recognised policy settings"); enable rabbitmq_federation on every node (rabbitmq-plugins enable rabbitmq_federation), or remove the federation-upstream-set key from the policy`
		one = `policy "one" in vhost "v": federation-upstream: this broker does not run plugin rabbitmq_federation on every node`
	)
	for _, tc := range []struct {
		name    string
		plugins []string // nil: not reported
		want    []string
	}{
		{"not reported", nil, nil},
		{"federation (4.3.6)", []string{"rabbitmq_management", "rabbitmq_federation", "rabbitmq_federation_common"}, nil},
		{"federation before 4.2", []string{"rabbitmq_federation"}, nil},
		{"federation's parameters alone (4.2+)", []string{"rabbitmq_federation_common"}, nil},
		{"no federation", []string{"rabbitmq_management", "rabbitmq_shovel"}, []string{set, one}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := checkWithPlugins(top, tc.plugins)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("plugins %v: Check lacks %q:\n%s", tc.plugins, w, msg)
				}
			}
			if tc.want == nil && msg != "" {
				t.Errorf("plugins %v: Check refuses:\n%s", tc.plugins, msg)
			}
			if strings.Contains(msg, `"plain"`) {
				t.Errorf("plugins %v: Check refuses the policy without federation keys:\n%s", tc.plugins, msg)
			}
		})
	}
}

// checkWithPlugins is what 4.3.6's Check says of top on a broker that
// reports plugins (nil: reports none), "" for nothing.
func checkWithPlugins(top *topology.Topology, plugins []string) string {
	v := rmqversion.MustParse("4.3.6")
	if plugins != nil {
		v = v.WithFacts(&rmqversion.Facts{Plugins: plugins})
	}
	if err := v.Check(top); err != nil {
		return err.Error()
	}
	return ""
}
