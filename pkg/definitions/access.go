package definitions

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Users, their limits, permissions and topic permissions, vhost limits,
// shovels and federation objects (SPEC §9), mapped onto the items
// (topology.Item) that the engine's live read makes of the same broker
// state (pkg/broker's item drivers): the same settings (pkg/kind names
// them), normalised the same way, the same secret settings
// (kind.SecretFields).

// MqctlGlobalParameter is mqctl's own record of the broker's users
// (ownership.GlobalParameter): not topology, left out as the live export
// leaves it out, and not reported as skipped.
const MqctlGlobalParameter = "mqctl-managed"

// parameterKind is a kind whose objects a definitions file holds as
// runtime parameters (kind.Spec.Parameter): listValued says the value is a
// list (an upstream set), not a mapping.
type parameterKind struct {
	k          kind.Kind
	listValued bool
}

// parameterKinds maps the runtime parameter components read as items to
// their kinds, from the registry: a kind added there is read here too.
func parameterKinds() map[string]parameterKind {
	out := map[string]parameterKind{}
	for _, s := range kind.VhostItems() {
		if comp, ok := s.Parameter(); ok {
			out[comp] = parameterKind{k: s.Kind, listValued: s.Item.List != nil}
		}
	}
	return out
}

// The limits RabbitMQ accepts (rabbit_vhost_limit, rabbit_auth_backend_internal).
var (
	vhostLimitKeys = []string{"max-connections", "max-queues"}
	userLimitKeys  = []string{"max-connections", "max-channels"}
)

// accessState is what the reader gathers of these kinds before it puts
// them into the topology.
type accessState struct {
	users map[string]bool // the users the file lists
	// vhost limits by vhost, merged from the vhost objects and the
	// vhost-limits parameters, with where they were first given.
	limits    map[string]topology.Args
	limitsPos map[string]topology.Pos
}

// put adds item it, read from entry o, to items, unless an entry before o
// lists the same item and mqctl keeps that one (duplicate).
func (r *reader) put(items *topology.Items, it *topology.Item, vhost string, o *object) {
	if r.duplicate(it.Kind, o.what, vhost, it.Name, o) {
		return
	}
	it.Pos = o.pos
	items.Put(it)
}

// declareUsers marks the kinds of the users section as covered when the
// file has a "users" key: a whole-broker export lists every user, as a
// live read does; a per-vhost export has none and covers none.
func (r *reader) declareUsers(top map[string]any) {
	if _, ok := top["users"]; !ok {
		return
	}
	r.t.Declare(kind.User)
	for _, k := range kind.User.Item().Nested { // its limits, permissions, topic permissions
		r.t.Declare(k)
	}
}

// defaultHashingAlgorithm is the algorithm RabbitMQ's import gives a hash
// that names none (rabbit_auth_backend_internal:hashing_algorithm/2): MD5
// for exports of 3.0 to 3.5, else the broker's default, SHA-256.
func defaultHashingAlgorithm(top map[string]any) string {
	v, _ := top["rabbit_version"].(string)
	if v == "" {
		v, _ = top["rabbitmq_version"].(string)
	}
	for _, old := range []string{"3.0.", "3.1.", "3.2.", "3.3.", "3.4.", "3.5."} {
		if strings.HasPrefix(v, old) {
			return "rabbit_password_hashing_md5"
		}
	}
	return "rabbit_password_hashing_sha256"
}

func (r *reader) readUsers(top map[string]any) {
	r.declareUsers(top)
	defaultAlg := defaultHashingAlgorithm(top)
	for _, o := range r.list(top, "users", "user") {
		name, ok := o.name("user")
		if !ok {
			continue
		}
		if name == "" {
			o.errorf("the user name is empty (RabbitMQ rejects this file); give the user a name")
			continue
		}
		settings := topology.Args{}
		hash, hasHash := o.str(kind.UserPasswordHash)
		pw, hasPw := o.str(kind.UserPassword)
		alg, hasAlg := o.str(kind.UserHashingAlgorithm)
		tags, tagsOK := o.tags()
		limits, limitsOK := o.limits("limits", "user", userLimitKeys)
		switch {
		case hasHash && hasPw:
			o.errorf("both \"password\" and \"password_hash\" are set (RabbitMQ rejects this file: both_password_and_password_hash_are_provided); keep one")
			continue
		case hasPw:
			// The broker would hash it with a salt of its own: what the
			// file says is the password itself, as an mqctl file's
			// password setting (a secret, never shown).
			settings[kind.UserPassword] = pw
			r.rep.warnf("%s: the file holds the password itself, not its hash; export writes a ${VAR} placeholder for it, never the password", o.what)
		default:
			// No hash means a user that cannot log in with a password
			// (the live read gives password_hash "").
			settings[kind.UserPasswordHash] = hash
			if !hasAlg || alg == "" {
				alg = defaultAlg
			}
			settings[kind.UserHashingAlgorithm] = alg
		}
		if !tagsOK || !limitsOK {
			continue
		}
		settings[kind.UserTags] = tags
		r.acc.users[name] = true
		r.put(&r.t.Items, &topology.Item{Kind: kind.User, Name: name, Settings: settings, Secret: kind.SecretFields(kind.User)}, "", o)
		if len(limits) > 0 {
			r.t.Items.Put(&topology.Item{Kind: kind.UserLimits, Name: name, Settings: limits, Meta: topology.Meta{Pos: o.pos}})
		}
	}
}

// tags reads a user's tags as the live read keeps them (kind.TagList):
// from "a,b" (3.x) or ["a","b"] (3.13+), sorted, without duplicates or
// empty tags.
func (o *object) tags() ([]any, bool) {
	var tags []string
	switch t := o.m[kind.UserTags].(type) {
	case nil:
	case string:
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				tags = append(tags, s)
			}
		}
	case []any:
		for i, e := range t {
			s, ok := e.(string)
			if !ok {
				o.fieldErrorf([]string{kind.UserTags}, "tags[%d] must be a string, found %s", i, jsonKind(e))
				return nil, false
			}
			if s = strings.TrimSpace(s); s != "" {
				tags = append(tags, s)
			}
		}
	default:
		o.fieldErrorf([]string{kind.UserTags}, "\"tags\" must be a string such as \"administrator,management\" or a list of strings, found %s", jsonKind(t))
		return nil, false
	}
	return kind.TagList(tags), true
}

// limits reads a limits object (field of o) of owner ("user" or "vhost"):
// an object of integers keyed by allowed, or null, or an empty list (as
// 4.x exports write "no limits"), or a list of such objects. RabbitMQ
// rejects a file with another key or a value that is not an integer.
func (o *object) limits(field, owner string, allowed []string) (topology.Args, bool) {
	v, ok := o.m[field]
	if !ok || v == nil {
		return nil, true
	}
	var parts []map[string]any
	switch x := v.(type) {
	case map[string]any:
		parts = []map[string]any{x}
	case []any:
		for _, e := range x {
			m, isMap := e.(map[string]any)
			if !isMap {
				parts = nil
				ok = false
				break
			}
			parts = append(parts, m)
		}
	default:
		ok = false
	}
	if !ok {
		o.fieldErrorf([]string{field}, "%q must be a JSON object such as {%q: 10}, found %s (RabbitMQ rejects this file)", field, allowed[0], jsonKind(v))
		return nil, false
	}
	out := topology.Args{}
	valid := true
	for _, m := range parts {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !slices.Contains(allowed, k) {
				o.fieldErrorf([]string{field, k}, "unknown %s limit %q (RabbitMQ rejects this file); %s limits are %s", owner, k, owner, strings.Join(allowed, " and "))
				valid = false
				continue
			}
			n, isInt := topology.Normalize(m[k]).(int64)
			if !isInt {
				o.fieldErrorf([]string{field, k}, "%s limit %s must be an integer, found %s (RabbitMQ rejects this file)", owner, k, describe(m[k]))
				valid = false
				continue
			}
			out[k] = n
		}
	}
	if !valid {
		return nil, false
	}
	return out, true
}

// addVhostLimits merges limits into vhost's (a vhost object's "limits"
// and its vhost-limits parameter say the same; the parameter is what the
// import sets, so it wins).
func (r *reader) addVhostLimits(vhost string, limits topology.Args, pos topology.Pos, fromParameter bool) {
	if len(limits) == 0 {
		return
	}
	have := r.acc.limits[vhost]
	if have == nil {
		have = topology.Args{}
		r.acc.limits[vhost] = have
		r.acc.limitsPos[vhost] = pos
	}
	for k, n := range limits {
		if old, ok := have[k]; ok && old != n {
			r.rep.warnf("vhost %q: limit %s is %v at %s and %v at %s; kept the vhost-limits parameter's", vhost, k, old, r.acc.limitsPos[vhost], n, pos)
			if !fromParameter {
				continue
			}
		}
		have[k] = n
	}
}

// putVhostLimits adds each vhost's limits as its vhost_limits item.
func (r *reader) putVhostLimits() {
	for vh, l := range r.acc.limits {
		it := &topology.Item{Kind: kind.VhostLimits, Name: vh, Settings: l, Meta: topology.Meta{Pos: r.acc.limitsPos[vh]}}
		r.t.Vhost(vh).Items.Put(it)
	}
}

// userOf reads the "user" field of a permission and names the object
// after it.
func (o *object) userOf(kind string) (string, bool) {
	u, ok := o.str("user")
	if !ok {
		if v, has := o.m["user"]; !has || v == nil {
			o.errorf("the %s names no user (RabbitMQ rejects this file); add \"user\"", kind)
		}
		return "", false
	}
	if u == "" {
		o.errorf("\"user\" is empty (RabbitMQ rejects this file); name the user the %s is for", kind)
		return "", false
	}
	o.what = fmt.Sprintf("%s of user %q", kind, u)
	return u, true
}

// required reads the string fields of o that RabbitMQ's import requires.
func (o *object) required(fields ...string) (map[string]string, bool) {
	out := map[string]string{}
	ok := true
	for _, f := range fields {
		s, present := o.str(f)
		if !present {
			if v, has := o.m[f]; !has || v == nil {
				o.errorf("no %q (RabbitMQ rejects this file); add it (\"^$\" allows nothing)", f)
			}
			ok = false
			continue
		}
		out[f] = s
	}
	return out, ok
}

// readNested reads, for each kind nested by vhost in users (kind.ByVhost:
// permissions, topic permissions), its list in the definitions document
// (its Section): each entry names its user and vhost and gives the
// kind's fields, all of which RabbitMQ's import requires. The entries of
// a kind whose item holds a list By one field (a topic permission per
// exchange) are gathered into one item per user and vhost.
func (r *reader) readNested(top map[string]any) {
	for _, k := range kind.User.Item().Nested {
		if s, _ := kind.Of(k); s.Item.Shape == kind.ByVhost {
			r.readByVhost(top, s)
		}
	}
}

func (r *reader) readByVhost(top map[string]any, s kind.Spec) {
	ls := s.Item.List
	fields := s.Kind.FieldNames()
	if ls != nil {
		fields = ls.FieldNames()
	}
	for _, o := range r.list(top, s.Section, s.Label) {
		user, ok := o.userOf(s.Label)
		if !ok {
			continue
		}
		vh, ok := o.vhost()
		if !ok {
			continue
		}
		f, ok := o.required(fields...)
		if !ok {
			continue
		}
		settings := topology.Args{}
		for k, v := range f {
			settings[k] = v
		}
		if ls == nil {
			r.put(&r.t.Vhost(vh).Items, &topology.Item{Kind: s.Kind, Name: user, Settings: settings}, vh, o)
			continue
		}
		by, rest := ls.Entry(settings)
		items := &r.t.Vhost(vh).Items
		it := items.Get(s.Kind, user)
		if it == nil {
			it = &topology.Item{Kind: s.Kind, Name: user, Settings: topology.Args{}, Meta: topology.Meta{Pos: o.pos}}
			items.Put(it)
		}
		if r.duplicate(s.Kind, fmt.Sprintf("%s on %s %q", o.what, ls.By, by), vh, user+"\x00"+by, o) {
			continue
		}
		it.Settings[by] = rest
	}
}

// readItemParameter reads a runtime parameter of a component read as an
// item (a shovel, a federation upstream or upstream set), as the live read
// does: a mapping's settings normalised, an upstream set's members as its
// one list setting.
func (r *reader) readItemParameter(o *object, comp string) {
	pk := parameterKinds()[comp]
	label := pk.k.Label()
	name, ok := o.str("name")
	if !ok {
		if v, has := o.m["name"]; !has || v == nil {
			o.errorf("the %s parameter has no name (RabbitMQ rejects this file); add \"name\"", comp)
		}
		return
	}
	o.what = fmt.Sprintf("%s %q", label, name)
	if name == "" {
		o.errorf("the name is empty (RabbitMQ rejects this file)")
		return
	}
	vh, ok := o.vhost()
	if !ok {
		return
	}
	var settings topology.Args
	switch v := o.m["value"].(type) {
	case map[string]any:
		if pk.listValued {
			o.errorf("the value of a %s parameter must be a list of members such as [{\"upstream\": \"dc2\"}], found an object", comp)
			return
		}
		settings = topology.Args(v).Normalized()
		if settings == nil {
			settings = topology.Args{}
		}
	case []any:
		if !pk.listValued {
			o.errorf("the value of a %s parameter must be a JSON object of its settings, found an array", comp)
			return
		}
		for i, e := range v {
			if _, isMap := e.(map[string]any); !isMap {
				o.errorf("member %d of the set must be a JSON object such as {\"upstream\": \"dc2\"}, found %s (RabbitMQ rejects this file)", i, jsonKind(e))
				return
			}
		}
		settings = topology.Args{kind.UpstreamSetList: topology.Normalize(v)}
	default:
		want := "a JSON object of its settings"
		if pk.listValued {
			want = "a list of members"
		}
		o.errorf("the value of a %s parameter must be %s, found %s (RabbitMQ rejects this file)", comp, want, jsonKind(o.m["value"]))
		return
	}
	sp, _ := kind.Of(pk.k)
	for _, req := range sp.Required {
		if !settings.Has(req) {
			o.errorf("the %s parameter has no %q (RabbitMQ rejects it); add it", comp, req)
			return
		}
	}
	it := &topology.Item{Kind: pk.k, Name: name, Settings: settings, Secret: topology.SecretKeys(pk.k, settings)}
	r.put(&r.t.Vhost(vh).Items, it, vh, o)
}

// readVhostLimitsParameter reads a vhost-limits runtime parameter.
func (r *reader) readVhostLimitsParameter(o *object) {
	o.what = "vhost-limits parameter"
	vh, ok := o.vhost()
	if !ok {
		return
	}
	if l, isList := o.m["value"].([]any); isList && len(l) == 0 {
		// What RabbitMQ keeps, and exports, once every limit of the vhost
		// is cleared (DELETE /api/vhost-limits/{vhost}/{name}); its import
		// takes it as no limits.
		return
	}
	if _, isMap := o.m["value"].(map[string]any); !isMap {
		o.errorf("the value must be a JSON object such as {\"max-queues\": 100}, found %s (RabbitMQ rejects this file)", jsonKind(o.m["value"]))
		return
	}
	if l, ok := o.limits("value", "vhost", vhostLimitKeys); ok {
		r.addVhostLimits(vh, l, o.pos, true)
	}
}

func (r *reader) readGlobalParameters(top map[string]any) {
	for _, o := range r.list(top, "global_parameters", "global parameter") {
		// mqctl's own records: the owner "" one and each owner's ("mqctl-managed.<owner>").
		if n, _ := o.m["name"].(string); n == MqctlGlobalParameter || strings.HasPrefix(n, MqctlGlobalParameter+".") {
			continue
		}
		r.rep.skip(SkipGlobalParameters, 1)
	}
}

// warnUnlistedUsers notes permissions of users the file does not list: an
// mqctl file declares permissions under their user, so export cannot
// write them (RabbitMQ's import needs such a user on the broker already).
func (r *reader) warnUnlistedUsers() {
	listed := r.t.Declares(kind.User)
	for _, vn := range r.t.VhostNames() {
		v := r.t.Vhosts[vn]
		for _, k := range kind.User.Item().Nested {
			for _, u := range v.Items.Names(k) { // the ByVhost kinds': the others are not in a vhost
				if !listed {
					// A file without users (a vhost's own export, say):
					// nothing to declare them under.
					r.rep.warnf("%s of user %q in vhost %q: the file has no users, and an mqctl file declares permissions under their user, so export leaves them out (export the users too: GET /api/definitions)", k.Label(), u, vn)
					continue
				}
				if !r.acc.users[u] {
					r.rep.warnf("%s of user %q in vhost %q: the file lists no user %q; an mqctl file declares permissions under their user, so export leaves them out", k.Label(), u, vn, u)
				}
			}
		}
	}
}
