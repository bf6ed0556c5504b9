// Package gitref reads files as a git commit holds them, so that a
// branch's topology files can be compared with the base branch's (mqctl
// diff --base REF). It runs the git command; it reads only, and talks to
// no remote.
package gitref

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ErrGit is wrapped by the errors of a git command that failed or is not
// installed.
var ErrGit = errors.New("git failed")

// Tree is the files at paths (and under them) as a commit holds them. It
// implements loader.Files: paths are the ones the user gave, relative to
// the directory the Tree was opened in.
type Tree struct {
	ctx    context.Context
	dir    string
	ref    string
	commit string
	prefix string // the directory's path in the repository, "" or "a/b/"
	top    string
	blobs  map[string]string // path in the repository -> blob id
}

// Open reads which files of paths (files or directories, relative to dir
// or absolute) commit ref holds, in the git repository dir is in.
func Open(ctx context.Context, dir, ref string, paths []string) (*Tree, error) {
	t := &Tree{ctx: ctx, dir: dir, ref: ref, blobs: map[string]string{}}
	commit, err := t.git("rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%q is not a commit of the git repository at %s (a branch, tag or commit such as origin/main; in CI, fetch it first, e.g. git fetch origin main): %w", ref, dir, err)
	}
	t.commit = strings.TrimSpace(string(commit))
	top, err := t.git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	t.top = strings.TrimSpace(string(top))
	prefix, err := t.git("rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	t.prefix = strings.TrimSpace(string(prefix))
	args := []string{"ls-tree", "-r", "-z", "--full-tree", t.commit, "--"}
	for _, p := range paths {
		args = append(args, t.repoPath(p))
	}
	out, err := t.git(args...)
	if err != nil {
		return nil, err
	}
	for _, line := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(line), "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
			t.blobs[name] = f[2]
		}
	}
	return t, nil
}

// git runs git in the Tree's directory and returns its standard output.
func (t *Tree) git(args ...string) ([]byte, error) {
	cmd := exec.CommandContext(t.ctx, "git", args...)
	cmd.Dir = t.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s: %w", args[0], msg, ErrGit)
	}
	return out, nil
}

// repoPath is p's path in the repository.
func (t *Tree) repoPath(p string) string {
	if filepath.IsAbs(p) {
		if rel, err := filepath.Rel(t.top, p); err == nil {
			return path.Clean(filepath.ToSlash(rel))
		}
	}
	return path.Clean(t.prefix + filepath.ToSlash(p))
}

// Exists reports whether the commit holds a file or directory at p.
func (t *Tree) Exists(p string) bool {
	_, err := t.IsDir(p)
	return err == nil
}

// IsDir reports whether p is a directory at the commit.
func (t *Tree) IsDir(p string) (bool, error) {
	rp := t.repoPath(p)
	if _, ok := t.blobs[rp]; ok {
		return false, nil
	}
	for name := range t.blobs {
		if rp == "." || strings.HasPrefix(name, rp+"/") {
			return true, nil
		}
	}
	return false, fmt.Errorf("%s holds no %s: %w", t.ref, p, fs.ErrNotExist)
}

// ReadDir lists the files directly in directory p at the commit.
func (t *Tree) ReadDir(p string) ([]string, error) {
	rp := t.repoPath(p)
	var out []string
	for name := range t.blobs {
		rest, ok := strings.CutPrefix(name, rp+"/")
		if rp == "." {
			rest, ok = name, true
		}
		if ok && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ReadFile returns file p's contents at the commit.
func (t *Tree) ReadFile(p string) ([]byte, error) {
	id, ok := t.blobs[t.repoPath(p)]
	if !ok {
		return nil, fmt.Errorf("%s holds no file %s: %w", t.ref, p, fs.ErrNotExist)
	}
	return t.git("cat-file", "blob", id)
}

// Name is how positions name p: "REF:p".
func (t *Tree) Name(p string) string { return t.ref + ":" + p }
