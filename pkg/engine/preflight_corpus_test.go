package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestPreflightOnTheCorpus plans every corpus file (in fresh vhosts, its
// users, shovels and federation left out) with the broker asked, the
// version table switched off, and compares the broker's answer with the
// table's: where the table refuses, the broker refuses the same objects;
// where the broker refuses what the table does not know, the test names
// it (preflightOnly), and the preflight is what stops it.
func TestPreflightOnTheCorpus(t *testing.T) {
	t.Parallel()
	_, files := corpus.Files(t)
	b := testbroker.New(t)
	c, err := broker.Connect(context.Background(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(c, engine.Options{})
	engine.WithoutTable(eng)
	var (
		mu     sync.Mutex
		report []string
	)
	t.Cleanup(func() {
		sort.Strings(report)
		t.Logf("RabbitMQ %s, the corpus: %d files with objects the broker refuses and the table does not know:\n  %s", b.Version(), len(report), strings.Join(report, "\n  "))
	})
	for _, path := range files {
		base := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		src, _, err := definitions.Read(base, data)
		if err != nil {
			continue
		}
		t.Run(base, func(t *testing.T) {
			t.Parallel()
			desired := topology.New()
			for _, vn := range src.VhostNames() {
				v := src.Vhosts[vn]
				fresh := testbroker.Name(t, "mqctl-test")
				v.Name = fresh
				for _, k := range []kind.Kind{kind.Shovel, kind.FederationUpstream, kind.FederationUpstreamSet} {
					delete(v.Items, k)
				}
				desired.Vhosts[fresh] = v
			}
			if len(desired.Vhosts) == 0 {
				return
			}
			table := b.Version().WithFacts(c.RabbitMQVersion().Facts()).Check(desired)
			res, err := eng.Plan(context.Background(), desired, engine.PlanOptions{Preflight: true})
			if err != nil {
				t.Fatalf("plan --preflight: %v", err)
			}
			pf := res.Preflight
			if pf.Skipped != "" {
				t.Fatalf("the preflight did not run: %s", pf.Skipped)
			}
			// The objects the broker refuses, as the table names them.
			broker := map[string]string{}
			for _, r := range pf.Refusals {
				for _, o := range r.Objects {
					broker[fmt.Sprintf("%s %q", o.Kind.Label(), o.Name)] = r.Reason
				}
			}
			tableObjs := map[string]bool{}
			var re *rmqversion.RefusalsError
			if errors.As(table, &re) {
				for _, r := range re.Refusals {
					tableObjs[r.Object] = true
					if _, ok := broker[r.Object]; !ok {
						t.Errorf("the table refuses %s (%s), the broker does not", r.Object, r.Reason)
					}
				}
			}
			var only []string
			for obj, why := range broker {
				if !tableObjs[obj] {
					only = append(only, obj+": "+why)
				}
			}
			sort.Strings(only)
			want := preflightOnly[b.Version().Line()][base]
			if strings.Join(only, "\n") != strings.Join(want, "\n") {
				t.Errorf("RabbitMQ %s: the broker refuses, and the table does not know:\n  %s\nwant:\n  %s", b.Version(), strings.Join(only, "\n  "), strings.Join(want, "\n  "))
			}
			if len(only) > 0 {
				mu.Lock()
				report = append(report, base+":\n    "+strings.Join(only, "\n    "))
				mu.Unlock()
			}
		})
	}
}

// preflightOnly are, per RabbitMQ line and corpus file, the objects the
// broker refuses that the version table does not know, with the broker's
// words: what only the preflight stops before any change. None: the
// policies of adrienKoumgangT__distriqueue that hold queue arguments
// (x-queue-type, x-max-in-memory-length) or max-priority, which every
// version refuses, were listed here until the table learnt them
// (rmqversion.NeverPolicyKey).
var preflightOnly = map[string]map[string][]string{}
