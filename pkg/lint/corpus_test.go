package lint

import (
	"bytes"
	"github.com/mqctl/mqctl/pkg/kind"
	"os"
	"path/filepath"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"
	gold "github.com/mqctl/mqctl/internal/golden"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestCorpus lints every definitions file of the corpus: no error, no
// panic, and every finding complete and attached to a declared object.
func TestCorpus(t *testing.T) {
	dir, files := corpus.Files(t)
	read := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tp, _, err := definitions.Read(filepath.Base(path), data)
		if err != nil {
			continue // not a readable definitions file (failing_case*, templates)
		}
		read++
		fs, err := Run(tp, Options{})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for _, f := range fs {
			if f.Vhost == "" && f.Object.Kind == string(kind.User) && tp.Items.Get(kind.User, f.Object.Name) != nil && f.ID != "" && f.Message != "" {
				continue // about one of the file's users, on the broker
			}
			v := tp.Vhosts[f.Vhost]
			if f.ID == "" || f.Message == "" || f.Severity == Off || v == nil {
				t.Errorf("%s: incomplete finding %+v", path, f)
				continue
			}
			switch f.Object.Kind {
			case KindQueue:
				if v.Queues[f.Object.Name] == nil {
					t.Errorf("%s: %s names undeclared queue %q", path, f.ID, f.Object.Name)
				}
			case KindExchange:
				if v.Exchanges[f.Object.Name] == nil {
					t.Errorf("%s: %s names undeclared exchange %q", path, f.ID, f.Object.Name)
				}
			}
		}
	}
	if read == 0 {
		t.Fatalf("no corpus file could be read from %s", dir)
	}
}

// TestCorpusFindings keeps every corpus file's findings, for RabbitMQ 4.3, 4.0
// and 3.10, in golden files (testdata/lint/corpus/<version>/<file>.json at
// the repository's root, as `mqctl lint --format json` prints them): a
// change to a rule shows as a change to the findings it makes on real
// files, to be read finding by finding before go test -update accepts it.
func TestCorpusFindings(t *testing.T) {
	_, files := corpus.Files(t)
	for _, line := range []string{"4.3", "4.0", "3.10"} {
		ver := rmqversion.MustParse(line)
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Base(path)
			tp, _, err := definitions.Read(base, data)
			if err != nil {
				continue // not a readable definitions file (failing_case*, templates)
			}
			fs, err := Run(tp, Options{Version: ver})
			if err != nil {
				t.Errorf("%s: %v", base, err)
				continue
			}
			var out bytes.Buffer
			if err := Write(&out, FormatJSON, fs, nil, ""); err != nil {
				t.Fatal(err)
			}
			gold.Check(t, filepath.Join("..", "..", "testdata", "lint", "corpus", line, base+".json"), out.Bytes())
		}
	}
}
