package rmqversion

import (
	"slices"
	"sort"
)

// Facts are what a live broker reports about itself. Where it reports a
// fact, the fact wins over the version's table: a broker's configuration
// may permit a deprecated feature its version denies by default (and
// Debian's 4.3.6 permits transient non-exclusive queues, which upstream
// 4.3.0 denies), or lack a plugin's exchange type. Offline commands have
// no facts and judge from the table alone.
type Facts struct {
	// Denied holds, for each deprecated feature whose state the broker
	// reports (GET /api/deprecated-features "state", which 4.0.5 leaves
	// out and 4.3 gives), whether it denies it.
	Denied map[string]bool
	// ExchangeTypes are the exchange types the broker offers (GET
	// /api/overview exchange_types), sorted; nil when unknown.
	ExchangeTypes []string
	// FeatureFlags holds, for each feature flag (GET /api/feature-flags),
	// whether it is enabled; nil when unknown (a user who may not read
	// them).
	FeatureFlags map[string]bool
	// Plugins are the plugins running on every node of the cluster that
	// runs (GET /api/nodes: its rabbitmq_* applications, else its
	// enabled_plugins), sorted; nil when unknown.
	Plugins []string
}

// WithFacts returns v judged with what the broker reports (nil: none).
func (v Version) WithFacts(f *Facts) Version {
	v.facts = f
	return v
}

// Facts returns what the broker reported, nil offline.
func (v Version) Facts() *Facts { return v.facts }

// denied reports the broker's own state of deprecated feature name, if it
// reports one.
func (v Version) denied(name string) (denied, known bool) {
	if v.facts == nil || v.facts.Denied == nil {
		return false, false
	}
	denied, known = v.facts.Denied[name]
	return denied, known
}

// DeniesTransientQueues reports whether the broker denies the deprecated
// feature transient_nonexcl_queues, when it says so (known); otherwise
// only a declaration tells (upstream 4.3.0 denies it by default, Debian's
// 4.3.6 permits it, and any 4.x may be configured either way).
func (v Version) DeniesTransientQueues() (denied, known bool) {
	return v.denied("transient_nonexcl_queues")
}

// OffersExchangeType reports whether the broker offers exchange type typ,
// and whether that is known: only a live broker tells (plugins add types);
// offline every type is taken as offered.
func (v Version) OffersExchangeType(typ string) (offered, known bool) {
	if v.facts == nil || v.facts.ExchangeTypes == nil {
		return true, false
	}
	return slices.Contains(v.facts.ExchangeTypes, typ), true
}

// RunsPlugin reports whether the broker runs plugin name on every node,
// when it says (known): only a live broker tells.
func (v Version) RunsPlugin(name string) (runs, known bool) {
	if v.facts == nil || v.facts.Plugins == nil {
		return false, false
	}
	return slices.Contains(v.facts.Plugins, name), true
}

// FeatureFlag reports whether the broker has feature flag name enabled,
// when it says (known).
func (v Version) FeatureFlag(name string) (enabled, known bool) {
	if v.facts == nil || v.facts.FeatureFlags == nil {
		return false, false
	}
	enabled, known = v.facts.FeatureFlags[name]
	return enabled, known
}

// Sort sorts the lists of f (for stable output and comparison).
func (f *Facts) Sort() {
	if f == nil {
		return
	}
	sort.Strings(f.ExchangeTypes)
	sort.Strings(f.Plugins)
}
