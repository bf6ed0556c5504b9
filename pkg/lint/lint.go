// Package lint runs mqctl's rule catalogue over an expanded topology.
//
// Every rule is an Analyzer with a stable ID (MQ101…), a name, a default
// severity and a Run function that inspects one vhost through a Pass. The
// rules about dead letters, delays and loops reason over the routing
// simulation of package route (where a message really goes), not over
// queue names.
package lint

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Severity is how serious a finding is. Off disables a rule.
type Severity int

// Severities, from least to most serious.
const (
	Off Severity = iota
	Info
	Warning
	Error
)

var severityNames = [...]string{Off: "off", Info: "info", Warning: "warning", Error: "error"}

func (s Severity) String() string {
	if s < Off || s > Error {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText renders s as "off", "info", "warning" or "error".
func (s Severity) MarshalText() ([]byte, error) {
	if s < Off || s > Error {
		return nil, fmt.Errorf("invalid severity %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText parses a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity parses "off", "info", "warning" or "error".
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if n == name {
			return Severity(i), nil
		}
	}
	return Off, fmt.Errorf("unknown severity %q: use off, info, warning or error", name)
}

// Object names what a finding is about.
type Object struct {
	// Kind is queue, exchange, binding, policy or operator_policy.
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// String renders the object as `queue "orders.shipping"`.
func (o Object) String() string { return fmt.Sprintf("%s %q", o.Kind, o.Name) }

// Object kinds, spelled as everywhere else (pkg/kind).
const (
	KindQueue          = string(kind.Queue)
	KindExchange       = string(kind.Exchange)
	KindBinding        = string(kind.Binding)
	KindPolicy         = string(kind.Policy)
	KindOperatorPolicy = string(kind.OperatorPolicy)
	KindUser           = string(kind.User)
)

// Finding is one problem a rule found.
type Finding struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	// Message says what goes wrong at run time and how to fix it.
	Message string `json:"message"`
	Vhost   string `json:"vhost"`
	Object  Object `json:"object"`
	// Pos is where the object is declared, or, for a finding about one of
	// its arguments (policy keys, settings), where the file writes that
	// one; zero when unknown (for example a topology read from a broker).
	Pos topology.Pos `json:"-"`
	// RabbitMQVersion is the version the finding was judged for, set when
	// the rule's verdict or its advice depends on it ("" otherwise).
	RabbitMQVersion string `json:"rabbitmq_version,omitempty"`

	// objMeta carries the object's `# mqctl:ignore` list.
	objMeta topology.Meta
	// raise, when above the rule's default severity, is the severity this
	// finding has on the target version (a quorum queue without a
	// dead-letter exchange is an error on 4.x). A severity configured for
	// the rule replaces it.
	raise Severity
}

// Location renders where the finding is: file:line:col when known, else
// the vhost and object.
func (f Finding) Location() string {
	if p := f.Pos.String(); p != "" {
		return p
	}
	return fmt.Sprintf("vhost %q %s", f.Vhost, f.Object)
}

// Analyzer is one rule of the catalogue.
type Analyzer struct {
	ID       string
	Name     string
	Severity Severity // default severity
	// Summary is a one-line description of what the rule finds.
	Summary string
	// Run inspects one vhost. It fills Message, Object, Pos (and the
	// object's ignore list, through the Pass helpers); ID, Name, Severity
	// and Vhost are set by the runner.
	Run func(*Pass) []Finding
	// RunBroker, for a rule about the broker's own objects (users), runs
	// once per file instead of Run, on a Pass with no Vhost; its findings
	// have Vhost "".
	RunBroker func(*Pass) []Finding
}

// Pass is what an analyzer sees: one vhost, its routing simulator, the
// RabbitMQ version the file is judged for, and facts about its queues
// computed once and shared by every rule.
type Pass struct {
	Vhost *topology.Vhost
	// Broker holds the broker's own objects the file declares (users and
	// their tags), for the rules about access.
	Broker topology.Items
	// Vhosts are all the file's vhosts, for the rules that follow a
	// reference into another one (a shovel between two vhosts).
	Vhosts map[string]*topology.Vhost
	Sim    *route.Simulator
	// Version is the target RabbitMQ version (never zero: the default is
	// rmqversion.Default).
	Version rmqversion.Version
	// Env are the values the file took from the environment
	// (topology.Topology.Env): advice built from one names its variable.
	Env topology.EnvValues
	*facts
	// enabled reports whether a rule runs in this pass, so that one cause
	// reported by a rule is not reported again by another.
	enabled func(id string) bool
}

// Options tune a run.
type Options struct {
	// Rules overrides severities after the file's `lint.rules` section:
	// rule ID (or name) -> off | info | warning | error.
	Rules map[string]string
	// Version is the RabbitMQ version the file is judged for; the zero
	// Version is rmqversion.Default (4.3).
	Version rmqversion.Version
}

// Registry is a set of analyzers, looked up by ID or name.
type Registry struct {
	list  []*Analyzer
	byKey map[string]*Analyzer
}

// NewRegistry builds a registry; IDs and names must be unique and every
// analyzer complete.
func NewRegistry(analyzers ...*Analyzer) (*Registry, error) {
	r := &Registry{byKey: map[string]*Analyzer{}}
	for _, a := range analyzers {
		if a.ID == "" || a.Name == "" || (a.Run == nil) == (a.RunBroker == nil) || a.Severity == Off {
			return nil, fmt.Errorf("analyzer %q (%s) is incomplete: it needs an ID, a name, a default severity and one of Run and RunBroker", a.ID, a.Name)
		}
		for _, k := range []string{a.ID, a.Name} {
			if _, dup := r.byKey[k]; dup {
				return nil, fmt.Errorf("analyzer key %q is registered twice", k)
			}
			r.byKey[k] = a
		}
		r.list = append(r.list, a)
	}
	sort.SliceStable(r.list, func(i, j int) bool { return r.list[i].ID < r.list[j].ID })
	return r, nil
}

// Builtin returns a registry holding mqctl's rule catalogue.
func Builtin() *Registry {
	r, err := NewRegistry(builtinAnalyzers()...)
	if err != nil {
		// The built-in table is fixed at compile time and covered by tests.
		panic(err)
	}
	return r
}

// Analyzers returns the analyzers sorted by ID.
func (r *Registry) Analyzers() []*Analyzer { return append([]*Analyzer(nil), r.list...) }

// Lookup finds an analyzer by ID or name.
func (r *Registry) Lookup(key string) (*Analyzer, bool) {
	a, ok := r.byKey[key]
	return a, ok
}

// Run runs mqctl's built-in catalogue over every vhost of t. See
// Registry.Run.
func Run(t *topology.Topology, opts Options) ([]Finding, error) {
	return Builtin().Run(t, opts)
}

// Run runs every analyzer over every vhost of t, applies the severities
// configured in t.Lint.Rules and then opts.Rules, drops findings silenced
// by a `# mqctl:ignore ID` comment on their object, and returns them
// sorted by position, then ID. An unknown rule or severity in the
// configuration is an error naming where it was written.
func (r *Registry) Run(t *topology.Topology, opts Options) ([]Finding, error) {
	levels, configured, err := r.levels(t.Lint, opts.Rules)
	if err != nil {
		return nil, err
	}
	ver := opts.Version.OrDefault()
	enabled := func(id string) bool { return levels[id] != Off }
	var out []Finding
	for _, vn := range t.VhostNames() {
		v := t.Vhosts[vn]
		sim := newSimulator(v, ver)
		pass := &Pass{Vhost: v, Broker: t.Items, Vhosts: t.Vhosts, Sim: sim, Version: ver, Env: t.Env, facts: newFacts(v, sim), enabled: enabled}
		for _, a := range r.list {
			level := levels[a.ID]
			if level == Off || a.Run == nil {
				continue
			}
			for _, f := range a.Run(pass) {
				if f.objMeta.Ignores(a.ID) || f.objMeta.Ignores(a.Name) {
					continue
				}
				f.ID, f.Name, f.Severity, f.Vhost = a.ID, a.Name, level, v.Name
				if !configured[a.ID] && f.raise > level {
					f.Severity = f.raise
				}
				out = append(out, f)
			}
		}
	}
	broker := &Pass{Broker: t.Items, Vhosts: t.Vhosts, Version: ver, Env: t.Env, enabled: enabled}
	for _, a := range r.list {
		level := levels[a.ID]
		if level == Off || a.RunBroker == nil {
			continue
		}
		for _, f := range a.RunBroker(broker) {
			if f.objMeta.Ignores(a.ID) || f.objMeta.Ignores(a.Name) {
				continue
			}
			f.ID, f.Name, f.Severity = a.ID, a.Name, level
			out = append(out, f)
		}
	}
	// A value the file took from the environment may be a secret in any
	// field: no finding quotes it (topology.Topology.Env), nor names an
	// object by it (a binding's name holds its key), as the file wrote it.
	for i := range out {
		out[i].Message = t.Env.Hide(out[i].Message)
		out[i].Object.Name = t.Env.Written(out[i].Object.Name)
	}
	Sort(out)
	return out, nil
}

// levels resolves every rule's effective severity, and says which rules
// the file or the options set one for.
func (r *Registry) levels(cfg topology.LintConfig, overrides map[string]string) (map[string]Severity, map[string]bool, error) {
	levels := make(map[string]Severity, len(r.list))
	configured := map[string]bool{}
	for _, a := range r.list {
		levels[a.ID] = a.Severity
	}
	apply := func(rules map[string]string, where string, at map[string]topology.Pos) error {
		keys := make([]string, 0, len(rules))
		for k := range rules {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var unknown []string
		for _, k := range keys {
			a, ok := r.Lookup(k)
			if !ok {
				w := where
				if p := at[k].String(); p != "" {
					w = p + ": "
				}
				hint := "known rules: " + strings.Join(r.ids(), ", ")
				if near := suggest.Within(k, r.ids(), 1); near != "" {
					hint = fmt.Sprintf("did you mean %s?", near)
				}
				unknown = append(unknown, fmt.Sprintf("%slint.rules: unknown rule %q (%s)", w, k, hint))
				continue
			}
			s, err := ParseSeverity(strings.ToLower(strings.TrimSpace(rules[k])))
			if err != nil {
				return fmt.Errorf("%slint.rules.%s: %w", where, k, err)
			}
			levels[a.ID] = s
			configured[a.ID] = true
		}
		switch len(unknown) {
		case 0:
			return nil
		case 1:
			return errors.New(unknown[0])
		}
		return fmt.Errorf("%d unknown rules:\n  %s", len(unknown), strings.Join(unknown, "\n  "))
	}
	where := ""
	if p := cfg.Pos.String(); p != "" {
		where = p + ": "
	}
	if err := apply(cfg.Rules, where, cfg.RulePos); err != nil {
		return nil, nil, err
	}
	if err := apply(overrides, "", nil); err != nil {
		return nil, nil, err
	}
	return levels, configured, nil
}

func (r *Registry) ids() []string {
	out := make([]string, len(r.list))
	for i, a := range r.list {
		out[i] = a.ID
	}
	return out
}

// Sort orders findings by file position (findings without one last, by
// vhost and object), then rule ID, then message.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if az, bz := a.Pos.IsZero(), b.Pos.IsZero(); az != bz {
			return bz
		}
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		if a.Vhost != b.Vhost {
			return a.Vhost < b.Vhost
		}
		if a.Object != b.Object {
			if a.Object.Kind != b.Object.Kind {
				return a.Object.Kind < b.Object.Kind
			}
			return a.Object.Name < b.Object.Name
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Message < b.Message
	})
}

// Count returns the number of findings of each severity.
func Count(fs []Finding) (errors, warnings, infos int) {
	for _, f := range fs {
		switch f.Severity {
		case Error:
			errors++
		case Warning:
			warnings++
		case Info:
			infos++
		}
	}
	return errors, warnings, infos
}

// AtLeast reports whether any finding is at or above severity min (Off
// means never).
func AtLeast(fs []Finding, min Severity) bool {
	if min == Off {
		return false
	}
	for _, f := range fs {
		if f.Severity >= min {
			return true
		}
	}
	return false
}

// Pass helpers used by the analyzers to build findings about an object.

func (p *Pass) queueFinding(q *topology.Queue, format string, args ...any) Finding {
	return Finding{Object: Object{KindQueue, q.Name}, Pos: q.Pos, objMeta: q.Meta, Message: fmt.Sprintf(format, args...)}
}

func (p *Pass) exchangeFinding(x *topology.Exchange, format string, args ...any) Finding {
	return Finding{Object: Object{KindExchange, x.Name}, Pos: x.Pos, objMeta: x.Meta, Message: fmt.Sprintf(format, args...)}
}

func (p *Pass) bindingFinding(b *topology.Binding, format string, args ...any) Finding {
	return Finding{Object: Object{KindBinding, bindingName(b)}, Pos: b.Pos, objMeta: b.Meta, Message: fmt.Sprintf(format, args...)}
}

func (p *Pass) policyFinding(kind string, pol *topology.Policy, format string, args ...any) Finding {
	return Finding{Object: Object{kind, pol.Name}, Pos: pol.Pos, objMeta: pol.Meta, Message: fmt.Sprintf(format, args...)}
}

// at moves f to where the file writes its object's argument (or policy
// definition key) arg, the first of args the file says where it writes:
// a finding about one setting points at the setting, not at the object's
// name. A finding whose object the file does not place so stays put.
func (f Finding) at(args ...string) Finding {
	for _, a := range args {
		if p, ok := f.objMeta.ArgPos.Get(a); ok && !p.IsZero() {
			f.Pos = p
			return f
		}
	}
	return f
}

// bindingName names a binding for humans: `orders -> queue orders.shipping ["order.created"]`.
func bindingName(b *topology.Binding) string {
	src := b.Source
	if src == "" {
		src = "(default exchange)"
	}
	return fmt.Sprintf("%s -> %s %s [%q]", src, b.DestinationType, b.Destination, b.RoutingKey)
}

// argWritten names argument arg of an object as its file writes it
// (rmqversion.ArgWritten): "limits.max_length (x-max-length)", or the
// argument itself.
func argWritten(m topology.Meta, arg string) string { return rmqversion.ArgWritten(m, arg) }

// argsWritten is argWritten of each of args, joined with commas.
func argsWritten(m topology.Meta, args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = argWritten(m, a)
	}
	return strings.Join(out, ", ")
}

// argSource is route's QueueArgSource of queue q's argument arg, with the
// queue's own argument named as the file writes it (argWritten).
func (p *Pass) argSource(q *topology.Queue, arg string) string {
	if src := p.Sim.QueueArgSource(q.Name, arg); src != arg {
		return src
	}
	return argWritten(q.Meta, arg)
}

// argField is argWritten without the argument (rmqversion.ArgField): the
// typed field alone ("limits.max_length"), for a text that names it in
// parentheses already.
func argField(m topology.Meta, arg string) string { return rmqversion.ArgField(m, arg) }
