package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"

	"github.com/mqctl/mqctl/pkg/definitions"
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
