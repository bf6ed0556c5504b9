package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mqctl/mqctl/pkg/cli"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script/*.txtar and testdata/live/*.txtar")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mqctl": func() { os.Exit(cli.Main(context.Background(), os.Args[1:], cli.OSEnv())) },
		"exits": exits,
	})
}

// exits is `exits N mqctl ARGS...`: it runs mqctl with ARGS and succeeds
// when mqctl exits N (testscript's ! exec tells only that a command
// failed: --detailed-exitcode's 2 is not 1).
func exits() {
	if len(os.Args) < 3 || os.Args[2] != "mqctl" {
		fmt.Fprintln(os.Stderr, "usage: exits N mqctl ARGS...")
		os.Exit(2)
	}
	want, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "exits: %q is not an exit code\n", os.Args[1])
		os.Exit(2)
	}
	if got := cli.Main(context.Background(), os.Args[3:], cli.OSEnv()); got != want {
		fmt.Fprintf(os.Stderr, "exits: mqctl exited %d, want %d\n", got, want)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestScripts runs the end-to-end CLI scenarios in testdata/script: each
// txtar file runs real mqctl commands and checks their output and exit code.
// $REPO points at the repository root so scripts can use examples/ and
// testdata/; $CORPUS at the shared definitions corpus.
func TestScripts(t *testing.T) {
	t.Parallel()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	corpus := os.Getenv("MQCTL_CORPUS")
	if corpus == "" {
		corpus = filepath.Join(repo, "..", "shared", "corpus")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", repo)
			e.Setenv("CORPUS", corpus)
			e.Setenv("NO_COLOR", "1")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "corpus":
				_, err := os.Stat(filepath.Join(corpus, "definitions"))
				return err == nil, nil
			}
			return false, nil
		},
	})
}
