package definitions

import (
	"bytes"
	"encoding/json"
)

// sectionKeys are the top-level sections of a definitions file, each a
// JSON array (GET /api/definitions, rabbitmqctl export_definitions).
var sectionKeys = []string{"queues", "exchanges", "bindings", "vhosts", "users", "permissions",
	"topic_permissions", "policies", "operator_policies", "parameters", "global_parameters", "vhost_limits"}

// Is reports whether data is a RabbitMQ definitions file rather than an
// mqctl topology file: a JSON object with RabbitMQ's metadata keys
// (rabbit_version, …) or, without mqctl's version, one of the sections a
// definitions file holds as a list. The loader and apply FILE use it to
// point a user who gives one where the other goes to mqctl export --from.
func Is(data []byte) bool {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	for k := range metadataKeys {
		if _, ok := top[k]; ok {
			return true
		}
	}
	// mqctl's own JSON: a topology (version), a plan (format_version), a
	// saved plan (kind).
	for _, k := range []string{"version", "format_version", "kind"} {
		if _, ok := top[k]; ok {
			return false
		}
	}
	for _, k := range sectionKeys {
		if v := bytes.TrimSpace(top[k]); len(v) > 0 && v[0] == '[' {
			return true
		}
	}
	return false
}
