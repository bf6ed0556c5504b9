// Package loader reads topology files (YAML, version 1), interpolates
// ${VAR}, checks every field, and expands sugar into a topology.Topology.
//
// The work is split in steps: parse (YAML nodes, positions, aliases,
// interpolation, ignore comments), decode (fields into declarations, file
// by file, merging vhosts across files) and expand (declarations and
// sugar into plain topology objects).
package loader

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/topology"
)

// StdinName is the file name positions use for input read from stdin.
const StdinName = "<stdin>"

// DefaultFile is the topology file the commands read when none is given.
const DefaultFile = "topology.yaml"

// Options configure a load.
type Options struct {
	// LookupEnv resolves ${VAR}; nil means no variable is set.
	LookupEnv func(string) (string, bool)
	// SecretsOptional lets a secret field (a user's password or
	// password_hash, a shovel's src-uri or dest-uri, a federation
	// upstream's uri; not hashing_algorithm, which only names an
	// algorithm) name a variable that is not set: the commands that talk
	// to no broker need no secret. Each such variable is a warning (to
	// Warn), and the field holds its text as written, which is no secret
	// ("${VAR}", the variable then in Item.Refs as when it is set). A
	// variable that is not set anywhere else is still an error.
	SecretsOptional bool
	// Warn, when set, receives the warnings of the load, in file order,
	// before Load returns (whether or not it fails).
	Warn func(*Error)
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Declared, when set, is called once every file is read, with the
	// vhost names they declare, before the objects are built and checked:
	// a caller may start work that needs only the names (plan reads those
	// vhosts from the broker meanwhile). The names may include a vhost
	// that then fails to load.
	Declared func(vhosts []string)
	// Files, when set, is where the paths are read from instead of the
	// file system (a git commit's tree: pkg/gitref).
	Files Files
}

// Files is a tree of files Load can read paths from (Options.Files; the
// file system when none is given).
type Files interface {
	// IsDir reports whether path is a directory; an error wrapping
	// fs.ErrNotExist when there is nothing at path.
	IsDir(path string) (bool, error)
	// ReadDir lists the names of the files in directory path, sorted.
	ReadDir(path string) ([]string, error)
	// ReadFile returns the contents of file path.
	ReadFile(path string) ([]byte, error)
	// Name is how positions name file path ("main:topology.yaml").
	Name(path string) string
}

// Load reads, merges, checks and expands the files at paths (a directory
// means every *.yaml / *.yml in it; "-" is stdin). Problems come back as an
// ErrorList naming file:line:col.
func Load(paths []string, opts Options) (*topology.Topology, error) {
	l := newLoad(opts)
	if len(paths) == 0 {
		l.errs.addf(topology.Pos{}, "pass a file with -f topology.yaml", "no topology file given")
	}
	for _, p := range paths {
		l.readPath(p)
	}
	return l.finish()
}

// LoadBytes loads one file's contents; name is used in positions.
func LoadBytes(name string, data []byte, opts Options) (*topology.Topology, error) {
	l := newLoad(opts)
	l.addFile(name, data)
	return l.finish()
}

// load is the state of one Load call.
type load struct {
	opts      Options
	errs      *collector
	d         *decoder
	fd        *fileDecoder
	seen      map[string]bool
	stdinRead bool
}

func newLoad(opts Options) *load {
	errs := newCollector()
	d := &decoder{errs: errs, refs: map[*node]string{}}
	if opts.SecretsOptional {
		d.unset = map[*node]*unsetVars{}
	}
	return &load{opts: opts, errs: errs, d: d, fd: newFileDecoder(d), seen: map[string]bool{}}
}

func (l *load) readPath(p string) {
	if p == "-" {
		l.readStdin()
		return
	}
	files := l.opts.Files
	if files == nil {
		files = osFiles{}
	}
	dir, err := files.IsDir(p)
	if err != nil {
		l.readError(files.Name(p), err)
		return
	}
	names := []string{p}
	if dir {
		if names, err = files.ReadDir(p); err != nil {
			l.readError(files.Name(p), err)
			return
		}
		names = slices.DeleteFunc(names, func(n string) bool { return !isTopologyFile(n) })
		if len(names) == 0 {
			l.errs.file(files.Name(p))
			l.errs.addf(topology.Pos{File: files.Name(p)}, "put topology files named *.yaml or *.yml in it, or pass the files with -f", "directory holds no *.yaml or *.yml file")
			return
		}
		for i, n := range names {
			names[i] = filepath.Join(p, n)
		}
	}
	for _, n := range names {
		l.readFile(files, n)
	}
}

// isTopologyFile reports whether a file named n in a directory is read as
// a topology file.
func isTopologyFile(n string) bool {
	return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")
}

// Holds reports whether files (the file system when nil) hold what Load
// reads at path p: a file, or a directory with a *.yaml or *.yml file in
// it.
func Holds(files Files, p string) bool {
	if files == nil {
		files = osFiles{}
	}
	dir, err := files.IsDir(p)
	if err != nil || !dir {
		return err == nil
	}
	names, err := files.ReadDir(p)
	return err == nil && slices.ContainsFunc(names, isTopologyFile)
}

// readFile reads file p of files once: a file named twice (by itself and
// through its directory) is read the first time only.
func (l *load) readFile(files Files, p string) {
	key := p
	if abs, err := filepath.Abs(p); err == nil {
		key = abs
	}
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	data, err := files.ReadFile(p)
	if err != nil {
		l.readError(files.Name(p), err)
		return
	}
	if len(data) > MaxFileSize {
		data = data[:MaxFileSize+1] // too large: addFile says so
	}
	l.addFile(files.Name(p), data)
}

// osFiles is the file system: the Files of a load that names none.
type osFiles struct{}

func (osFiles) IsDir(p string) (bool, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

func (osFiles) ReadDir(p string) ([]string, error) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries { // sorted by name
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func (osFiles) ReadFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

func (osFiles) Name(p string) string { return p }

func (l *load) readStdin() {
	if l.stdinRead {
		l.errs.addf(topology.Pos{File: StdinName}, "pass - once", "stdin (-) is given more than once")
		return
	}
	l.stdinRead = true
	if l.opts.Stdin == nil {
		l.errs.addf(topology.Pos{File: StdinName}, "pass a file path instead of -", "no standard input to read")
		return
	}
	data, err := io.ReadAll(io.LimitReader(l.opts.Stdin, MaxFileSize+1))
	if err != nil {
		l.readError(StdinName, err)
		return
	}
	l.addFile(StdinName, data)
}

// readAll reads at most MaxFileSize+1 bytes of f into a buffer sized from
// its length, not grown by doubling (a 10 MiB file would otherwise pass
// through buffers of twice its size).
func readAll(f *os.File) ([]byte, error) {
	r := io.LimitReader(f, MaxFileSize+1)
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxFileSize {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(r)
	return buf.Bytes(), err
}

func (l *load) readError(p string, err error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	hint := ""
	switch {
	case errors.Is(err, fs.ErrNotExist) && p == DefaultFile:
		hint = "check the path, or pass the topology file with -f"
	case errors.Is(err, fs.ErrNotExist):
		// A path the user gave (-f, or diff's OLD and NEW): -f is no fix.
		hint = "check the path"
	}
	l.errs.file(p)
	l.errs.addf(topology.Pos{File: p}, hint, "cannot read: %v", err)
}

func (l *load) addFile(name string, data []byte) {
	l.errs.file(name)
	if root := parseFile(name, data, l.opts.LookupEnv, l.errs, l.d.refs, l.d.unset); root != nil {
		l.errs.keyed(root, "")
		l.errs.literal(root)
		l.fd.decodeFile(root)
	}
}

func (l *load) finish() (*topology.Topology, error) {
	if l.opts.Declared != nil {
		l.opts.Declared(slices.Clone(l.fd.order))
	}
	t := topology.New()
	for _, name := range l.fd.order {
		t.Vhosts[name] = l.buildVhost(l.fd.vhosts[name])
	}
	l.buildUsers(t)
	t.Lint = l.fd.lint
	if o := l.fd.owner; o != nil {
		t.Owner, t.OwnerPos = o.value, o.pos
	}
	t.Tests = l.buildTests(t)
	t.Env = l.errs.envValues(t)
	l.d.reportUnset()
	if l.opts.Warn != nil {
		for _, w := range l.errs.warnings() {
			l.opts.Warn(w)
		}
	}
	if err := l.errs.err(); err != nil {
		return nil, err
	}
	return t, nil
}

// IsTopology reports whether data reads as an mqctl topology file: a YAML
// (or JSON) mapping with the top-level version or vhosts of one. For the
// commands that take another kind of file (apply FILE, export --from), to
// name the mistake of giving them this one.
func IsTopology(data []byte) bool {
	if len(data) > MaxFileSize || definitions.Is(data) {
		return false
	}
	doc, _, err := decodeYAML(data)
	if err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return false
	}
	top := doc.Content[0].Content
	found := false
	for i := 0; i+1 < len(top); i += 2 {
		switch top[i].Value {
		case "version", "vhosts":
			found = true
		case "format_version", "kind":
			return false // a JSON plan, a saved plan
		}
	}
	return found
}
