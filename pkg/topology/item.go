package topology

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
)

// Item is an object of a kind the broker changes in place and that mqctl
// handles through one generic path (kind.Spec.Item says what is the kind's
// own; pkg/broker reads and writes it): vhost limits, users and their
// access, shovels and federation objects. Its identity is (kind, vhost,
// name); Settings are what the broker stores, normalised
// (Args.Normalized), as the file declares them and the broker reports
// them.
type Item struct {
	Kind     kind.Kind
	Name     string
	Settings Args
	// Secret names the settings that are secrets (a password, a URI that
	// may hold credentials): every JSON form of the item masks them
	// (MarshalJSON, Masked), and export writes ${VAR} placeholders.
	Secret []string
	// Refs maps a secret setting to the environment variable the file
	// took it from ("${VAR}" and nothing else), so that a saved plan, which
	// holds no secret, can still be applied.
	Refs map[string]string
	// Defaults maps a secret setting (or list item, RefKey) the file wrote
	// as exactly one variable with a default, ${VAR:-default}, to it: the
	// default is written in the file (lint's MQ803). Like Sugar it is the
	// file's, not the broker's state.
	Defaults map[string]VarDefault `json:"-"`
	// Sugar is the file's sugar the item was expanded from, as the file
	// reader decoded it (a permission of a user's access section:
	// *loader.Access), nil for an item written as it is or read from a
	// broker. Like Meta it is not part of the broker's state: no diff,
	// print, export or JSON form of the item reads it.
	Sugar any `json:"-"`
	Meta
}

// VarDefault is a variable and the default the file wrote for it
// (${Var:-Default}).
type VarDefault struct{ Var, Default string }

// Items holds items by kind and name.
type Items map[kind.Kind]map[string]*Item

// Put adds it, replacing an item of the same kind and name.
func (s *Items) Put(it *Item) {
	if *s == nil {
		*s = Items{}
	}
	if (*s)[it.Kind] == nil {
		(*s)[it.Kind] = map[string]*Item{}
	}
	(*s)[it.Kind][it.Name] = it
}

// Get returns the item of kind k named name, nil when there is none.
func (s Items) Get(k kind.Kind, name string) *Item { return s[k][name] }

// Names returns the names of the items of kind k, sorted.
func (s Items) Names(k kind.Kind) []string {
	out := make([]string, 0, len(s[k]))
	for n := range s[k] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Delete removes the item of kind k named name.
func (s Items) Delete(k kind.Kind, name string) {
	delete(s[k], name)
	if len(s[k]) == 0 {
		delete(s, k)
	}
}

// IsSecret reports whether setting key of it is a secret.
func (it *Item) IsSecret(key string) bool {
	for _, s := range it.Secret {
		if s == key {
			return true
		}
	}
	return false
}

// Masked is it's settings with every secret masked (MaskSecret): what any
// output may show.
func (it *Item) Masked() Args {
	if len(it.Secret) == 0 {
		return it.Settings
	}
	out := it.Settings.Clone()
	for _, k := range it.Secret {
		if v, ok := out[k]; ok {
			out[k] = MaskSecret(v)
		}
	}
	return out
}

// RefKey is the key in Item.Refs of element i of list setting key (a
// shovel's list of URIs); i < 0 is the whole setting.
func RefKey(key string, i int) string {
	if i < 0 {
		return key
	}
	return key + "[" + strconv.Itoa(i) + "]"
}

// SecretPart is a part of a secret setting that holds a secret: the whole
// value, or one element of a list (Index ≥ 0).
type SecretPart struct {
	Key   string
	Index int    // -1: the whole value
	Ref   string // the variable it was taken from, "" when none
}

// SecretParts lists the parts of it's secret settings that hide something
// when masked (a password; a URI's credentials), each with the variable
// the file took it from, if any.
func (it *Item) SecretParts() []SecretPart {
	var out []SecretPart
	for _, key := range it.Secret {
		v, ok := it.Settings[key]
		if !ok || fmt.Sprint(MaskSecret(v)) == fmt.Sprint(v) {
			continue
		}
		if ref, ok := it.Refs[key]; ok {
			out = append(out, SecretPart{Key: key, Index: -1, Ref: ref})
			continue
		}
		list, isList := v.([]any)
		if !isList {
			out = append(out, SecretPart{Key: key, Index: -1})
			continue
		}
		for i, e := range list {
			if fmt.Sprint(MaskSecret(e)) == fmt.Sprint(e) {
				continue
			}
			out = append(out, SecretPart{Key: key, Index: i, Ref: it.Refs[RefKey(key, i)]})
		}
	}
	return out
}

// SetSecretPart puts val in the place of part p.
func (it *Item) SetSecretPart(p SecretPart, val string) {
	if p.Index < 0 {
		it.Settings[p.Key] = val
		return
	}
	if list, ok := it.Settings[p.Key].([]any); ok && p.Index < len(list) {
		list = append([]any(nil), list...)
		list[p.Index] = val
		it.Settings[p.Key] = list
	}
}

// SecretKeys are the settings of an item of kind k, read from the broker
// or a definitions file, that hold secrets: the kind's (kind.Spec.Secret),
// and any other whose value is a URI with credentials, or a list holding
// one (a key the broker's validation would refuse, "src_uri", a URI where
// a number goes): what is shown, saved and exported as a secret.
func SecretKeys(k kind.Kind, settings Args) []string {
	keys := kind.SecretFields(k)
	for _, key := range settings.Keys() {
		if !slices.Contains(keys, key) && holdsCredentials(settings[key]) {
			keys = append(keys, key)
		}
	}
	return keys
}

// holdsCredentials reports whether v is a string with a URI's credentials
// (kind.MaskURI changes it), or a list holding one.
func holdsCredentials(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "://") && kind.MaskURI(x) != x
	case []any:
		return slices.ContainsFunc(x, holdsCredentials)
	}
	return false
}

// Mask is the mask of a secret that is not a URI.
const Mask = kind.Mask

// MaskSecret hides a secret value: a URI loses its password
// (kind.MaskURI: amqp://user:***@host/vhost); a list is masked item by
// item; anything else becomes Mask.
func MaskSecret(v any) any {
	switch x := v.(type) {
	case string:
		return kind.MaskURI(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = MaskSecret(e)
		}
		return out
	case nil:
		return nil
	}
	return Mask
}

// itemJSON is Item's JSON form: the settings masked.
type itemJSON struct {
	Kind     kind.Kind         `json:"kind"`
	Name     string            `json:"name"`
	Settings Args              `json:"settings,omitempty"`
	Secret   []string          `json:"secret,omitempty"`
	Refs     map[string]string `json:"refs,omitempty"`
}

// MarshalJSON writes the item with its secrets masked: no JSON form of an
// item (a plan, a saved plan, validate's output) holds a secret.
func (it Item) MarshalJSON() ([]byte, error) {
	return json.Marshal(itemJSON{Kind: it.Kind, Name: it.Name, Settings: it.Masked(), Secret: it.Secret, Refs: it.Refs})
}

// UnmarshalJSON reads an item written by MarshalJSON: its secrets are
// masked, Refs says where to find those the file took from the
// environment.
func (it *Item) UnmarshalJSON(data []byte) error {
	var j itemJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*it = Item{Kind: j.Kind, Name: j.Name, Settings: j.Settings, Secret: j.Secret, Refs: j.Refs}
	return nil
}
