package rmqversion_test

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

func TestDeprecatedArgumentsByVersion(t *testing.T) {
	versions := []string{"3.10", "3.11", "3.12", "3.13", "4.0", "4.2", "4.3"}
	checks := []struct {
		name string
		f    func(rmqversion.Version) bool
		want []bool // in the order of versions
	}{
		{"ignores queue mode", rmqversion.Version.IgnoresQueueMode, []bool{false, false, true, true, true, true, true}},
		{"validates queue mode", rmqversion.Version.ValidatesQueueMode, []bool{true, true, true, true, true, true, false}},
		{"deprecates queue master locator", rmqversion.Version.DeprecatesQueueMasterLocator, []bool{false, false, false, false, true, true, true}},
		{"refuses queue master locator", rmqversion.Version.RefusesQueueMasterLocator, []bool{false, false, false, false, false, false, true}},
	}
	for _, c := range checks {
		for i, s := range versions {
			if got := c.f(rmqversion.MustParse(s)); got != c.want[i] {
				t.Errorf("%s on %s = %v, want %v", c.name, s, got, c.want[i])
			}
		}
	}
}

// What 4.3 refuses that earlier versions take, by the version table
// (the live tests hold each against the broker of the run).
func TestRefusals43(t *testing.T) {
	for _, s := range []string{"3.10", "4.0", "4.2", "4.3.0", "4.3.4", "4.3.5", "4.3"} {
		v := rmqversion.MustParse(s)
		is43 := v.AtLeast(4, 3)
		for _, c := range []struct {
			name      string
			got, want bool
		}{
			{"x-consumer-timeout on a classic queue", v.RefusesQueueArgument("classic", "x-consumer-timeout"), is43},
			{"x-delayed-retry-type on a stream", v.RefusesQueueArgument("stream", "x-delayed-retry-type"), is43},
			{"x-consumer-timeout on a quorum queue", v.RefusesQueueArgument("quorum", "x-consumer-timeout"), false},
			{"x-queue-master-locator on a classic queue", v.RefusesQueueArgument("classic", "x-queue-master-locator"), is43},
			{"x-queue-mode on a classic queue", v.RefusesQueueArgument("classic", "x-queue-mode"), false},
			{"topic keys with three '#'", v.TopicHashLimit(), v.AtLeast(4, 3) && s != "4.3.0" && s != "4.3.4"},
		} {
			if c.got != c.want {
				t.Errorf("%s, %s: refused %v, want %v", s, c.name, c.got, c.want)
			}
		}
		_, one := v.RefusesQueueArgumentValue("classic", "x-queue-version", int64(1))
		_, two := v.RefusesQueueArgumentValue("classic", "x-queue-version", float64(2))
		if one != is43 || two {
			t.Errorf("%s: x-queue-version 1 refused %v (want %v), 2 refused %v", s, one, is43, two)
		}
	}
	if n := rmqversion.TopicHashWords("#.a.#.b.#"); n != 3 {
		t.Errorf("TopicHashWords = %d", n)
	}
}

// TestTopicHashFix: a key whose '#' words merge into at most two is
// rewritten exactly; one whose '#' words stand apart has no equivalent of
// two (each '#' takes any number of words), and the fix is the broader key
// up to its second '#', which the broker takes and which matches every
// routing key the refused one does. A key from the environment (written:
// what the file wrote for it) may be a secret: the fix says what to make
// of the variable's value and shows no key made from it.
func TestTopicHashFix(t *testing.T) {
	for _, c := range []struct{ key, written, want string }{
		{"#.#.#", "", `write it as "#"`},
		{"#.a.#.#", "", `write it as "#.a.#"`},
		{"#.#.a.#.#", "", `write it as "#.a.#"`},
		{"#..#.#", "", `write it as "#..#"`}, // an empty word between is a word
		{"#.a.#.b.#", "", `bind with "#.a.#", which matches every routing key this one does`},
		{"a.#.#.b.#.#.c.#", "", `bind with "a.#.b.#"`},
		{"*.#.x.#.y.#.z", "", `bind with "*.#.x.#"`},
		{"tok.#.#.#", "${KEY}", `merge the '#' words next to each other in the value of ${KEY} into one`},
		{"tok.#.x.#.y.#", `"${P}.#.x.#.y.#"`, `bind with the value of "${P}.#.x.#.y.#" with its '#' words next to each other merged and cut after its second '#'`},
	} {
		got := rmqversion.TopicHashFix(c.key, c.written)
		if c.written != "" && strings.Contains(got, "tok") {
			t.Errorf("TopicHashFix(%q, %q) = %q shows a key made from the value", c.key, c.written, got)
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("TopicHashFix(%q) = %q, want it to say %q", c.key, got, c.want)
		}
		if strings.Contains(got, "split") {
			t.Errorf("TopicHashFix(%q) = %q: no split into bindings of two '#' matches the same keys", c.key, got)
		}
	}
}

// TestTopicPermissionsGoWithExchange: a topic permission is deleted with
// its exchange where the metadata store is Khepri: 4.3 (the only store),
// and 4.0 to 4.2 with the khepri_db feature flag enabled; Mnesia (3.10,
// 4.0 without the flag, or where the flags are not known) keeps it.
func TestTopicPermissionsGoWithExchange(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version string
		flags   map[string]bool // nil: not known
		want    bool
	}{
		{"3.10.8", nil, false},
		{"4.0.5", nil, false},
		{"4.0.5", map[string]bool{"khepri_db": false}, false},
		{"4.0.5", map[string]bool{"khepri_db": true}, true},
		{"4.2.0", map[string]bool{"khepri_db": true}, true},
		{"4.3.0", nil, true},
		{"4.3.6", map[string]bool{}, true},
	} {
		v := rmqversion.MustParse(tt.version).WithFacts(&rmqversion.Facts{FeatureFlags: tt.flags})
		if got := v.TopicPermissionsGoWithExchange(); got != tt.want {
			t.Errorf("%s with feature flags %v: %v, want %v", tt.version, tt.flags, got, tt.want)
		}
	}
}

// Where the broker reports the state of queue_master_locator, its word
// decides and the refusal says it is the broker's: a 4.0 configured to
// deny the feature (deprecated_features.permit.queue_master_locator =
// false) refuses the argument and the policy key, which 4.0 permits by
// default; it said "RabbitMQ 4.0 denies it by default". A 4.3 that
// permits it refuses neither.
func TestQueueMasterLocatorFromTheBroker(t *testing.T) {
	const file = `version: 1
vhosts:
  v:
    queues:
      q: { arguments: { x-queue-master-locator: min-masters } }
    policies:
      p: { pattern: "^q$", apply_to: queues, definition: { queue-master-locator: min-masters } }
`
	top, err := loader.LoadBytes("topology.yaml", []byte(file), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(v rmqversion.Version) string {
		if err := v.Check(top); err != nil {
			return err.Error()
		}
		return ""
	}
	denied := rmqversion.MustParse("4.0.5").WithFacts(&rmqversion.Facts{Denied: map[string]bool{"queue_master_locator": true}})
	msg := check(denied)
	for _, want := range []string{
		`queue "q" in vhost "v": x-queue-master-locator: this broker denies the deprecated feature queue_master_locator (GET /api/deprecated-features)`,
		`policy "p" in vhost "v": queue-master-locator: this broker denies the deprecated feature queue_master_locator (GET /api/deprecated-features)`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("4.0.5 denying the feature: Check lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "by default") {
		t.Errorf("4.0.5 denying the feature by configuration: Check says it is the default:\n%s", msg)
	}
	if msg := check(rmqversion.MustParse("4.3.6")); !strings.Contains(msg, "RabbitMQ 4.3 denies the deprecated feature queue_master_locator by default") {
		t.Errorf("4.3.6 offline: Check does not give the default:\n%s", msg)
	}
	if msg := check(rmqversion.MustParse("4.3.6").WithFacts(&rmqversion.Facts{Denied: map[string]bool{"queue_master_locator": false}})); strings.Contains(msg, "queue_master_locator") {
		t.Errorf("4.3.6 permitting the feature: Check refuses it:\n%s", msg)
	}
}
