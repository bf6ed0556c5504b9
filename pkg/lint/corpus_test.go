package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/definitions"
)

// corpusDir is the shared corpus of real RabbitMQ definitions files:
// $MQCTL_CORPUS, or ../shared/corpus beside the repository.
func corpusDir() string {
	if d := os.Getenv("MQCTL_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "corpus")
}

// TestCorpus lints every definitions file of the corpus: no error, no
// panic, and every finding complete and attached to a declared object.
func TestCorpus(t *testing.T) {
	dir := filepath.Join(corpusDir(), "definitions")
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Skipf("corpus not found at %s (set MQCTL_CORPUS): %v", dir, err)
	}
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
