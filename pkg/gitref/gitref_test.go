package gitref

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repo makes a git repository with one commit of files, then changes the
// working tree's copy of each (so that only the commit holds the
// originals), and returns its directory.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("add", ".")
	run("commit", "-q", "-m", "base")
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("changed since"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTreeReadsTheCommitNotTheWorkingTree(t *testing.T) {
	dir := repo(t, map[string]string{"topology.yaml": "root", "topo/a.yaml": "a", "topo/b.yml": "b", "topo/deeper/c.yaml": "c", "svc/x.yaml": "x"})
	tree, err := Open(context.Background(), filepath.Join(dir, "svc"), "main", []string{"x.yaml", "../topo", "../topology.yaml", "missing.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tree.ReadFile("x.yaml"); err != nil || string(got) != "x" {
		t.Errorf("x.yaml at main = %q, %v; want the committed %q", got, err, "x")
	}
	if got, err := tree.ReadFile("../topology.yaml"); err != nil || string(got) != "root" {
		t.Errorf("../topology.yaml at main = %q, %v", got, err)
	}
	if dirp, err := tree.IsDir("../topo"); err != nil || !dirp {
		t.Errorf("../topo is a directory at main: got %v, %v", dirp, err)
	}
	if names, _ := tree.ReadDir("../topo"); !slices.Equal(names, []string{"a.yaml", "b.yml"}) {
		t.Errorf("files directly in ../topo: %q", names)
	}
	if tree.Exists("missing.yaml") {
		t.Error("a path the commit does not hold exists")
	}
	if _, err := tree.ReadFile("missing.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading a path the commit does not hold: %v, want fs.ErrNotExist", err)
	}
	if got := tree.Name("x.yaml"); got != "main:x.yaml" {
		t.Errorf("Name = %q", got)
	}
}

func TestOpenNamesARefThatIsNoCommit(t *testing.T) {
	dir := repo(t, map[string]string{"topology.yaml": "root"})
	_, err := Open(context.Background(), dir, "origin/nope", []string{"topology.yaml"})
	if !errors.Is(err, ErrGit) || !contains(err.Error(), `"origin/nope" is not a commit`, "git fetch") {
		t.Errorf("error = %v", err)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// TestOpenFindsTheFilesRepository: the repository is the one that holds
// the paths, not the one (if any) around the directory mqctl runs in; a
// path deleted from the working tree is still read at the ref.
func TestOpenFindsTheFilesRepository(t *testing.T) {
	dir := repo(t, map[string]string{"topo/a.yaml": "a", "topo/sub/b.yaml": "b"})
	if err := os.RemoveAll(filepath.Join(dir, "topo", "sub")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	rel, err := filepath.Rel(outside, filepath.Join(dir, "topo"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		paths []string
	}{
		{"absolute", []string{filepath.Join(dir, "topo", "a.yaml"), filepath.Join(dir, "topo", "sub")}},
		{"relative", []string{filepath.Join(rel, "a.yaml"), filepath.Join(rel, "sub")}},
		{"deleted first", []string{filepath.Join(rel, "sub", "b.yaml"), filepath.Join(rel, "a.yaml")}},
	}
	for _, c := range cases {
		tree, err := Open(context.Background(), outside, "main", c.paths)
		if err != nil {
			t.Errorf("%s: Open from outside the repository: %v", c.name, err)
			continue
		}
		for _, p := range c.paths {
			if !tree.Exists(p) {
				t.Errorf("%s: main holds %s, Exists says not", c.name, p)
			}
		}
		sub := filepath.Join(filepath.Dir(c.paths[1]), "sub", "b.yaml")
		if c.name == "deleted first" {
			sub = c.paths[0]
		}
		if got, err := tree.ReadFile(sub); err != nil || string(got) != "b" {
			t.Errorf("%s: %s at main = %q, %v; want the committed %q", c.name, sub, got, err, "b")
		}
	}
}

func TestOpenNamesWhatIsOutsideARepository(t *testing.T) {
	dir := repo(t, map[string]string{"topology.yaml": "root"})
	elsewhere := t.TempDir()
	_, err := Open(context.Background(), elsewhere, "main", []string{"topology.yaml"})
	if !errors.Is(err, ErrGit) || !contains(err.Error(), "topology.yaml is in no git repository, so it has no version at main", "mqctl diff OLD NEW") || strings.Contains(err.Error(), "is not a commit") {
		t.Errorf("a file in no repository: error = %v", err)
	}
	_, err = Open(context.Background(), dir, "main", []string{"topology.yaml", filepath.Join(elsewhere, "other.yaml")})
	if err == nil || !contains(err.Error(), "other.yaml is outside the git repository at", "which holds topology.yaml") {
		t.Errorf("a second file outside the repository: error = %v", err)
	}
}
