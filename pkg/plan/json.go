package plan

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The JSON plan ("mqctl plan -o json") is the public, versioned view of a
// plan for CI: its types are pkg/planjson's, documented field by field in
// docs/plan-json.md. It is not the saved plan (WriteSaved): it leaves out
// what only apply needs (the broker fingerprint) and never shows an
// unknown value as absent.

// Position is where an object is declared, as the JSON documents write it
// (pkg/planjson): what is known of it, and nothing when nothing is.
type Position = pj.Position

// PositionOf is p as a Position, nil when p is unknown.
func PositionOf(p topology.Pos) *Position {
	if p.IsZero() {
		return nil
	}
	return &Position{File: p.File, Line: p.Line, Column: p.Col}
}

func posOf(p *Position) topology.Pos {
	if p == nil {
		return topology.Pos{}
	}
	return topology.Pos{File: p.File, Line: p.Line, Col: p.Column}
}

// atStake reports whether c can lose messages, so that the JSON plan
// carries its messages and consumers.
func atStake(c *Change) bool {
	// A vhost's delete takes its queues, and their messages, with it
	// (kind.Spec.Container).
	return c.RisksMessages() || (c.Kind.Container() && c.Action == Delete)
}

// WriteJSON writes the JSON plan (format_version FormatVersion), the
// stable contract for CI documented in docs/plan-json.md. It is written as
// it streams: each change, and each route and dead letter of the flows, is
// made the document's as it is written and let go of (writeJSONPlan),
// never the whole document, which at 50,002 objects took plan -o json to
// 133 MB (plan: 94).
func WriteJSON(w io.Writer, p *Plan) error {
	if len(p.Env) > 0 {
		// A value the file took from the environment may be a secret:
		// the plan shows what the file wrote in its place, and marks a
		// field change whose value it is (topology.EnvValues.HideJSON),
		// the document going through the hider as it is written.
		return hideJSON(w, p)
	}
	bw := bufio.NewWriter(w)
	if err := writeJSONPlan(&indentWriter{w: bw}, p); err != nil {
		return err
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// hideJSON writes the JSON plan of p without the values its file took
// from the environment, as topology.EnvValues.HideJSON makes the whole
// document, as it streams: the document is written (writeJSONPlan) into
// the hider (WriteHiddenJSON) a part at a time.
func hideJSON(w io.Writer, p *Plan) error {
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		bw := bufio.NewWriter(pw)
		err := writeJSONPlan(&indentWriter{w: bw}, p)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err) // nil: the hider reads the end of the document
		written <- err
	}()
	err := p.Env.WriteHiddenJSON(w, pr, "  ")
	// A hider that stopped early leaves the writer nowhere to write.
	pr.CloseWithError(errors.New("the JSON plan's hider stopped"))
	if werr := <-written; err == nil && werr != nil {
		err = werr
	}
	return err
}

// jsonPlanHead is the JSON plan's document but for the fields written
// apart (writeJSONPlan): its changes (nil in Plan) and its flows, the
// last field, here null (for the hole) or absent.
type jsonPlanHead struct {
	*pj.Plan
	Flows json.RawMessage `json:"flows,omitempty"`
}

// writeJSONPlan writes JSONOf(p), as json.MarshalIndent does with a
// two-space indent, as it streams.
func writeJSONPlan(e *indentWriter, p *Plan) error {
	successor := p.Successors()
	holes := []hole{arrayHole("changes", len(p.Changes), false, func(i int) pj.Change { return jsonChange(&p.Changes[i], successor) })}
	doc := jsonPlanHead{Plan: jsonHead(p)}
	if p.Flows != nil || len(p.FlowsUnknown) > 0 {
		doc.Flows = json.RawMessage("null")
		holes = append(holes, flowsHole("flows", p.Flows, p.FlowsUnknown))
	}
	return e.object(&doc, "", holes...)
}

// ReadJSON reads a JSON plan written by WriteJSON (for programs and tests
// that check one), refusing other format versions. The plan has no
// fingerprint: "mqctl apply" takes a saved plan (ReadSaved), never this.
func ReadJSON(r io.Reader) (*Plan, error) {
	var doc pj.Plan
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a mqctl JSON plan: %w", err)
	}
	if doc.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("plan format_version %q is not supported by this mqctl (it reads %q): make the plan again with this version", doc.FormatVersion, FormatVersion)
	}
	p, err := fromJSON(&doc)
	if err != nil {
		return nil, fmt.Errorf("not a valid mqctl JSON plan: %w", err)
	}
	return p, nil
}

// JSONOf is p as the JSON plan's document.
func JSONOf(p *Plan) *pj.Plan {
	doc := jsonHead(p)
	doc.Changes = make([]pj.Change, len(p.Changes))
	successor := p.Successors()
	for i := range p.Changes {
		doc.Changes[i] = jsonChange(&p.Changes[i], successor)
	}
	doc.Flows = jsonFlows(p)
	return doc
}

// jsonHead is JSONOf(p) without its changes and its flows (both nil),
// most of the document: WriteJSON makes each change and each entry of
// the flows as it writes it.
func jsonHead(p *Plan) *pj.Plan {
	s := p.Summary()
	doc := &pj.Plan{
		FormatVersion: FormatVersion, Vhosts: nonNil(p.Vhosts),
		Unmanaged: jsonRefs(p.Unmanaged), Adopt: jsonRefs(p.Adopt), Unread: []pj.Unread{}, ChangedOutside: []pj.Outside{}, Stale: jsonRefs(p.Stale),
		Summary:   pj.Summary{Create: s.Create, Update: s.Update, Replace: s.Replace, Delete: s.Delete},
		Preflight: jsonPreflight(p.Preflight), Held: []pj.Held{}, Notes: nonNil(p.Notes),
		Owner: p.Owner,
	}
	if len(p.Preexisting) > 0 {
		doc.Preexisting = jsonRefs(p.Preexisting)
	}
	if t := p.TakeOver; t != nil {
		doc.TakeOver = &pj.TakeOver{From: t.From, Objects: t.Objects, Kept: t.Kept, Users: t.Users}
	}
	for _, r := range p.AllRefusals() {
		doc.Refusals = append(doc.Refusals, pj.Refused{Cause: r.Cause, Vhost: r.Vhost, Kind: string(r.Kind), Name: r.Name, Object: r.Object, Key: r.Key, Pos: PositionOf(r.Pos),
			Reason: r.Reason, Fix: r.Fix, Owners: r.Owners})
	}
	for _, r := range p.RecordChanges() {
		doc.Records = append(doc.Records, pj.RecordChange{Cause: r.Cause, Objects: r.Objects, Reason: r.Reason})
	}
	for _, o := range p.Others {
		doc.OtherOwners = append(doc.OtherOwners, pj.OtherOwned{Ref: jsonRef(o.ObjectRef), Owners: o.Owners, Shared: o.Shared})
	}
	for _, u := range p.Unread {
		doc.Unread = append(doc.Unread, pj.Unread{Vhost: u.Vhost, Kind: string(u.Kind), Reason: u.Reason, Declared: u.Declared})
	}
	for _, o := range p.ChangedOutside {
		doc.ChangedOutside = append(doc.ChangedOutside, pj.Outside{Ref: jsonRef(o.ObjectRef), Reason: o.Reason, Deleted: o.Deleted})
	}
	for _, h := range p.Held {
		doc.Held = append(doc.Held, pj.Held{Ref: jsonRef(h.ObjectRef), Action: string(h.Action), Cause: h.Cause, Reason: h.Reason})
	}
	return doc
}

// jsonChange is c as the JSON plan's change; successor is the plan's
// (Plan.Successors).
func jsonChange(c *Change, successor func(*Change) (string, bool)) pj.Change {
	jc := pj.Change{
		Action: string(c.Action), Kind: string(c.Kind), Vhost: c.Vhost, Name: c.Name, Before: jsonObject(c.Before), After: jsonObject(c.After),
		Reason: c.Reason, Pos: PositionOf(c.Pos),
	}
	for _, f := range c.Fields {
		jc.Fields = append(jc.Fields, pj.Field{Field: f.Field, Before: f.Before, After: f.After, Forces: f.Forces, Masked: f.Masked})
	}
	for _, b := range c.Bindings {
		jc.Bindings = append(jc.Bindings, *jsonBinding(b))
	}
	if atStake(c) {
		m, n, least := c.Messages, c.Consumers, c.MessagesAtLeast
		jc.Messages, jc.Consumers, jc.MessagesAtLeast = &m, &n, &least
		if c.Delayed > 0 {
			d := c.Delayed
			jc.MessagesDelayed = &d
		}
		if c.DeadLettering > 0 {
			d := c.DeadLettering
			jc.MessagesDlx = &d
		}
		if c.Messages > 0 {
			if to, created := successor(c); to != "" {
				jc.Successor = &pj.Successor{Queue: to, Created: created, Advice: MoveAdvice(*c, to, created)}
			}
		}
	}
	return jc
}

// fromJSON is the document as a plan (without the fingerprint, the prints
// and anything else only the saved plan carries); an error when its flows
// name a list of queues they do not hold.
func fromJSON(doc *pj.Plan) (*Plan, error) {
	p := &Plan{
		FormatVersion: FormatVersion, Vhosts: emptyToNil(doc.Vhosts), Changes: make([]Change, len(doc.Changes)),
		Unmanaged: planRefs(doc.Unmanaged), Adopt: planRefs(doc.Adopt), Stale: planRefs(doc.Stale), Preexisting: planRefs(doc.Preexisting),
		Notes: emptyToNil(doc.Notes), Preflight: planPreflight(doc.Preflight), Owner: doc.Owner,
	}
	if t := doc.TakeOver; t != nil {
		p.TakeOver = &TakeOver{From: t.From, Objects: t.Objects, Kept: t.Kept, Users: t.Users}
	}
	for _, r := range doc.Refusals {
		if r.Cause == RefusedPreflight {
			continue // the preflight's, read with it
		}
		p.Refusals = append(p.Refusals, Refused{Cause: r.Cause, Vhost: r.Vhost, Kind: Kind(r.Kind), Name: r.Name, Object: r.Object, Key: r.Key, Pos: posOf(r.Pos),
			Reason: r.Reason, Fix: r.Fix, Owners: r.Owners})
	}
	for _, o := range doc.OtherOwners {
		p.Others = append(p.Others, OtherOwned{ObjectRef: planRef(o.Ref), Owners: o.Owners, Shared: o.Shared})
	}
	var err error
	if p.Flows, p.FlowsUnknown, err = planFlows(doc.Flows); err != nil {
		return nil, err
	}
	for _, u := range doc.Unread {
		p.Unread = append(p.Unread, Unread{Vhost: u.Vhost, Kind: Kind(u.Kind), Reason: u.Reason, Declared: u.Declared})
	}
	for _, o := range doc.ChangedOutside {
		p.ChangedOutside = append(p.ChangedOutside, Outside{ObjectRef: planRef(o.Ref), Reason: o.Reason, Deleted: o.Deleted})
	}
	for _, h := range doc.Held {
		p.Held = append(p.Held, Held{ObjectRef: planRef(h.Ref), Action: Action(h.Action), Cause: h.Cause, Reason: h.Reason})
	}
	for i, jc := range doc.Changes {
		c := Change{
			Action: Action(jc.Action), Kind: Kind(jc.Kind), Vhost: jc.Vhost, Name: jc.Name,
			Before: planObject(jc.Before), After: planObject(jc.After), Reason: jc.Reason, Pos: posOf(jc.Pos),
		}
		for _, f := range jc.Fields {
			c.Fields = append(c.Fields, FieldChange{Field: f.Field, Before: f.Before, After: f.After, Forces: f.Forces, Masked: f.Masked})
		}
		for _, b := range jc.Bindings {
			c.Bindings = append(c.Bindings, planBinding(b))
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
		if jc.MessagesDelayed != nil {
			c.Delayed = *jc.MessagesDelayed
		}
		if jc.MessagesDlx != nil {
			c.DeadLettering = *jc.MessagesDlx
		}
		normalizeChange(&c)
		p.Changes[i] = c
	}
	return p, nil
}

func jsonRef(r ObjectRef) pj.Ref { return pj.Ref{Kind: string(r.Kind), Vhost: r.Vhost, Name: r.Name} }

func planRef(r pj.Ref) ObjectRef { return ObjectRef{Kind: Kind(r.Kind), Vhost: r.Vhost, Name: r.Name} }

func jsonRefs(rs []ObjectRef) []pj.Ref {
	out := make([]pj.Ref, len(rs))
	for i, r := range rs {
		out[i] = jsonRef(r)
	}
	return out
}

func planRefs(rs []pj.Ref) []ObjectRef {
	if len(rs) == 0 {
		return nil
	}
	out := make([]ObjectRef, len(rs))
	for i, r := range rs {
		out[i] = planRef(r)
	}
	return out
}

func jsonBinding(b *topology.Binding) *pj.Binding {
	return &pj.Binding{Source: b.Source, Destination: b.Destination, DestinationType: b.DestinationType, RoutingKey: b.RoutingKey, Arguments: b.Arguments}
}

func planBinding(b pj.Binding) *topology.Binding {
	return &topology.Binding{Source: b.Source, Destination: b.Destination, DestinationType: b.DestinationType, RoutingKey: b.RoutingKey, Arguments: b.Arguments}
}

func jsonPreflight(pf *Preflight) *pj.Preflight {
	if pf == nil {
		return nil
	}
	out := &pj.Preflight{Vhost: pf.Vhost, Tried: pf.Tried, Objects: pf.Objects, Skipped: pf.Skipped, Untried: jsonRefsAt(pf.Untried),
		Swept: pf.Swept, SweepError: pf.SweepErr, CleanupError: pf.CleanupErr}
	for _, r := range pf.Refusals {
		out.Refusals = append(out.Refusals, pj.Refusal{Kind: string(r.Kind), Reason: r.Reason, Objects: jsonRefsAt(r.Objects)})
	}
	return out
}

func planPreflight(pf *pj.Preflight) *Preflight {
	if pf == nil {
		return nil
	}
	out := &Preflight{Vhost: pf.Vhost, Tried: pf.Tried, Objects: pf.Objects, Skipped: pf.Skipped, Untried: planRefsAt(pf.Untried),
		Swept: pf.Swept, SweepErr: pf.SweepError, CleanupErr: pf.CleanupError}
	for _, r := range pf.Refusals {
		out.Refusals = append(out.Refusals, Refusal{Kind: Kind(r.Kind), Reason: r.Reason, Objects: planRefsAt(r.Objects)})
	}
	return out
}

func jsonRefsAt(os []ObjectAt) []pj.RefAt {
	var out []pj.RefAt
	for _, o := range os {
		out = append(out, pj.RefAt{Ref: jsonRef(o.ObjectRef), Pos: PositionOf(o.Pos)})
	}
	return out
}

func planRefsAt(rs []pj.RefAt) []ObjectAt {
	var out []ObjectAt
	for _, r := range rs {
		out = append(out, ObjectAt{ObjectRef: planRef(r.Ref), Pos: posOf(r.Pos)})
	}
	return out
}
