package lint

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"

	"github.com/mqctl/mqctl/pkg/topology"
)

// sampleFindings lints a small topology with an error, a warning and an
// info, one of them on an object without a source position.
func sampleFindings(t *testing.T) []Finding {
	t.Helper()
	b := newBuilder()
	b.exchange("orders", "topic")
	b.exchange("orders.dlx", "direct")
	b.dlqPair("orders.shipping", "orders", "order.created", "orders.dlx", topology.Args{argMaxLen: 1000, argOverflow: "reject-publish"})
	b.v.Queues["orders.shipping.dlq"].Arguments = topology.Args{argTTL: int64(86400000)}
	b.queue("orders.audit", topology.Args{argDLX: "orders.dlx", argDLRK: "orders.audit", argTTL: int64(1000)})
	b.bind("orders", "orders.audit", "order.#")
	b.bind("orders", "orders.shipping", "notify.customer")
	b.exchange("legacy", "fanout").Pos = topology.Pos{}
	return b.run(t, Options{})
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	gold.Check(t, filepath.Join("testdata", name), got)
}

func TestFormatsGolden(t *testing.T) {
	fs := sampleFindings(t)
	if e, w, i := Count(fs); e != 1 || w != 1 || i != 1 {
		t.Fatalf("the sample needs one error, one warning and one info, got:\n%s", describe(fs))
	}
	for _, f := range []struct {
		format Format
		file   string
	}{
		{FormatText, "findings.txt"},
		{FormatJSON, "findings.json"},
		{FormatSARIF, "findings.sarif"},
		{FormatGitHub, "findings.github"},
	} {
		t.Run(string(f.format), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, f.format, fs, nil, "1.2.3"); err != nil {
				t.Fatal(err)
			}
			golden(t, f.file, buf.Bytes())
		})
	}
}

func TestTextNoFindings(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, FormatText, nil, nil, ""); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "no findings\n" {
		t.Errorf("got %q", buf.String())
	}
	buf.Reset()
	if err := Write(&buf, FormatJSON, nil, nil, ""); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Findings []any `json:"findings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &rep); err != nil || rep.Findings == nil {
		t.Errorf("an empty JSON report must hold an empty findings array: %s", buf.String())
	}
}

func TestJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, FormatJSON, sampleFindings(t), nil, ""); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		FormatVersion string `json:"format_version"`
		Findings      []struct {
			ID, Name, Severity, Message, Vhost string
			Object                             struct{ Kind, Name string }
			Pos                                *struct {
				File   string
				Line   int
				Column int
			}
		}
		Summary struct{ Errors, Warnings, Infos int }
	}
	if err := json.Unmarshal(buf.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.FormatVersion != "1" || len(rep.Findings) == 0 || rep.Summary.Errors != 1 {
		t.Fatalf("unexpected report: %+v", rep)
	}
	sawNoPos := false
	for _, f := range rep.Findings {
		if f.ID == "" || f.Name == "" || f.Message == "" || f.Vhost != "/" || f.Object.Kind == "" || f.Object.Name == "" {
			t.Errorf("incomplete finding %+v", f)
		}
		if f.Severity != "error" && f.Severity != "warning" && f.Severity != "info" {
			t.Errorf("severity %q", f.Severity)
		}
		if f.Pos == nil {
			sawNoPos = true
		} else if f.Pos.File != "topology.yaml" || f.Pos.Line == 0 || f.Pos.Column == 0 {
			t.Errorf("position %+v", f.Pos)
		}
	}
	if !sawNoPos {
		t.Error("a finding without a position must leave pos out")
	}
}

// TestSARIFStructure checks the fields code-scanning tools require of a
// SARIF 2.1.0 log.
func TestSARIFStructure(t *testing.T) {
	fs := sampleFindings(t)
	var buf bytes.Buffer
	if err := Write(&buf, FormatSARIF, fs, nil, "1.2.3"); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name    string `json:"name"`
					Version string `json:"version"`
					Rules   []struct {
						ID               string `json:"id"`
						Name             string `json:"name"`
						ShortDescription struct {
							Text string `json:"text"`
						} `json:"shortDescription"`
						DefaultConfiguration struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine   int `json:"startLine"`
							StartColumn int `json:"startColumn"`
						} `json:"region"`
					} `json:"physicalLocation"`
					LogicalLocations []struct {
						FullyQualifiedName string `json:"fullyQualifiedName"`
					} `json:"logicalLocations"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatalf("SARIF does not decode into the expected shape: %v", err)
	}
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif-2.1.0") || len(log.Runs) != 1 {
		t.Fatalf("version %q schema %q runs %d", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	d := run.Tool.Driver
	if d.Name != "mqctl" || d.Version != "1.2.3" || len(d.Rules) != len(Builtin().Analyzers()) {
		t.Fatalf("driver %q %q with %d rules", d.Name, d.Version, len(d.Rules))
	}
	levels := map[string]bool{"error": true, "warning": true, "note": true}
	for _, r := range d.Rules {
		if r.ID == "" || r.Name == "" || r.ShortDescription.Text == "" || !levels[r.DefaultConfiguration.Level] {
			t.Errorf("incomplete rule %+v", r)
		}
	}
	if len(run.Results) != len(fs) {
		t.Fatalf("%d results for %d findings", len(run.Results), len(fs))
	}
	physical := 0
	for i, r := range run.Results {
		if r.RuleIndex < 0 || r.RuleIndex >= len(d.Rules) || d.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %d: ruleIndex %d does not point at %s", i, r.RuleIndex, r.RuleID)
		}
		if !levels[r.Level] || r.Message.Text == "" || len(r.Locations) != 1 {
			t.Errorf("result %d incomplete: %+v", i, r)
			continue
		}
		loc := r.Locations[0]
		if len(loc.LogicalLocations) != 1 || loc.LogicalLocations[0].FullyQualifiedName == "" {
			t.Errorf("result %d: no logical location", i)
		}
		if p := loc.PhysicalLocation; p != nil {
			physical++
			if p.ArtifactLocation.URI != "topology.yaml" || p.Region.StartLine < 1 || p.Region.StartColumn < 1 {
				t.Errorf("result %d: physical location %+v", i, *p)
			}
		}
	}
	if physical == 0 || physical == len(run.Results) {
		t.Errorf("the sample has findings with and without a file position; %d of %d have one", physical, len(run.Results))
	}
}

func TestGitHubEscaping(t *testing.T) {
	fs := []Finding{{ID: "MQ103", Name: "dead-letters-unrouted", Severity: Error, Vhost: "/",
		Message: "100% lost\nreally", Object: Object{KindQueue, "q"},
		Pos: topology.Pos{File: "dir,a/b:c.yaml", Line: 4, Col: 9}}}
	var buf bytes.Buffer
	if err := Write(&buf, FormatGitHub, fs, nil, ""); err != nil {
		t.Fatal(err)
	}
	want := "::error file=dir%2Ca/b%3Ac.yaml,line=4,col=9,title=MQ103 dead-letters-unrouted::100%25 lost%0Areally\n"
	if buf.String() != want {
		t.Errorf("got  %q\nwant %q", buf.String(), want)
	}
}

func TestSARIFURI(t *testing.T) {
	for in, want := range map[string]string{
		"topology.yaml":          "topology.yaml",
		"./ops/topology.yaml":    "ops/topology.yaml",
		"/srv/app/topology.yaml": "file:///srv/app/topology.yaml",
		"my ops/topology.yaml":   "my%20ops/topology.yaml",
	} {
		if got := sarifURI(in); got != want {
			t.Errorf("sarifURI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats() {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "text, json, sarif or github") {
		t.Errorf("unknown format error: %v", err)
	}
}
