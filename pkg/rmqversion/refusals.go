package rmqversion

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

// refusedQueueArgs lists, per queue type, the arguments every supported
// version refuses with HTTP 400 "invalid arg 'X' for queue 'Q' … of queue
// type rabbit_…_queue" (measured on 3.10.8 and 4.0.5 alike; the live test
// in this package declares each of them on both).
var refusedQueueArgs = map[string][]string{
	topology.QueueClassic: {"x-delivery-limit", "x-dead-letter-strategy", "x-max-age",
		"x-stream-max-segment-size-bytes", "x-initial-cluster-size", "x-quorum-initial-group-size"},
	topology.QueueQuorum: {"x-max-priority", "x-queue-mode", "x-queue-version", "x-queue-master-locator",
		"x-max-age", "x-stream-max-segment-size-bytes", "x-initial-cluster-size"},
	topology.QueueStream: {"x-max-priority", "x-queue-mode", "x-queue-version", "x-message-ttl", "x-expires",
		"x-max-length", "x-overflow", "x-delivery-limit", "x-single-active-consumer", "x-dead-letter-exchange",
		"x-dead-letter-strategy", "x-queue-master-locator", "x-quorum-initial-group-size"},
}

// quorumArgs43 are the arguments quorum queues learnt in 4.3 (consumer
// timeouts, delayed retry). An argument some queue type takes is refused
// on every other type ("invalid arg … of queue type …"); before 4.3 no
// type knew them and every type stored them unread (measured: 3.10.8 and
// 4.0.5 declare a classic queue and a stream with each, 4.3.6 refuses both).
var quorumArgs43 = []string{"x-consumer-timeout", "x-consumer-disconnected-timeout",
	"x-delayed-retry-type", "x-delayed-retry-min", "x-delayed-retry-max"}

// RefusesQueueArgument reports whether version v refuses to declare a
// queue of type typ ("" is classic) with argument arg, whatever its value.
func (v Version) RefusesQueueArgument(typ, arg string) bool {
	if typ == "" {
		typ = topology.QueueClassic
	}
	switch {
	case slices.Contains(refusedQueueArgs[typ], arg):
		return true
	case typ != topology.QueueQuorum && slices.Contains(quorumArgs43, arg):
		return v.AtLeast(4, 3)
	case typ == topology.QueueClassic && arg == "x-queue-master-locator":
		// The deprecated feature queue_master_locator, denied by default.
		return v.RefusesQueueMasterLocator()
	}
	// Classic queues learnt the leader locator in 4.0 (3.x refuses it;
	// their own was x-queue-master-locator).
	return typ == topology.QueueClassic && arg == "x-queue-leader-locator" && !v.AtLeast(4, 0)
}

// RefusesQueueArgumentValue reports whether version v refuses to declare
// a queue of type typ with argument arg set to val (an argument the type
// takes), and why in the broker's words: 4.3 removed classic queues v1, so
// x-queue-version 1 is "unsupported queue version '1'" (2 is still taken);
// an x-max-age that is no age is invalid_max_age on every version, and so
// are the values the checks of every declare refuse (declareArgs: a
// negative x-max-length is {value_negative,-1}).
func (v Version) RefusesQueueArgumentValue(typ, arg string, val any) (reason string, refused bool) {
	if typ == "" {
		typ = topology.QueueClassic
	}
	if arg == topology.MaxAgeArgument {
		if _, ok := topology.MaxAgeMillis(val); !ok {
			return v.queueMaxAgeProblem(topology.Normalize(val)), true
		}
	}
	if why := v.declareArgProblem(arg, val); why != "" {
		return why, true
	}
	if typ == topology.QueueClassic && arg == "x-queue-version" && !v.ClassicQueueV1() {
		if n, ok := topology.Normalize(val).(int64); ok && n != 2 {
			return fmt.Sprintf("unsupported queue version '%d' (classic queues v1 were removed in 4.3)", n), true
		}
	}
	return "", false
}

// QueueArgValueFix says what to do instead of the value val of argument
// arg that v refuses on a queue of type typ (RefusesQueueArgumentValue):
// an x-max-age that is no age, an x-queue-version other than 2 on a
// classic queue; a number (or true or false) in quotes, which only its
// quotes make wrong, unquoted (quotedFix: a quoted ${VAR} too).
func (v Version) QueueArgValueFix(typ, arg string, val any) string {
	if arg == topology.MaxAgeArgument {
		if list, ok := MaxAgeListFix(val); ok {
			return list
		}
		return maxAgeFix
	}
	if d, ok := declareArgs[arg]; ok && (arg != "x-queue-version" || v.ClassicQueueV1()) {
		if quoted, ok := quotedFix(topology.Normalize(val), func(x any) bool {
			_, refused := v.RefusesQueueArgumentValue(typ, arg, x)
			return !refused
		}); ok {
			return quoted
		}
		return d.fix
	}
	return fmt.Sprintf("remove it, or write %s: 2 (version 2 is the only classic queue storage RabbitMQ %s has)", arg, v.Line())
}

// maxAgeForm is how RabbitMQ reads a max-age (topology.MaxAgeMillis), and
// maxAgeFix what to write.
const (
	maxAgeForm = "an age is a whole number above 0 followed by one unit, Y, M, D, h, m or s"
	maxAgeFix  = "write an age such as 7D, 12h or 30m (units Y, M, D, h, m, s, as written: a month is 30 days, a year 365)"
)

// MaxTopicHashWords is the most '#' words a topic binding key may hold on
// a version that limits them (TopicHashLimit).
const MaxTopicHashWords = 2

// TopicHashLimit: a topic binding key with more than MaxTopicHashWords
// '#' words is refused ("Topic binding key '#.a.#.b.#' uses 3 '#'
// wildcards, at most 2 are allowed", 4.3.5+; rabbitmq-server#17039).
// Bindings made by older versions are kept.
func (v Version) TopicHashLimit() bool { return v.atLeastPatch(4, 3, 5) }

// TopicHashWords counts the '#' words of a topic binding key.
func TopicHashWords(key string) int {
	n := 0
	for _, w := range strings.Split(key, ".") {
		if w == "#" {
			n++
		}
	}
	return n
}

// TopicHashFix is how to write topic binding key key, which has more '#'
// words than MaxTopicHashWords, for a version that refuses it: '#' words
// next to each other match what one does ("#.#" is "#"), so where merging
// them is enough, the merged key, which matches the same routing keys;
// otherwise no key of two '#' words matches the same routing keys ("#.a.#.b.#"
// needs three wildcards that each take any number of words), and the fix
// is a broader key, the key up to its second '#', which matches every
// routing key this one does, with the consumer dropping the others, or
// routing by headers. It starts with a lower-case verb. written is what
// the file wrote for a key it took from the environment
// (topology.EnvValues.WrittenFor), "" for a key written in the file: the
// fix then says what to make of the variable's value without showing a key
// made from it (the value may be a secret).
func TopicHashFix(key, written string) string {
	words := strings.Split(key, ".")
	merged := make([]string, 0, len(words))
	for _, w := range words {
		if w == "#" && len(merged) > 0 && merged[len(merged)-1] == "#" {
			continue
		}
		merged = append(merged, w)
	}
	if mk := strings.Join(merged, "."); TopicHashWords(mk) <= MaxTopicHashWords {
		if written != "" {
			return fmt.Sprintf("merge the '#' words next to each other in the value of %s into one: they match what one does (\"#.#\" is \"#\"), so merged it matches the same routing keys", written)
		}
		return fmt.Sprintf("write it as %q: '#' words next to each other match what one does (\"#.#\" is \"#\"), so it matches the same routing keys", mk)
	}
	var broader []string
	for _, w := range merged {
		broader = append(broader, w)
		if w == "#" && TopicHashWords(strings.Join(broader, ".")) == MaxTopicHashWords {
			break
		}
	}
	with := strconv.Quote(strings.Join(broader, "."))
	if written != "" {
		with = fmt.Sprintf("the value of %s with its '#' words next to each other merged and cut after its second '#'", written)
	}
	return fmt.Sprintf("no key of at most two '#' words matches the same routing keys (each '#' stands for any number of words, and merging only helps where they are next to each other), and neither do two bindings: bind with %s, which matches every routing key this one does and others, and have the consumer drop the others; or publish with routing keys (or headers, to a headers exchange) that say what this key looks for",
		with)
}

// RefusesSetting reports whether version v refuses a shovel or federation
// upstream whose settings hold key, and the fix. A shovel's keys depend on
// the protocol of their end (kind.ShovelProtocol). Measured on 3.10.8,
// 4.0.5 and 4.3.6 (the live test in this package puts each on all three);
// the version in between that changed each is the server's source at its
// tags where it was not measured:
//   - src-predeclared and dest-predeclared: amqp091 from 4.0 (3.10.8
//     refuses them), amqp10 from 4.3.0 (rabbit_amqp10_shovel);
//   - the local protocol from 4.2.0 (rabbit_shovel_parameters);
//   - src-consumer-name from 4.3.0; src-consumer-args of amqp10 from 4.3.3;
//     src-delete-after-duration from 4.3.5.
func (v Version) RefusesSetting(k kind.Kind, settings map[string]any, key string) (fix string, refused bool) {
	if k == kind.Shovel {
		return v.refusesShovelSetting(settings, key)
	}
	switch {
	case k == kind.FederationUpstream && key == "queue-type" && !v.AtLeast(4, 0):
		return "remove it: before 4.0 the upstream's queue is a classic queue", true
	case k == kind.FederationUpstream && key == "ha-policy" && v.AtLeast(4, 0):
		return "remove it: classic queue mirroring was removed in RabbitMQ 4.0 (queue-type: quorum replicates the upstream's queue)", true
	}
	return "", false
}

// refusesShovelSetting is RefusesSetting for a shovel.
func (v Version) refusesShovelSetting(settings map[string]any, key string) (fix string, refused bool) {
	end, _, _ := strings.Cut(key, "-")
	protocol := kind.ShovelProtocol(settings, end)
	switch {
	case (key == "src-protocol" || key == "dest-protocol") && protocol == "local" && !v.AtLeast(4, 2):
		return "leave " + key + " out (amqp091, the default): an amqp091 shovel whose " + end + "-uri has no host (amqp:///VHOST) moves messages within this broker on every version; or target RabbitMQ 4.2 or later", true
	case (key == "src-predeclared" || key == "dest-predeclared") && protocol == "amqp10" && !v.AtLeast(4, 3):
		return "remove it: an amqp10 shovel takes " + key + " from RabbitMQ 4.3", true
	case (key == "src-predeclared" || key == "dest-predeclared") && !v.AtLeast(4, 0):
		return "remove it: before 4.0 a shovel declares its " + end + " queue itself (declare the queue in the file with the arguments it needs)", true
	case key == "src-consumer-name" && !v.AtLeast(4, 3):
		return "remove it: shovels take src-consumer-name from RabbitMQ 4.3", true
	case key == "src-consumer-args" && protocol == "amqp10" && !v.atLeastPatch(4, 3, 3):
		return "remove it: an amqp10 shovel takes src-consumer-args from RabbitMQ 4.3.3", true
	case key == "src-delete-after-duration" && !v.atLeastPatch(4, 3, 5):
		return "remove it: shovels take src-delete-after-duration from RabbitMQ 4.3.5 (src-delete-after, a number of messages or queue-length, works before)", true
	}
	return "", false
}

// mirroringKeys are the policy keys of classic queue mirroring.
var mirroringKeys = []string{"ha-mode", "ha-params", "ha-sync-mode", "ha-sync-batch-size",
	"ha-promote-on-shutdown", "ha-promote-on-failure"}

// IsMirroringKey reports whether a policy key belongs to classic queue
// mirroring (ha-*).
func IsMirroringKey(key string) bool {
	return slices.Contains(mirroringKeys, key) || strings.HasPrefix(key, "ha-")
}

// Refusal is one thing a version's broker would refuse, named by object
// and key, with the fix.
type Refusal struct {
	Vhost  string
	Object string // `queue "q"`, `policy "p"`, `operator policy "p"`
	Key    string
	// Pos is where the file writes what is refused: the argument, policy
	// key or setting Key names, else the object.
	Pos topology.Pos
	// ObjectPos is where the file declares the object, when Pos is not
	// (a refused argument's own place): a plan finds the object by it.
	ObjectPos topology.Pos
	Reason    string // why the broker refuses it
	Fix       string
	// Ignored: the broker would take it and silently not do what the file
	// asks (retry.backoff where it has no delayed retry), which mqctl
	// refuses as it refuses what the broker would.
	Ignored bool
	// StopsNode: the broker would take it and then shut down (a policy's
	// max-age written as a list before 3.13.1: ListMaxAgeStopsNode),
	// which mqctl refuses as it refuses what the broker would.
	StopsNode bool
}

func (r Refusal) Error() string {
	var b strings.Builder
	if r.Pos.File != "" {
		b.WriteString(r.Pos.String())
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%s in vhost %q: %s: %s; %s", r.Object, r.Vhost, r.Key, r.Reason, r.Fix)
	return b.String()
}

// RefusalsError is every refusal of one topology: plan reports it before
// anything changes, validate and lint for the target version.
type RefusalsError struct {
	Version  Version
	Refusals []Refusal
}

func (e *RefusalsError) Error() string {
	lines := make([]string, 0, len(e.Refusals)+1)
	objects := map[string]bool{}
	for _, r := range e.Refusals {
		objects[r.Vhost+"\x00"+r.Object] = true
	}
	noun := "object"
	if len(objects) > 1 {
		noun = "objects"
	}
	verb := "refuse"
	if slices.ContainsFunc(e.Refusals, func(r Refusal) bool { return r.Ignored }) {
		verb = "refuse or ignore"
	}
	if slices.ContainsFunc(e.Refusals, func(r Refusal) bool { return r.StopsNode }) {
		verb += ", or be taken down by,"
	}
	lines = append(lines, fmt.Sprintf("RabbitMQ %s would %s %d %s of the file:", e.Version, verb, len(objects), noun))
	for _, r := range e.Refusals {
		lines = append(lines, "  "+r.Error())
	}
	return strings.Join(lines, "\n")
}

// Check returns what a broker of version v would refuse to declare from t
// (nil when nothing): arguments a queue type refuses, classic mirroring
// keys from 4.0, apply-to by queue type before 3.12, shovel and upstream
// settings the version does not know.
func (v Version) Check(t *topology.Topology) error {
	var out []Refusal
	for _, vn := range t.VhostNames() {
		vh := t.Vhosts[vn]
		out = v.checkQueues(out, vn, vh)
		out = v.checkExchanges(out, vn, vh)
		out = v.checkBindings(out, vn, vh, t.Env, vh.ExchangeType)
		out = v.checkBindingArguments(out, vn, vh)
		out = v.checkNullArguments(out, vn, vh)
		out = v.checkLocalRandomBindings(out, vn, vh)
		for _, k := range kind.PolicyKinds() {
			ps := vh.PoliciesOf(k)
			for _, pn := range sortedKeys(ps) {
				out = v.checkPolicy(out, vn, k, fmt.Sprintf("%s %q", k.Label(), pn), ps[pn])
			}
		}
		out = v.checkPlugins(out, vn, vh)
		out = v.checkSettings(out, vn, vh)
		out = v.checkPatterns(out, vn, vh)
	}
	return refusals(v, out)
}

// runtimeParameterPlugins are, for each kind that is a plugin's runtime
// parameter, the plugins that register its component (the broker refuses
// the parameter with HTTP 400 "component … not found" on a node where
// none runs): the shovel plugin; federation's, whose parameters
// rabbitmq_federation registers before 4.2 and rabbitmq_federation_common
// from 4.2 (rabbit_federation_parameters at v4.0.5 and v4.3.5).
var runtimeParameterPlugins = []struct {
	kind      kind.Kind
	component string
	plugins   []string
}{
	{kind.Shovel, "shovel", []string{"rabbitmq_shovel"}},
	{kind.FederationUpstream, "federation-upstream", federationPlugins},
	{kind.FederationUpstreamSet, "federation-upstream-set", federationPlugins},
}

// checkPlugins appends to out vhost vn's shovels and federation objects
// where the broker reports the plugins it runs on every node and the one
// their component needs is not among them: a node without it refuses
// them, once the changes before them were made. Offline, and where the
// broker does not say (a user without the monitoring tag), the broker
// itself judges.
func (v Version) checkPlugins(out []Refusal, vn string, vh *topology.Vhost) []Refusal {
	for _, rp := range runtimeParameterPlugins {
		names := vh.Items.Names(rp.kind)
		if len(names) == 0 {
			continue
		}
		if runs, known := v.runsAnyPlugin(rp.plugins); !known || runs {
			continue
		}
		for _, name := range names {
			it := vh.Items.Get(rp.kind, name)
			out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("%s %q", rp.kind.Label(), name), Key: "plugin " + rp.plugins[len(rp.plugins)-1], Pos: it.Pos,
				Reason: fmt.Sprintf("this broker does not run it on every node, and a node without it refuses the %s (HTTP 400 \"component %s not found\")", rp.kind.Label(), rp.component),
				Fix:    fmt.Sprintf("enable it on every node (rabbitmq-plugins enable %s), or remove the %s from the file", rp.plugins[len(rp.plugins)-1], rp.kind.Label())})
		}
	}
	return out
}

// runsAnyPlugin reports whether the broker runs one of plugins on every
// node, when it says (known).
func (v Version) runsAnyPlugin(plugins []string) (runs, known bool) {
	for _, p := range plugins {
		r, k := v.RunsPlugin(p)
		runs, known = runs || r, k
	}
	return runs, known
}

// federationPlugins are the plugins that register federation's runtime
// parameters and its policy keys, federation-upstream and
// federation-upstream-set (rabbit_federation_parameters: in
// rabbitmq_federation_common from 4.2, rabbitmq_federation before); the
// last is the one to enable.
var federationPlugins = []string{"rabbitmq_federation_common", "rabbitmq_federation"}

// checkPolicyPlugins appends to out the federation keys of policy obj
// where the broker reports the plugins it runs on every node and
// federation's is not among them: a node without it refuses the whole
// policy (its key is no policy setting there), once the changes before it
// were made. Offline, and where the broker does not say, the broker
// judges.
func (v Version) checkPolicyPlugins(out []Refusal, vn, obj string, p *topology.Policy) []Refusal {
	for _, key := range []string{"federation-upstream", "federation-upstream-set"} {
		if _, ok := p.Definition[key]; !ok {
			continue
		}
		if runs, known := v.runsAnyPlugin(federationPlugins); !known || runs {
			return out
		}
		plugin := federationPlugins[len(federationPlugins)-1]
		out = append(out, Refusal{Vhost: vn, Object: obj, Key: key, Pos: p.PosOf(key), ObjectPos: p.Pos,
			Reason: fmt.Sprintf("this broker does not run plugin %s on every node, and a node without it refuses the whole policy (HTTP 400 \"not recognised policy settings\")", plugin),
			Fix:    fmt.Sprintf("enable %s on every node (rabbitmq-plugins enable %s), or remove the %s key from the policy", plugin, plugin, key)})
	}
	return out
}

// checkQueues appends to out what v refuses of vhost vn's queues: an
// argument their type refuses, or a value of one, and retry.backoff
// without delayed retry.
func (v Version) checkQueues(out []Refusal, vn string, vh *topology.Vhost) []Refusal {
	// By queue name, and each queue's arguments by key; sorted only where
	// something is refused (a vhost's queues and their arguments are many,
	// and nearly all pass).
	type queueRefusals struct {
		name string
		rs   []Refusal
	}
	var found []queueRefusals
	for qn, q := range vh.Queues {
		if rs := v.queueRefusals(vn, qn, q); len(rs) > 0 {
			found = append(found, queueRefusals{qn, rs})
		}
	}
	slices.SortFunc(found, func(a, b queueRefusals) int { return strings.Compare(a.name, b.name) })
	for _, f := range found {
		out = append(out, f.rs...)
	}
	return out
}

// queueRefusals is what v refuses of queue q (named qn) of vhost vn.
func (v Version) queueRefusals(vn, qn string, q *topology.Queue) []Refusal {
	var out []Refusal
	typ := q.Type
	if typ == "" {
		typ = topology.QueueClassic
	}
	for _, flag := range RefusedQueueFlags(q) {
		out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("queue %q", qn), Key: flag.Key, Pos: q.PosOf(flag.Field), ObjectPos: q.Pos,
			Reason: fmt.Sprintf("RabbitMQ refuses to declare a %s queue that is %s (PRECONDITION_FAILED \"invalid property '%s'\")", typ, flag.What, flag.Property),
			Fix:    flag.Fix})
	}
	if q.Backoff != nil && !v.DelayedRetry() {
		out = append(out, backoffIgnored(v, vn, qn, q))
	}
	var refused []string
	for arg, val := range q.Arguments {
		if v.RefusesQueueArgument(typ, arg) {
			refused = append(refused, arg)
		} else if _, r := v.RefusesQueueArgumentValue(typ, arg, val); r {
			refused = append(refused, arg)
		}
	}
	slices.Sort(refused)
	for _, arg := range refused {
		if v.RefusesQueueArgument(typ, arg) {
			fix := v.QueueArgFixWritten(q.Meta, typ, arg)
			if keep, ok := v.KeepClassicFix(q, vn, arg); ok {
				fix = keep + "; otherwise " + fix
			}
			out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("queue %q", qn), Key: ArgWritten(q.Meta, arg), Pos: q.PosOf(arg), ObjectPos: q.Pos,
				Reason: queueArgReason(v, typ, arg),
				Fix:    withDefaultsFix(fix, q, vn, arg)})
		} else if why, refused := v.RefusesQueueArgumentValue(typ, arg, q.Arguments[arg]); refused {
			out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("queue %q", qn), Key: argValueWritten(q.Meta, arg, q.Arguments[arg]), Pos: q.PosOf(arg), ObjectPos: q.Pos,
				Reason: fmt.Sprintf("RabbitMQ %s refuses it: %s (HTTP 400 invalid arg)", v.Line(), why),
				Fix:    withDefaultsFix(v.QueueArgValueFixWritten(q.Meta, typ, arg, q.Arguments[arg]), q, vn, arg)})
		}
	}
	return out
}

// withDefaultsFix is fix, followed by DefaultsFix where queue q takes arg
// from its vhost's defaults.queue.
func withDefaultsFix(fix string, q *topology.Queue, vn, arg string) string {
	if d, ok := DefaultsFix(q, vn, arg); ok {
		return fix + ". " + strings.ToUpper(d[:1]) + d[1:]
	}
	return fix
}

// QueueFlag is a flag of a queue its type refuses (RefusedQueueFlags).
type QueueFlag struct {
	Field    string // the file's field: "durable"
	Key      string // as the file writes it: "durable: false"
	What     string // "not durable"
	Property string // the broker's word: "non-durable"
	Fix      string
}

// RefusedQueueFlags are the flags of queue q its type refuses: a quorum
// queue or a stream is durable and not auto-delete (PRECONDITION_FAILED
// "invalid property 'non-durable'" or "'auto-delete'" on every supported
// version: rabbit_queue_type_util check_non_durable and check_auto_delete
// in rabbit_quorum_queue:declare and rabbit_stream_queue:declare at v3.10.8
// and v4.3.5, which check_exclusive also refuses an exclusive one with; a
// file declares no exclusive queue).
func RefusedQueueFlags(q *topology.Queue) []QueueFlag {
	if q.Type != topology.QueueQuorum && q.Type != topology.QueueStream {
		return nil
	}
	var out []QueueFlag
	if !q.Durable {
		out = append(out, QueueFlag{Field: "durable", Key: "durable: false", What: "not durable", Property: "non-durable",
			Fix: fmt.Sprintf("set durable: true (a %s queue is always durable), or make it a classic queue", q.Type)})
	}
	if q.AutoDelete {
		out = append(out, QueueFlag{Field: "auto_delete", Key: "auto_delete: true", What: "auto-delete", Property: "auto-delete",
			Fix: fmt.Sprintf("set auto_delete: false (a %s queue is never deleted by itself), or make it a classic queue", q.Type)})
	}
	return out
}

// checkExchanges appends to out vhost vn's exchanges of a type v does not
// offer: as the broker says (its facts), or, when it does not say, a core
// type of a later version (LacksExchangeType).
func (v Version) checkExchanges(out []Refusal, vn string, vh *topology.Vhost) []Refusal {
	for _, xn := range sortedKeys(vh.Exchanges) {
		x := vh.Exchanges[xn]
		offered, known := v.OffersExchangeType(x.Type)
		switch {
		case known && !offered:
			out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("exchange %q", xn), Key: "type: " + x.Type, Pos: x.Pos,
				Reason: fmt.Sprintf("this broker offers no exchange type %q (it offers %s; HTTP 400 \"unknown exchange type\")", x.Type, strings.Join(v.facts.ExchangeTypes, ", ")),
				Fix:    exchangeTypeFix(x.Type)})
		case known:
		default:
			if why := v.LacksExchangeType(x.Type); why != "" {
				c, _ := coreExchangeTypeOf(x.Type)
				out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("exchange %q", xn), Key: "type: " + x.Type, Pos: x.Pos,
					Reason: why + ` and refuses the exchange (HTTP 400 "unknown exchange type")`,
					Fix:    fmt.Sprintf("use another type (direct, fanout, topic or headers), or target RabbitMQ %d.%d or later", c.major, c.minor)})
			}
		}
	}
	return out
}

// checkBindings appends to out vhost vn's topic bindings whose key has
// more '#' words than v takes; typeOf is the type of a source exchange
// ("" for one it does not know).
func (v Version) checkBindings(out []Refusal, vn string, vh *topology.Vhost, env topology.EnvValues, typeOf func(exchange string) string) []Refusal {
	if !v.TopicHashLimit() {
		return out
	}
	for _, b := range vh.Bindings {
		if typeOf(b.Source) != "topic" || TopicHashWords(b.RoutingKey) <= MaxTopicHashWords {
			continue
		}
		out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("binding from %q to %s %q", b.Source, b.DestinationType, b.Destination), Key: fmt.Sprintf("routing key %q", b.RoutingKey), Pos: b.Pos,
			Reason: fmt.Sprintf("RabbitMQ %s refuses a topic binding key with more than %d '#' words (HTTP 400 \"uses %d '#' wildcards, at most %d are allowed\", from 4.3.5)", v.Line(), MaxTopicHashWords, TopicHashWords(b.RoutingKey), MaxTopicHashWords),
			Fix:    TopicHashFix(b.RoutingKey, env.WrittenFor(b.RoutingKey))})
	}
	return out
}

// checkPolicy appends to out what v refuses of policy p (of any kind),
// named obj: mirroring keys from 4.0, queue-master-locator where it is
// denied, values rabbit_policies refuses (PolicyValueRefusal: a max-length
// that is no number, a max-age that is no age), a max-age written as a
// list where that stops the node (ListMaxAgeStopsNode: the broker takes
// it), delayed-retry keys before 4.3.1 and values the broker's
// validation refuses from then, apply-to by queue type before 3.12, keys
// the version does not know (PolicyKeyRefusal: consumer timeouts before
// they arrived, an operator policy's keys beyond its few).
func (v Version) checkPolicy(out []Refusal, vn string, k kind.Kind, obj string, p *topology.Policy) []Refusal {
	if !v.ClassicMirroring() {
		for _, k := range sortedKeys(p.Definition) {
			if IsMirroringKey(k) {
				out = append(out, Refusal{Vhost: vn, Object: obj, Key: k, Pos: p.PosOf(k), ObjectPos: p.Pos,
					Reason: fmt.Sprintf("classic queue mirroring was removed in RabbitMQ 4.0, and %s refuses ha-* policy keys (HTTP 400)", v.Line()),
					Fix:    "remove the ha-* keys; for replicated queues declare them with type: quorum"})
			}
		}
	}
	if _, ok := p.Definition["queue-master-locator"]; ok && v.RefusesQueueMasterLocator() {
		out = append(out, Refusal{Vhost: vn, Object: obj, Key: "queue-master-locator", Pos: p.PosOf("queue-master-locator"), ObjectPos: p.Pos,
			Reason: v.queueMasterLocatorDenier() + ` (HTTP 400 "use of deprecated queue-master-locator argument is not permitted")`,
			Fix:    "use queue-leader-locator (client-local or balanced) instead, or permit the feature in rabbitmq.conf (deprecated_features.permit.queue_master_locator = true)"})
	}
	if k == kind.Policy {
		out = v.checkPolicyPlugins(out, vn, obj, p)
	}
	for _, key := range sortedKeys(p.Definition) {
		if why, fix := v.PolicyKeyRefusal(k, key); why != "" {
			out = append(out, Refusal{Vhost: vn, Object: obj, Key: key, Pos: p.PosOf(key), ObjectPos: p.Pos, Reason: why, Fix: fix})
		}
	}
	for _, k := range sortedKeys(p.Definition) {
		if why, fix := v.PolicyValueRefusal(k, p.Definition[k]); why != "" {
			out = append(out, Refusal{Vhost: vn, Object: obj, Key: fmt.Sprintf("%s: %s", k, valueText(p.Definition[k])), Pos: p.PosOf(k), ObjectPos: p.Pos,
				Reason: fmt.Sprintf("RabbitMQ refuses the whole policy (%s)", why),
				Fix:    fix})
		}
	}
	if val, ok := p.Definition["max-age"]; ok && k == kind.Policy && ListMaxAge(val) && v.ListMaxAgeStopsNode() {
		fix, _ := MaxAgeListFix(val)
		out = append(out, Refusal{Vhost: vn, Object: obj, Key: "max-age: " + ListText(val), Pos: p.PosOf("max-age"), ObjectPos: p.Pos, StopsNode: true,
			Reason: fmt.Sprintf("RabbitMQ %s takes the policy (HTTP 201), but %s", v, v.ListMaxAgeHarm()),
			Fix:    fix})
	}
	if v.DelayedRetryPolicyKeys() {
		if key, why := DelayedRetryPolicyRefusal(p.Definition); why != "" {
			out = append(out, Refusal{Vhost: vn, Object: obj, Key: key, Pos: p.PosOf(key), ObjectPos: p.Pos,
				Reason: fmt.Sprintf("RabbitMQ %s refuses the whole policy (HTTP 400 \"Validation failed\": %s)", v.Line(), why),
				Fix:    DelayedRetryPolicyFix})
		}
	} else {
		for _, k := range []string{"delayed-retry-type", "delayed-retry-min", "delayed-retry-max"} {
			if _, ok := p.Definition[k]; ok {
				out = append(out, Refusal{Vhost: vn, Object: obj, Key: k, Pos: p.PosOf(k), ObjectPos: p.Pos,
					Reason: fmt.Sprintf("RabbitMQ %s refuses this policy key (HTTP 400 \"not recognised policy settings\"): policies may set delayed retry from 4.3.1", v.Line()),
					Fix:    "remove it, or set x-delayed-retry-* as arguments of the quorum queues (4.3.0), or upgrade the broker to 4.3.1 or later"})
			}
		}
	}
	switch p.ApplyTo {
	case "classic_queues", "quorum_queues", "streams":
		if !v.PolicyApplyToQueueTypes() {
			out = append(out, Refusal{Vhost: vn, Object: obj, Key: "apply_to: " + p.ApplyTo, Pos: p.Pos,
				Reason: fmt.Sprintf("apply-to by queue type arrived in RabbitMQ 3.12; %s accepts queues, exchanges or all", v.Line()),
				Fix:    "use apply_to: queues, or upgrade the broker to 3.12 or later"})
		}
	}
	return out
}

// checkSettings appends to out the settings of vhost vn's shovels and
// federation upstreams that v does not know.
func (v Version) checkSettings(out []Refusal, vn string, vh *topology.Vhost) []Refusal {
	for _, k := range []kind.Kind{kind.Shovel, kind.FederationUpstream} {
		for _, name := range vh.Items.Names(k) {
			it := vh.Items.Get(k, name)
			for _, key := range sortedKeys(it.Settings) {
				if fix, refused := v.RefusesSetting(k, it.Settings, key); refused {
					pos := it.PosOf(key)
					reason := fmt.Sprintf("RabbitMQ %s does not know this setting (HTTP 400 Unrecognised terms)", v.Line())
					if strings.HasSuffix(key, "-protocol") {
						reason = fmt.Sprintf("RabbitMQ %s has no %s shovels (they arrived in 4.2; 4.0.5 and 3.10.8 answer HTTP 500 and keep no shovel)", v.Line(), it.Settings[key])
						key = fmt.Sprintf("%s: %v", key, it.Settings[key])
					}
					out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("%s %q", k.Label(), it.Name), Key: key, Pos: pos, ObjectPos: it.Pos,
						Reason: reason, Fix: fix})
				}
			}
			if k == kind.Shovel {
				out = v.checkShovelQueueArgs(out, vn, it)
			}
		}
	}
	return out
}

// checkShovelQueueArgs appends to out the arguments of shovel it's
// src-queue-args and dest-queue-args whose values v refuses: the shovel's
// validation checks each as a queue declare does (measured on 4.3.6: HTTP
// 400 "invalid arg 'x-max-length' in src-queue-args: {value_negative,-1}",
// "invalid arg 'x-queue-version' in dest-queue-args: \"unsupported queue
// version '1'\""), though not what the queue's type refuses, which fails
// only when the shovel declares the queue. Before 4.3 the validation
// handed each value to the declare checks in a form they do not read
// (rabbit_shovel_parameters validate_queue_args/2 at v4.0.5 and v4.2.0;
// rabbit_shovel_util validate_amqp_table_args/3 from v4.3.0), and 4.0.5
// and 3.10.8 take every value (measured).
func (v Version) checkShovelQueueArgs(out []Refusal, vn string, it *topology.Item) []Refusal {
	if !v.ValidatesShovelQueueArgs() {
		return out
	}
	for _, key := range []string{"src-queue-args", "dest-queue-args"} {
		args, ok := it.Settings[key].(map[string]any)
		if !ok {
			continue
		}
		typ, _ := args["x-queue-type"].(string)
		for _, arg := range sortedKeys(args) {
			if why, refused := v.RefusesQueueArgumentValue(typ, arg, args[arg]); refused {
				out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("shovel %q", it.Name), Key: key + "." + arg, Pos: it.PosOf(key + "." + arg), ObjectPos: it.Pos,
					Reason: fmt.Sprintf("RabbitMQ %s refuses the shovel (HTTP 400 invalid arg '%s' in %s: %s)", v.Line(), arg, key, why),
					Fix:    v.QueueArgValueFix(typ, arg, args[arg])})
			}
		}
	}
	return out
}

// backoffIgnored is the refusal of queue q's retry.backoff on a version
// without delayed retry. 4.0.5 and 3.10.8 declare a quorum queue with the
// x-delayed-retry-* arguments, keep them and redeliver a rejected message
// at once (TestBackoffAgainstBroker in pkg/cli): its attempts are spent in
// a burst, with no wait between them.
func backoffIgnored(v Version, vhost, name string, q *topology.Queue) Refusal {
	burst := "a message its consumer rejects is redelivered at once, again and again"
	switch {
	case q.Backoff.Attempts > 0:
		burst = fmt.Sprintf("a message its consumer rejects is redelivered at once, and its %d attempts are spent in a burst, with no wait between them", q.Backoff.Attempts)
	case v.QuorumDeliveryLimit() > 0:
		burst = fmt.Sprintf("a message its consumer rejects is redelivered at once, and its %d attempts (the default delivery limit of %d, +1) are spent in a burst", v.QuorumDeliveryLimit()+1, v.QuorumDeliveryLimit())
	}
	return Refusal{Vhost: vhost, Object: fmt.Sprintf("queue %q", name), Key: "retry.backoff", Pos: q.Backoff.Pos, Ignored: true,
		Reason: fmt.Sprintf("RabbitMQ %s has no delayed retry (quorum queues have it from 4.3): it declares the queue with the x-delayed-retry-* arguments and ignores them, so %s", v.Line(), burst),
		Fix:    "write retry: {delays: [10s, 1m, …]} instead: before 4.3, delay queues are the only way to make a retry wait (the consumer publishes the message to " + name + ".retry.<delay> and acknowledges it; the tier returns it when its TTL expires); or target RabbitMQ 4.3 or later"}
}

// exchangeTypeFix says how to get exchange type typ.
func exchangeTypeFix(typ string) string {
	plugin := map[string]string{
		"x-consistent-hash": "rabbitmq_consistent_hash_exchange", "x-delayed-message": "rabbitmq_delayed_message_exchange",
		"x-random": "rabbitmq_random_exchange", "x-recent-history": "rabbitmq_recent_history_exchange",
		"x-jms-topic": "rabbitmq_jms_topic_exchange", ModulusHashExchangeType: "rabbitmq_sharding",
	}[typ]
	if plugin == "" {
		return "enable the plugin that provides it on every node, or use a type the broker offers"
	}
	return fmt.Sprintf("enable the plugin that provides it on every node (rabbitmq-plugins enable %s), or use a type the broker offers", plugin)
}

// queueArgReason says why version v refuses arg on a queue of type typ.
func queueArgReason(v Version, typ, arg string) string {
	switch {
	case typ == topology.QueueClassic && arg == "x-queue-master-locator":
		return v.queueMasterLocatorDenier() + " (HTTP 400 \"Feature `queue_master_locator` is deprecated\")"
	case slices.Contains(quorumArgs43, arg):
		return fmt.Sprintf("RabbitMQ %s takes it on quorum queues only, and refuses it on a %s queue (HTTP 400 invalid arg)", v.Line(), typ)
	}
	return fmt.Sprintf("RabbitMQ %s refuses this argument on a %s queue (HTTP 400 invalid arg)", v.Line(), typ)
}

// KeepClassicFix is the fix for argument arg, which v refuses on queue q
// of vhost vn, when q has that type only from its vhost's
// default_queue_type (topology.Queue.TypeFromVhost) and a classic queue
// takes arg: to write type: classic. false otherwise.
//
// arg "" is for what else a classic queue takes (a binding from an
// x-local-random exchange): the fix then says to write type: classic.
func (v Version) KeepClassicFix(q *topology.Queue, vn, arg string) (string, bool) {
	if !q.TypeFromVhost || q.Type == topology.QueueClassic || (arg != "" && v.RefusesQueueArgument(topology.QueueClassic, arg)) {
		return "", false
	}
	why := fmt.Sprintf("it is a %s queue only because the file gives it no type and vhost %q has default_queue_type: %s", q.Type, vn, q.Type)
	if arg == "" {
		return why + "; write type: classic", true
	}
	return fmt.Sprintf("%s; to keep %s, write type: classic", why, ArgField(q.Meta, arg)), true
}

// DefaultsFix says how to leave argument arg out of queue q alone when q
// takes it from its vhost's defaults.queue (topology.Queue.FromDefaults):
// the queue sets the field itself, which replaces the default's. false
// when q sets arg itself.
func DefaultsFix(q *topology.Queue, vn, arg string) (string, bool) {
	in, ok := q.FromDefaults[arg]
	if !ok {
		return "", false
	}
	top := in.TopField()
	how := fmt.Sprintf("write %s: null on it", top)
	if top != in.Field {
		how = fmt.Sprintf("write %s on it without %s (or %s: null): a field the queue sets replaces the default's whole field", top, strings.TrimPrefix(in.Field, top+"."), top)
	}
	return fmt.Sprintf("queue %q takes %s from defaults.queue.%s of vhost %q (%s), not from a field of its own: to leave it out of this queue alone, %s", q.Name, arg, in.Field, vn, in.Pos, how), true
}

// QueueArgFix says what to do instead of argument arg, which v refuses
// on a queue of type typ.
func (v Version) QueueArgFix(typ, arg string) string {
	return v.QueueArgFixWritten(topology.Meta{}, typ, arg)
}

// QueueArgFixWritten is QueueArgFix for an object whose file may set arg
// through a typed field (m.ArgPos): the fix then names that field, and a
// stream's retention by the typed field and the argument a file writes.
func (v Version) QueueArgFixWritten(m topology.Meta, typ, arg string) string {
	_, typed := m.ArgPos.Written(arg)
	switch {
	case typ == topology.QueueClassic && arg == "x-queue-master-locator":
		return "use x-queue-leader-locator (client-local or balanced) instead, or permit the feature in rabbitmq.conf (deprecated_features.permit.queue_master_locator = true)"
	case arg == "x-consumer-timeout":
		return "remove it, or declare the queue as a quorum queue: from 4.3 only quorum queues evaluate consumer timeouts, and nothing (no policy, no consumer_timeout in rabbitmq.conf) times out a consumer of a classic queue or stream"
	case slices.Contains(quorumArgs43, arg):
		return "remove it, or declare the queue as a quorum queue: only quorum queues take it"
	case typ == topology.QueueQuorum && arg == "x-max-priority":
		return v.QuorumPriorityAdvice()
	case arg == "x-queue-mode" || arg == "x-queue-version" || arg == "x-queue-master-locator":
		return "remove it: it is an argument of classic queues only"
	case typed && typ == topology.QueueStream && (arg == "x-max-length" || arg == "x-overflow"):
		return "remove it: streams are bounded by limits.max_length_bytes and arguments.x-max-age, not by message count"
	case typed && typ == topology.QueueStream && (arg == "x-message-ttl" || arg == "x-expires"):
		return "remove it: a stream keeps messages by arguments.x-max-age and limits.max_length_bytes"
	case typ == topology.QueueStream && (arg == "x-max-length" || arg == "x-overflow"):
		return "remove it: streams are bounded by max_length_bytes and x-max-age, not by message count"
	case typ == topology.QueueStream && (arg == "x-message-ttl" || arg == "x-expires"):
		return "remove it: a stream keeps messages by x-max-age and max_length_bytes"
	case typ == topology.QueueStream:
		return "remove it: streams do not support it"
	case typ == topology.QueueClassic && arg == "x-queue-leader-locator":
		return "use x-queue-master-locator on 3.x (x-queue-leader-locator for classic queues arrived in 4.0)"
	case typ == topology.QueueClassic:
		return fmt.Sprintf("remove it, or declare the queue with the type that takes %s", ArgField(m, arg))
	}
	return "remove it"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TopicPermissionNeedsExchange: a topic permission is refused for an
// exchange the vhost does not have (HTTP 400 {"reason":["no_such_exchange",
// "events"]}, 4.3.2+; measured on 4.3.6, where 4.0.5 and 3.10.8 take it).
func (v Version) TopicPermissionNeedsExchange() bool { return v.atLeastPatch(4, 3, 2) }

// CheckTopicPermissionExchanges refuses, where v needs the exchange of a
// topic permission to exist, the topic permissions of t naming one that
// neither t declares nor has(vhost, exchange) says the broker holds; nil
// when there is none. The broker's own exchanges, the default one ("",
// which 4.3.6 takes) and the amq.* ones, always exist.
func (v Version) CheckTopicPermissionExchanges(t *topology.Topology, has func(vhost, exchange string) bool) error {
	if !v.TopicPermissionNeedsExchange() {
		return nil
	}
	var out []Refusal
	for _, vn := range t.VhostNames() {
		vh := t.Vhosts[vn]
		for _, user := range vh.Items.Names(kind.TopicPermission) {
			it := vh.Items.Get(kind.TopicPermission, user)
			for _, x := range sortedKeys(it.Settings) {
				if _, builtin := topology.BuiltinExchange(x); builtin || x == "" || vh.Exchanges[x] != nil || (has != nil && has(vn, x)) {
					continue
				}
				out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("topic permission of user %q", user), Key: fmt.Sprintf("exchange %q", x), Pos: it.PosOf(x), ObjectPos: it.Pos,
					Reason: fmt.Sprintf("RabbitMQ %s refuses a topic permission for an exchange the vhost does not have (HTTP 400 no_such_exchange, from 4.3.2), and neither the file nor the broker has exchange %q", v.Line(), x),
					Fix:    fmt.Sprintf("declare exchange %q in the file, or fix the name, or remove the entry", x)})
			}
		}
	}
	return refusals(v, out)
}

// CheckURIVhosts refuses the shovels and federation upstreams of t with a
// URI without a host (a direct connection to this broker: amqp:// or
// amqp:///VHOST) naming a vhost the file does not declare and the applying
// user cannot connect to. RabbitMQ checks, when a shovel is written, that
// such a URI's vhost exists and that the user writing it has access to it,
// whatever the shovel's protocol; from 4.3.3 it checks a federation
// upstream's URI the same way (UpstreamURIChecksVhost). It refuses the
// object otherwise (HTTP 400 user "U" may not connect to vhost "V";
// measured on 4.3.6, 4.0.5 and 3.10.8). unreachable says why the user
// cannot connect to a vhost the file does not declare ("" when it can);
// a vhost the file declares exists when the object is written, and the
// management API gives the user that creates it access to it. Vhost ""
// (amqp:///) is no broker's.
func (v Version) CheckURIVhosts(t *topology.Topology, unreachable func(vhost string) string) error {
	var out []Refusal
	check := func(vn string, it *topology.Item, keys ...string) {
		for _, key := range keys {
			seen := map[string]bool{}
			for _, uri := range kind.URIs(it.Settings[key]) {
				target, host, ok := kind.URIVhost(uri)
				if !ok || host != "" || t.Vhosts[target] != nil || seen[target] {
					continue
				}
				seen[target] = true
				why := `no broker has vhost ""`
				fix := fmt.Sprintf(`write amqp:// in %s for the default vhost "/", or amqp:///VHOST for vhost VHOST`, key)
				if target != "" {
					why = unreachable(target)
					fix = fmt.Sprintf("declare vhost %q in the file, or give the user access to it, or fix the vhost in %s (amqp:///VHOST, %%2F for \"/\")", target, key)
				}
				if why == "" {
					continue
				}
				out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("%s %q", it.Kind.Label(), it.Name), Key: key, Pos: it.Pos,
					Reason: fmt.Sprintf("RabbitMQ %s refuses a %s whose URI without a host names a vhost the user writing it cannot connect to (HTTP 400 may not connect to vhost), and %s names vhost %q: %s", v.Line(), it.Kind.Label(), key, target, why),
					Fix:    fix})
			}
		}
	}
	for _, vn := range t.VhostNames() {
		vh := t.Vhosts[vn]
		for _, name := range vh.Items.Names(kind.Shovel) {
			check(vn, vh.Items.Get(kind.Shovel, name), "src-uri", "dest-uri")
		}
		if v.UpstreamURIChecksVhost() {
			for _, name := range vh.Items.Names(kind.FederationUpstream) {
				check(vn, vh.Items.Get(kind.FederationUpstream, name), "uri")
			}
		}
	}
	return refusals(v, out)
}

// bindingEnd is one end of a binding: its kind, its name, and which end.
type bindingEnd struct {
	k          kind.Kind
	name, role string
}

// endsOf are binding b's source exchange and its destination.
func endsOf(b *topology.Binding) []bindingEnd {
	return []bindingEnd{{kind.Exchange, b.Source, "source"}, {b.DestinationKind(), b.Destination, "destination"}}
}

// CheckBrokerTopicKeys refuses, as Check does for the file's own topic
// exchanges, the bindings of t from an exchange the file does not declare
// and the broker has as a topic exchange (typeOf: its type on the broker,
// "" for none) whose key has more '#' words than v takes.
func (v Version) CheckBrokerTopicKeys(t *topology.Topology, typeOf func(vhost, exchange string) string) error {
	var out []Refusal
	for _, vn := range t.VhostNames() {
		vh := t.Vhosts[vn]
		out = v.checkBindings(out, vn, vh, t.Env, func(x string) string {
			if vh.ExchangeType(x) != "" {
				return "" // the file's, or one every vhost has: Check's
			}
			return typeOf(vn, x)
		})
	}
	return refusals(v, out)
}

// CheckDeletedEnds refuses the bindings and topic permissions of t that
// name an exchange or queue the file does not declare and a plan deletes
// (deleted: the broker has it now, mqctl created it, the file dropped it).
// Apply would write them beside the delete: RabbitMQ refuses a binding
// whose end does not exist and, from 4.3.2, a topic permission for an
// exchange the vhost does not have; written first, the binding goes with
// its end, and the next plan writes it again.
func (v Version) CheckDeletedEnds(t *topology.Topology, deleted func(vhost string, k kind.Kind, name string) bool) error {
	var out []Refusal
	gone := func(vh *topology.Vhost, vn string, k kind.Kind, name string) bool {
		declared := (k == kind.Exchange && vh.Exchanges[name] != nil) || (k == kind.Queue && vh.Queues[name] != nil)
		return !declared && deleted(vn, k, name)
	}
	for _, vn := range t.VhostNames() {
		vh := t.Vhosts[vn]
		for _, b := range vh.Bindings {
			for _, end := range endsOf(b) {
				if gone(vh, vn, end.k, end.name) {
					out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("binding from %q to %s %q", b.Source, b.DestinationType, b.Destination), Key: fmt.Sprintf("routing key %q", b.RoutingKey), Pos: b.Pos,
						Reason: deletedEndReason(end.k, end.name, "a binding whose "+end.role+" does not exist (HTTP 404 NOT_FOUND)"),
						Fix:    deletedEndFix(end.k, end.name, "remove the binding")})
				}
			}
		}
		if !v.TopicPermissionNeedsExchange() {
			continue
		}
		for _, user := range vh.Items.Names(kind.TopicPermission) {
			it := vh.Items.Get(kind.TopicPermission, user)
			for _, x := range sortedKeys(it.Settings) {
				if gone(vh, vn, kind.Exchange, x) {
					out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("topic permission of user %q", user), Key: fmt.Sprintf("exchange %q", x), Pos: it.PosOf(x), ObjectPos: it.Pos,
						Reason: deletedEndReason(kind.Exchange, x, "a topic permission for an exchange the vhost does not have (HTTP 400 no_such_exchange, from 4.3.2)"),
						Fix:    deletedEndFix(kind.Exchange, x, "remove the entry")})
				}
			}
		}
	}
	return refusals(v, out)
}

// deletedEndReason says why an object naming k name, which a plan
// deletes, is refused: RabbitMQ refuses what.
func deletedEndReason(k kind.Kind, name, what string) string {
	return fmt.Sprintf("the broker has %s %q now, but this plan deletes it (mqctl created it and the file no longer declares it), and RabbitMQ refuses %s", k.Label(), name, what)
}

// deletedEndFix is the fix of such an object: keep the end, or drop the
// object (other).
func deletedEndFix(k kind.Kind, name, other string) string {
	return fmt.Sprintf("declare %s %q in the file to keep it, or %s", k.Label(), name, other)
}

// refusals is out as an error of v (nil for none).
func refusals(v Version, out []Refusal) error {
	if len(out) == 0 {
		return nil
	}
	return &RefusalsError{Version: v.OrDefault(), Refusals: out}
}

// CheckBindingEnds refuses the bindings of t whose source exchange or
// destination neither the file nor the broker has: RabbitMQ refuses such
// a binding (HTTP 404 NOT_FOUND, on every version), and an apply stopped
// there, the objects before it written. has reports whether the broker
// may hold an end the file does not declare (asked only for those; there:
// it may, an answer other than "not found" included) and whether that is
// known (seen: the broker was read and has it). The exchanges the broker
// declares itself (amq.*) are there; direct reply-to's pseudo-queue is
// never one a binding may name. An end that the file, or the broker for
// certain, has as the other kind (a queue where the binding names an
// exchange, or the other way round) gets OtherKindEndFix's fix.
func (v Version) CheckBindingEnds(t *topology.Topology, has func(vhost string, k kind.Kind, name string) (there, seen bool)) error {
	var out []Refusal
	for _, vn := range t.VhostNames() {
		vh := t.Vhosts[vn]
		for _, b := range vh.Bindings {
			for _, end := range endsOf(b) {
				var fix string
				switch {
				case end.k == kind.Queue && end.name == "amq.rabbitmq.reply-to":
					fix = "remove the binding: direct reply-to's pseudo-queue cannot be bound (a reply reaches the requester when the responder publishes it to the default exchange with the request's reply_to as the routing key)"
				case end.k == kind.Exchange && (vh.Exchanges[end.name] != nil || topology.IsBrokerExchange(end.name)),
					end.k == kind.Queue && vh.Queues[end.name] != nil:
					continue
				default:
					if there, _ := has(vn, end.k, end.name); there {
						continue
					}
					fix = fmt.Sprintf("declare %s %q in the file, or fix the name (mqctl lint reports it as MQ401)%s", end.k.Label(), end.name, endHint(vh, end.k, end.name))
					if where := otherKindOf(vh, vn, end, has); where != "" {
						fix = OtherKindEndFix(b, end.role == "source", where)
					}
				}
				out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("binding from %q to %s %q", b.Source, b.DestinationType, b.Destination), Key: fmt.Sprintf("routing key %q", b.RoutingKey), Pos: b.Pos,
					Reason: fmt.Sprintf("RabbitMQ refuses a binding whose %s does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has %s %q", end.role, end.k.Label(), end.name),
					Fix:    fix})
			}
		}
	}
	return refusals(v, out)
}

// Where a binding's end of the other kind is, for OtherKindEndFix.
const (
	OfTheFile   = "of this file"
	OnTheBroker = "on the broker"
)

// otherKindOf is where vhost vn has binding end's name as the other kind
// (a queue for an exchange end, an exchange for a queue end): OfTheFile
// where vh declares it, OnTheBroker where the broker declares it in every
// vhost (amq.direct, ...) or has says it was seen there; "" otherwise (an
// answer the broker did not give for certain gives no advice).
func otherKindOf(vh *topology.Vhost, vn string, end bindingEnd, has func(vhost string, k kind.Kind, name string) (there, seen bool)) string {
	if end.name == "" {
		return ""
	}
	other := kind.Queue
	if end.k == kind.Queue {
		other = kind.Exchange
	}
	switch _, builtin := topology.BuiltinExchange(end.name); {
	case other == kind.Queue && vh.Queues[end.name] != nil, other == kind.Exchange && vh.Exchanges[end.name] != nil:
		return OfTheFile
	case other == kind.Exchange && builtin:
		return OnTheBroker
	}
	if _, seen := has(vn, other, end.name); seen {
		return OnTheBroker
	}
	return ""
}

// OtherKindEndFix is the fix for binding b whose source (source true) or
// destination names no object of its kind, where one of the other kind is
// (where: OfTheFile, OnTheBroker). A destination's type is then wrong; a
// queue as the source is no source at all, as a binding carries messages
// from an exchange to a queue, never out of a queue, so the ends are most
// likely swapped where the destination is an exchange (the binding meant
// goes from it to the queue). lint's MQ401 and plan's refusal both say it.
func OtherKindEndFix(b *topology.Binding, source bool, where string) string {
	switch {
	case source && b.DestinationType == topology.DestExchange && b.Destination != "":
		return fmt.Sprintf("%q is a queue %s, and a binding carries messages from an exchange to a queue, never out of a queue: to send exchange %q's messages to it, swap the ends (source: %s, destination: %s, destination_type: queue)", b.Source, where, b.Destination, b.Destination, b.Source)
	case source:
		return fmt.Sprintf("%q is a queue %s, and a binding's source is an exchange: bind from the exchange that should feed %s %q, or publish to the queue through the default exchange with its name as the routing key", b.Source, where, b.DestinationType, b.Destination)
	case b.DestinationType == topology.DestExchange:
		return fmt.Sprintf("%q is a queue %s: to bind it, write destination_type: queue", b.Destination, where)
	}
	return fmt.Sprintf("%q is an exchange %s: to bind it, write destination_type: exchange", b.Destination, where)
}

// endHint is `; did you mean "orders"?` for a binding's end name of kind
// k that vhost vh does not declare, where one of its declared names of
// that kind is close (suggest.Name); "" otherwise.
func endHint(vh *topology.Vhost, k kind.Kind, name string) string {
	names := vh.ExchangeNames()
	if k == kind.Queue {
		names = vh.QueueNames()
	}
	if best := suggest.Name(name, names); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}
