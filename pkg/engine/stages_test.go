package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/preflight"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestEveryKindHasEveryStage runs the case of every kind of the registry
// (kind.All, kindCases) through the stages that need no broker, so that a
// kind missing one fails without a broker, in a second: loaded, diffed
// (one create of it), shown in the text plan, read back from the JSON and
// the saved plan, given an apply step (apply.Check refuses a kind
// without its object, apply.Order gives it a step), tried by the
// preflight or exempt by a named fact of its Spec, exported and loaded
// again as it was, and, for a kind carried as topology.Item, read
// through its broker driver (a management API that holds nothing
// answers; a kind without a driver is an error before any request). The
// typed kinds' requests are their apply object's. Against every broker,
// TestEveryKindThroughEveryStage runs the same cases through the rest:
// written, read back, visible, in the broker's definitions file as the
// definitions reader reads it, changed and deleted.
func TestEveryKindHasEveryStage(t *testing.T) {
	t.Parallel()
	c := emptyBroker(t)
	for _, spec := range kind.All() {
		t.Run(string(spec.Kind), func(t *testing.T) {
			t.Parallel()
			kc := caseOf(t, spec.Kind)
			f := &fixture{t: t, vhost: "kinds"}
			name := strings.ReplaceAll(kc.name, "${VHOST}", f.vhost)
			k := &kindRun{f: f, spec: spec, name: name, password: "pw-kinds"}

			// Loaded and diffed against a broker that holds nothing.
			desired := k.file(kc.with, kc.topWith)
			p := plan.Diff(desired, plan.Current{Live: topology.Live{State: topology.New()}, Managed: plan.Managed{}})
			ch := k.change(p, plan.Create)
			// The plan's three forms.
			k.forms(p)
			// Apply: an object for its steps, and a step.
			if err := apply.Check(p, apply.Options{}); err != nil {
				t.Errorf("apply.Check: %v", err)
			}
			if !hasStep(apply.Order(p), ch) {
				t.Errorf("apply.Order has no step for %s %q", spec.Kind, name)
			}
			// The preflight tries it, or lists it untried for a fact of its
			// Spec (untriable).
			trials, untried := preflight.Shapes(p, nil)
			tried := false
			for _, tr := range trials {
				tried = tried || tr.Kind == spec.Kind
			}
			listed := false
			for _, o := range untried {
				listed = listed || o.Kind == spec.Kind
			}
			// Not listed and not tried: its tryer found nothing the broker
			// validates (a vhost with only a description).
			switch why := untriable(spec); {
			case tried && listed:
				t.Errorf("the preflight both tries %s %q and lists it untried", spec.Kind, name)
			case listed && why == "":
				t.Errorf("the preflight does not try %s, and no fact of its Spec says why a throwaway vhost cannot (untriable)", spec.Plural)
			}
			// Exported, and loaded again as it was.
			var y bytes.Buffer
			if err := export.WriteYAML(&y, desired, export.Options{}); err != nil {
				t.Fatal(err)
			}
			own := map[string]bool{}
			for _, v := range export.Variables(desired) {
				own[v.Name] = strings.Contains(v.What, fmt.Sprintf("user %q", name))
			}
			exported, err := loader.LoadBytes("export.yaml", y.Bytes(), loader.Options{LookupEnv: func(v string) (string, bool) {
				if own[v] {
					return k.password, true
				}
				return "x", true
			}})
			if err != nil {
				t.Fatalf("load the export: %v\n%s", err, y.String())
			}
			// Both ways: a plan leaves alone what mqctl did not make, so
			// an export that lost the object shows only when the file is
			// planned over it.
			for _, way := range []struct {
				what          string
				desired, held *topology.Topology
			}{{"the export over the file", exported, desired}, {"the file over the export", desired, exported}} {
				again := plan.Diff(way.desired, plan.Current{Live: topology.Live{State: way.held}, Managed: plan.Managed{}})
				if c := k.changeIn(again); c != nil {
					t.Errorf("%s plans %s %s %q:\n%s", way.what, c.Action, spec.Kind, name, y.String())
				}
			}
			// Its broker driver.
			if spec.Item != nil {
				vh := f.vhost
				if spec.Broker {
					vh = ""
				}
				if _, err := c.ReadItems(context.Background(), spec.Kind, vh); err != nil {
					t.Errorf("read %s through the broker driver: %v", spec.Plural, err)
				}
			}
		})
	}
}

// untriable is the fact of spec that keeps the preflight from trying an
// object of the kind in a throwaway vhost, "" for none: such an object
// is not the vhost's own, or acts beyond it.
func untriable(spec kind.Spec) string {
	owner, nested := spec.Kind.Owner()
	switch {
	case spec.Broker:
		return "it lives on the broker, not in a vhost"
	case nested:
		return "it is the access of " + owner.WithArticle() + ", who lives on the broker"
	case spec.ReachesOut:
		return "it acts beyond its vhost: a trial would move real messages"
	}
	return ""
}

// changeIn is p's change of k's object, nil for none (two fail the test).
func (k *kindRun) changeIn(p *plan.Plan) *plan.Change {
	k.f.t.Helper()
	var found *plan.Change
	for i := range p.Changes {
		if c := &p.Changes[i]; c.Kind == k.spec.Kind && c.Name == k.name {
			if found != nil {
				k.f.t.Fatalf("two changes of %s %q: %v", k.spec.Kind, k.name, changes(p))
			}
			found = c
		}
	}
	return found
}

// emptyBroker is a client of a management API that holds nothing: every
// listing is empty.
func emptyBroker(t *testing.T) *broker.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/whoami":
			fmt.Fprint(w, `{"name":"guest","tags":["administrator"]}`)
		case "/api/overview":
			fmt.Fprint(w, `{"rabbitmq_version":"4.3.6","cluster_name":"stub"}`)
		default:
			fmt.Fprint(w, `[]`)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := broker.Connect(t.Context(), broker.Config{Server: srv.URL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
