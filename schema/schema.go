// Package schema ships the JSON Schema (draft 2020-12) of mqctl topology
// files, for editors (yaml-language-server: $schema=…) and CI checks.
//
// The schema follows the loader (pkg/loader): it rejects unknown fields and
// bad enum values, and accepts a ${VAR} placeholder wherever a number or a
// boolean is expected, since placeholders are replaced before types are
// checked. Rules that need more than one file or the expanded topology
// (duplicates across files, typed-versus-raw argument conflicts) are the
// loader's alone.
package schema

import (
	"bytes"
	_ "embed"
)

//go:embed mqctl.schema.json
var document []byte

// ID is the schema's $id.
const ID = "https://raw.githubusercontent.com/mqctl/mqctl/main/schema/mqctl.schema.json"

// JSON returns the schema document. The slice is a copy.
func JSON() []byte { return bytes.Clone(document) }
