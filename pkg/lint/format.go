package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// Format is an output format of findings.
type Format string

// Output formats.
const (
	FormatText   Format = "text"
	FormatJSON   Format = "json"
	FormatSARIF  Format = "sarif"
	FormatGitHub Format = "github"
)

// Formats lists the supported formats.
func Formats() []Format { return []Format{FormatText, FormatJSON, FormatSARIF, FormatGitHub} }

// ParseFormat parses a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q: use text, json, sarif or github", s)
}

// JSONFormatVersion is the version of the JSON output's shape. It changes
// only when a field is removed or changes meaning.
const JSONFormatVersion = "1"

// Write renders findings in format f. SARIF lists the rules of registry r
// (the built-in catalogue when r is nil); version is mqctl's version for
// SARIF's tool.driver.version ("" leaves it out).
func Write(w io.Writer, f Format, findings []Finding, r *Registry, version string) error {
	if r == nil {
		r = Builtin()
	}
	switch f {
	case FormatText:
		return writeText(w, findings)
	case FormatJSON:
		return writeJSON(w, findings)
	case FormatSARIF:
		return writeSARIF(w, findings, r, version)
	case FormatGitHub:
		return writeGitHub(w, findings)
	}
	return fmt.Errorf("unknown format %q: use text, json, sarif or github", f)
}

// Summary renders the counts: "2 errors, 1 warning, 0 infos", or "no findings".
func Summary(findings []Finding) string {
	if len(findings) == 0 {
		return "no findings"
	}
	e, w, i := Count(findings)
	return fmt.Sprintf("%s, %s, %s", plural(e, "error"), plural(w, "warning"), plural(i, "info"))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func writeText(w io.Writer, findings []Finding) error {
	var sb strings.Builder
	for _, f := range findings {
		fmt.Fprintf(&sb, "%s: %s %s %s\n", f.Location(), f.Severity, f.ID, f.Message)
	}
	sb.WriteString(Summary(findings))
	sb.WriteByte('\n')
	_, err := io.WriteString(w, sb.String())
	return err
}

// The report of lint --format json in its own types: Object and
// topology.Pos are the model's, whose tags would otherwise define part of
// the report (TestJSONEveryField pins it).
type jsonFinding struct {
	ID       string     `json:"id"`
	Name     string     `json:"name"`
	Severity Severity   `json:"severity"`
	Message  string     `json:"message"`
	Vhost    string     `json:"vhost"`
	Object   jsonObject `json:"object"`
	Pos      *jsonPos   `json:"pos,omitempty"`
	// RabbitMQVersion is the version a version-dependent finding was
	// judged for.
	RabbitMQVersion string `json:"rabbitmq_version,omitempty"`
}

type jsonObject struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type jsonPos struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

type jsonSummary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
}

type jsonReport struct {
	FormatVersion string        `json:"format_version"`
	Findings      []jsonFinding `json:"findings"`
	Summary       jsonSummary   `json:"summary"`
}

func writeJSON(w io.Writer, findings []Finding) error {
	rep := jsonReport{FormatVersion: JSONFormatVersion, Findings: []jsonFinding{}}
	for _, f := range findings {
		jf := jsonFinding{
			ID: f.ID, Name: f.Name, Severity: f.Severity, Message: f.Message, Vhost: f.Vhost,
			Object: jsonObject{Kind: f.Object.Kind, Name: f.Object.Name}, RabbitMQVersion: f.RabbitMQVersion,
		}
		if !f.Pos.IsZero() {
			jf.Pos = &jsonPos{File: f.Pos.File, Line: f.Pos.Line, Column: f.Pos.Col}
		}
		rep.Findings = append(rep.Findings, jf)
	}
	rep.Summary.Errors, rep.Summary.Warnings, rep.Summary.Infos = Count(findings)
	return encodeJSON(w, rep)
}

func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// SARIF 2.1.0, the subset code-scanning tools read.

const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifToolURI = "https://github.com/mqctl/mqctl"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	Name                 string        `json:"name"`
	ShortDescription     sarifText     `json:"shortDescription"`
	DefaultConfiguration sarifRuleConf `json:"defaultConfiguration"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	case Info:
		return "note"
	}
	return "none"
}

func writeSARIF(w io.Writer, findings []Finding, r *Registry, version string) error {
	driver := sarifDriver{Name: "mqctl", Version: version, InformationURI: sarifToolURI, Rules: []sarifRule{}}
	index := map[string]int{}
	for i, a := range r.Analyzers() {
		index[a.ID] = i
		driver.Rules = append(driver.Rules, sarifRule{
			ID: a.ID, Name: a.Name,
			ShortDescription:     sarifText{Text: a.Summary},
			DefaultConfiguration: sarifRuleConf{Level: sarifLevel(a.Severity)},
		})
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Results: []sarifResult{}}
	for _, f := range findings {
		res := sarifResult{RuleID: f.ID, RuleIndex: index[f.ID], Level: sarifLevel(f.Severity), Message: sarifText{Text: f.Message}}
		loc := sarifLocation{LogicalLocations: []sarifLogical{{
			Name:               f.Object.Name,
			FullyQualifiedName: fmt.Sprintf("vhost %q %s", f.Vhost, f.Object),
			Kind:               f.Object.Kind,
		}}}
		if f.Pos.File != "" {
			phys := &sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(f.Pos.File)}}
			if f.Pos.Line > 0 {
				phys.Region = &sarifRegion{StartLine: f.Pos.Line, StartColumn: f.Pos.Col}
			}
			loc.PhysicalLocation = phys
		}
		res.Locations = []sarifLocation{loc}
		run.Results = append(run.Results, res)
	}
	return encodeJSON(w, sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// sarifURI turns a file name into a URI reference: relative paths stay
// relative (with forward slashes), absolute ones become file:// URIs.
func sarifURI(file string) string {
	p := filepath.ToSlash(file)
	if filepath.IsAbs(file) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: strings.TrimPrefix(p, "./")}).String()
}

// GitHub Actions workflow commands.

func writeGitHub(w io.Writer, findings []Finding) error {
	var sb strings.Builder
	for _, f := range findings {
		cmd := "notice"
		switch f.Severity {
		case Error:
			cmd = "error"
		case Warning:
			cmd = "warning"
		}
		var props []string
		msg := f.Message
		if f.Pos.File != "" {
			props = append(props, "file="+ghProperty(f.Pos.File))
			if f.Pos.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", f.Pos.Line))
			}
			if f.Pos.Col > 0 {
				props = append(props, fmt.Sprintf("col=%d", f.Pos.Col))
			}
		} else {
			msg = fmt.Sprintf("vhost %q %s: %s", f.Vhost, f.Object, msg)
		}
		props = append(props, "title="+ghProperty(f.ID+" "+f.Name))
		fmt.Fprintf(&sb, "::%s %s::%s\n", cmd, strings.Join(props, ","), ghData(msg))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// ghData escapes a workflow command's message.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
