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
	"os"
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
	dir    string // the directory the paths are relative to
	gitDir string // where git runs: in the repository that holds the paths
	ref    string
	commit string
	top    string            // the repository's top directory, symbolic links resolved
	blobs  map[string]string // path in the repository -> blob id
}

// Open reads which files of paths (files or directories, relative to dir
// or absolute) commit ref holds, in the git repository that holds them:
// the one around the first path (or dir, given no paths), wherever mqctl
// runs. Every path must be in that repository; it need not exist in the
// working tree (a change may delete it).
func Open(ctx context.Context, dir, ref string, paths []string) (*Tree, error) {
	t := &Tree{ctx: ctx, dir: dir, ref: ref, blobs: map[string]string{}}
	first := dir
	if len(paths) > 0 {
		first = t.abs(paths[0])
	}
	t.gitDir = existingDir(first)
	top, err := t.git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is in no git repository, so it has no version at %s: run diff --base on files in a clone of their repository, or compare two files with mqctl diff OLD NEW: %w", t.shown(first), ref, err)
	}
	t.top = realPath(strings.TrimSpace(string(top)))
	commit, err := t.git("rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%q is not a commit of the git repository at %s (a branch, tag or commit such as origin/main; in CI, fetch it first, e.g. git fetch origin main): %w", ref, t.top, err)
	}
	t.commit = strings.TrimSpace(string(commit))
	args := []string{"ls-tree", "-r", "-z", "--full-tree", t.commit, "--"}
	for _, p := range paths {
		rp, ok := t.repoPath(p)
		if !ok {
			return nil, fmt.Errorf("%s is outside the git repository at %s, which holds %s: diff --base reads every -f path from one repository; compare files of another with mqctl diff OLD NEW", p, t.top, t.shown(first))
		}
		args = append(args, rp)
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

// abs is path p (relative to the Tree's directory, or absolute) made
// absolute.
func (t *Tree) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(t.dir, p)
}

// shown is absolute path p as the user may have written it: relative to
// the Tree's directory where it is under it.
func (t *Tree) shown(p string) string {
	if rel, err := filepath.Rel(t.dir, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}

// existingDir is the nearest directory at or above absolute path p that
// exists (a path a change deleted has none of its own).
func existingDir(p string) string {
	for {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}

// realPath is absolute path p with the symbolic links of its longest
// existing part resolved, as git names the repository's top directory.
func realPath(p string) string {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// git runs git in the Tree's directory and returns its standard output.
func (t *Tree) git(args ...string) ([]byte, error) {
	cmd := exec.CommandContext(t.ctx, "git", args...)
	cmd.Dir = t.gitDir
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

// repoPath is p's path in the repository; false when p is outside it.
func (t *Tree) repoPath(p string) (string, bool) {
	rel, err := filepath.Rel(t.top, realPath(t.abs(p)))
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return path.Clean(filepath.ToSlash(rel)), true
}

// Exists reports whether the commit holds a file or directory at p.
func (t *Tree) Exists(p string) bool {
	_, err := t.IsDir(p)
	return err == nil
}

// IsDir reports whether p is a directory at the commit.
func (t *Tree) IsDir(p string) (bool, error) {
	rp, in := t.repoPath(p)
	if _, ok := t.blobs[rp]; in && ok {
		return false, nil
	}
	for name := range t.blobs {
		if in && (rp == "." || strings.HasPrefix(name, rp+"/")) {
			return true, nil
		}
	}
	return false, fmt.Errorf("%s holds no %s: %w", t.ref, p, fs.ErrNotExist)
}

// ReadDir lists the files directly in directory p at the commit.
func (t *Tree) ReadDir(p string) ([]string, error) {
	rp, in := t.repoPath(p)
	if !in {
		return nil, fmt.Errorf("%s holds no %s: %w", t.ref, p, fs.ErrNotExist)
	}
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
	rp, in := t.repoPath(p)
	id, ok := t.blobs[rp]
	if !in || !ok {
		return nil, fmt.Errorf("%s holds no file %s: %w", t.ref, p, fs.ErrNotExist)
	}
	return t.git("cat-file", "blob", id)
}

// Name is how positions name p: "REF:p".
func (t *Tree) Name(p string) string { return t.ref + ":" + p }
