package plan

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/mqctl/mqctl/pkg/topology"
)

// The JSON plan ("mqctl plan -o json") is the public, versioned view of a
// plan for CI, documented field by field in docs/plan-json.md. It is not
// the saved plan (WriteSaved): it leaves out what only apply needs (the
// broker fingerprint) and never shows an unknown value as absent.

// Position is where an object is declared, in the JSON documents: what is
// known of it, and nothing when nothing is (never an empty object).
type Position struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// PositionOf is p as a Position, nil when p is unknown.
func PositionOf(p topology.Pos) *Position {
	if p.IsZero() {
		return nil
	}
	return &Position{File: p.File, Line: p.Line, Column: p.Col}
}

func (p *Position) pos() topology.Pos {
	if p == nil {
		return topology.Pos{}
	}
	return topology.Pos{File: p.File, Line: p.Line, Col: p.Column}
}

type jsonPlan struct {
	FormatVersion string       `json:"format_version"`
	Vhosts        []string     `json:"vhosts"`
	Changes       []jsonChange `json:"changes"`
	Unmanaged     []ObjectRef  `json:"unmanaged"`
	Adopt         []ObjectRef  `json:"adopt"`
	Unread        []Unread     `json:"unread"`
	// ChangedOutside and Stale: the ownership record's side (additive in
	// format_version 2).
	ChangedOutside []Outside   `json:"changed_outside"`
	Stale          []ObjectRef `json:"stale"`
	Summary        Summary     `json:"summary"`
	// Preflight: the broker's answer, when it was asked (additive in
	// format_version 2).
	Preflight *Preflight `json:"preflight,omitempty"`
	// Held: the changes mqctl holds back, and why (additive in
	// format_version 2).
	Held []Held `json:"held"`
	// Notes: what mqctl told the user on stderr while it made the plan
	// (additive in format_version 2).
	Notes []string `json:"notes"`
}

type jsonChange struct {
	Action   Action              `json:"action"`
	Kind     Kind                `json:"kind"`
	Vhost    string              `json:"vhost"`
	Name     string              `json:"name"`
	Before   *Object             `json:"before,omitempty"`
	After    *Object             `json:"after,omitempty"`
	Fields   []jsonField         `json:"fields,omitempty"`
	Reason   string              `json:"reason,omitempty"`
	Bindings []*topology.Binding `json:"bindings,omitempty"`
	// Present exactly when the change can lose messages (a queue or vhost
	// deleted, a queue replaced), 0 included.
	Messages        *int64    `json:"messages,omitempty"`
	Consumers       *int64    `json:"consumers,omitempty"`
	MessagesAtLeast *bool     `json:"messages_at_least,omitempty"`
	Pos             *Position `json:"pos,omitempty"`
}

type jsonField struct {
	Field  string `json:"field"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	Forces bool   `json:"forces_replace"`
}

// atStake reports whether c can lose messages, so that the JSON plan
// carries its messages and consumers.
func atStake(c *Change) bool {
	switch c.Kind {
	case KindQueue:
		return c.Action == Delete || c.Action == Replace
	case KindVhost:
		return c.Action == Delete
	}
	return false
}

// WriteJSON writes the JSON plan (format_version FormatVersion), the
// stable contract for CI documented in docs/plan-json.md.
func WriteJSON(w io.Writer, p *Plan) error {
	doc := jsonPlan{
		FormatVersion: FormatVersion, Vhosts: nonNil(p.Vhosts), Changes: make([]jsonChange, len(p.Changes)),
		Unmanaged: nonNil(p.Unmanaged), Adopt: nonNil(p.Adopt), Unread: nonNil(p.Unread), Summary: p.Summary(),
		ChangedOutside: nonNil(p.ChangedOutside), Stale: nonNil(p.Stale), Preflight: p.Preflight, Held: nonNil(p.Held), Notes: nonNil(p.Notes),
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		jc := jsonChange{
			Action: c.Action, Kind: c.Kind, Vhost: c.Vhost, Name: c.Name, Before: c.Before, After: c.After,
			Reason: c.Reason, Bindings: c.Bindings, Pos: PositionOf(c.Pos),
		}
		for _, f := range c.Fields {
			jc.Fields = append(jc.Fields, jsonField{Field: f.Field, Before: f.Before, After: f.After, Forces: f.Forces})
		}
		if atStake(c) {
			m, n, least := c.Messages, c.Consumers, c.MessagesAtLeast
			jc.Messages, jc.Consumers, jc.MessagesAtLeast = &m, &n, &least
		}
		doc.Changes[i] = jc
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// ReadJSON reads a JSON plan written by WriteJSON (for programs and tests
// that check one), refusing other format versions. The plan has no
// fingerprint: "mqctl apply" takes a saved plan (ReadSaved), never this.
func ReadJSON(r io.Reader) (*Plan, error) {
	var doc jsonPlan
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a mqctl JSON plan: %w", err)
	}
	if doc.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("plan format_version %q is not supported by this mqctl (it reads %q): make the plan again with this version", doc.FormatVersion, FormatVersion)
	}
	p := &Plan{
		FormatVersion: FormatVersion, Vhosts: emptyToNil(doc.Vhosts), Changes: make([]Change, len(doc.Changes)),
		Unmanaged: emptyToNil(doc.Unmanaged), Adopt: emptyToNil(doc.Adopt), Unread: emptyToNil(doc.Unread),
		ChangedOutside: emptyToNil(doc.ChangedOutside), Stale: emptyToNil(doc.Stale), Held: emptyToNil(doc.Held), Notes: emptyToNil(doc.Notes),
	}
	for i, jc := range doc.Changes {
		c := Change{
			Action: jc.Action, Kind: jc.Kind, Vhost: jc.Vhost, Name: jc.Name, Before: jc.Before, After: jc.After,
			Reason: jc.Reason, Bindings: jc.Bindings, Pos: jc.Pos.pos(),
		}
		for _, f := range jc.Fields {
			c.Fields = append(c.Fields, FieldChange{Field: f.Field, Before: f.Before, After: f.After, Forces: f.Forces})
		}
		if jc.Messages != nil {
			c.Messages = *jc.Messages
		}
		if jc.Consumers != nil {
			c.Consumers = *jc.Consumers
		}
		if jc.MessagesAtLeast != nil {
			c.MessagesAtLeast = *jc.MessagesAtLeast
		}
		normalizeChange(&c)
		p.Changes[i] = c
	}
	return p, nil
}
