package loader

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mqctl/mqctl/internal/gentopo"
)

// parsed is one file read by one path: the tree and what was reported.
type parsed struct {
	root  *node
	errs  string
	refs  map[string]string // position → variable
	unset []string          // positions
}

func parseWith(data []byte, fast bool) (parsed, bool) {
	errs := newCollector()
	refs, unset := map[*node]string{}, map[*node]*unsetVars{}
	env := envOf("P", "7", "AE", "", "Q", "a b", "N", "null")
	var root *node
	if fast {
		p := &parser{file: "f.yaml", lookup: env, errs: errs, refs: refs, unset: unset}
		var ok bool
		var crash any
		if root, ok, crash = readFast(p, data); crash != nil {
			panic(fmt.Sprintf("the fast path panicked: %v", crash))
		}
		if !ok {
			if errs.count() > 0 || len(refs) > 0 || len(unset) > 0 {
				panic("the fast path gave up after reporting")
			}
			return parsed{}, false
		}
	} else {
		root = parseYAML("f.yaml", data, env, errs, refs, unset, false)
	}
	out := parsed{root: root, errs: fmt.Sprint(errs.errs), refs: map[string]string{}}
	for n, v := range refs {
		out.refs[n.pos.String()] = v
	}
	for n := range unset {
		out.unset = append(out.unset, n.pos.String())
	}
	return out, true
}

// sameParse reads data both ways and returns what differs, "" when the
// fast path read it as the library does; fast says whether it read it.
func sameParse(data []byte) (diff string, fast bool) {
	got, ok := parseWith(data, true)
	if !ok {
		return "", false
	}
	want, _ := parseWith(data, false)
	if got.errs != want.errs {
		return fmt.Sprintf("errors: fast %s, library %s", got.errs, want.errs), true
	}
	if fmt.Sprint(got.refs) != fmt.Sprint(want.refs) {
		return fmt.Sprintf("variables: fast %v, library %v", got.refs, want.refs), true
	}
	if len(got.unset) != len(want.unset) {
		return fmt.Sprintf("unset: fast %v, library %v", got.unset, want.unset), true
	}
	return diffNodes(got.root, want.root, "$"), true
}

func diffNodes(a, b *node, path string) string {
	switch {
	case a == nil || b == nil:
		if a != b {
			return fmt.Sprintf("%s: fast %v, library %v", path, a, b)
		}
		return ""
	case a.kind != b.kind || a.tag != b.tag || a.value != b.value || a.interpolated != b.interpolated || a.bad != b.bad:
		return fmt.Sprintf("%s: fast {kind %d tag %d %q interpolated %v bad %v}, library {kind %d tag %d %q interpolated %v bad %v}",
			path, a.kind, a.tag, a.value, a.interpolated, a.bad, b.kind, b.tag, b.value, b.interpolated, b.bad)
	case a.pos != b.pos:
		return fmt.Sprintf("%s: fast at %s, library at %s", path, a.pos, b.pos)
	case (a.ignore == nil) != (b.ignore == nil):
		return fmt.Sprintf("%s: ignores differ", path)
	case len(a.entries) != len(b.entries) || len(a.items) != len(b.items):
		return fmt.Sprintf("%s: fast %d entries %d items, library %d entries %d items", path, len(a.entries), len(a.items), len(b.entries), len(b.items))
	}
	for i := range a.entries {
		p := path + "." + b.entries[i].key.value
		if d := diffNodes(a.entries[i].key, b.entries[i].key, p+"(key)"); d != "" {
			return d
		}
		if d := diffNodes(a.entries[i].value, b.entries[i].value, p); d != "" {
			return d
		}
	}
	for i := range a.items {
		if d := diffNodes(a.items[i], b.items[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// fastCases are the edges of the part of YAML the fast path reads, and
// just past them; each reads the same either way.
var fastCases = []string{
	"version: 1\n",
	"version: 1",
	"  a: 1\n  b: 2\n",
	"a: 1 # c\n# c\n\n  # c\nb:   x y  \n",
	"a:\n- 1\n- b: 2\n  c: [3, 4]\n-   d: e\nf: g\n",
	"a:\n  - x\n  -\n    y: 1\n",
	"a:\n  b:\n    c: {d: e, 'f''g': \"h\", i: [j, {k: l}], m: {}, n: []}\n",
	"a: \"x\" # c\nb: 'it''s'\nc: ''\nd: \"\"\n",
	"a: 10\nb: 0x1F\nc: 1.5\nd: .inf\ne: true\nf: yes\ng: ~\nh: null\ni: 2001-12-14\nj: -3\nk: +4\nl: 1_000\nm: 0o17\n",
	"a: ${P}\nb: \"${P}\"\nc: ${P:-x}\nd: ${UNSET}\ne: $${P}\nf: ${Q}\ng: ${N}\nh: {x: ${P}}\n",
	"a: x:y\nb: http://h:1/p\nc: a#b\nd: -x\ne: ?x\nf: :x\ng: a, b\nh: a[0]\ni: {u: http://h:1}\n",
	"a: svc.*.#\nb: [\"a.#\", b.*]\nc: {k: \"#\"}\n",
	"a: x: y\n",
	"a: {b: c:, d: e}\n",
	"a: [b?c]\n",
	"a:\n  b\n",
	"a: b\n  c\n",
	"- a\n - b\n",
	"a: 1\na: 2\n",
	"a: &x 1\nb: *x\n",
	"a: !!str 1\n",
	"a: |\n  x\n",
	"a: [1,\n 2]\n",
	"a:\tb\n",
	"a: 1\n---\nb: 2\n",
	"a: \"x\\ny\"\n",
	`a: "^a\\.(b|c)$ \"q\" \/"` + "\nb: 'it''s '''' '\n",
	`a: "\\"` + "\n" + `b: "x\""` + "\n",
	`a: "x\ty"` + "\n",
	`a: "x\` + "\n",
	"a: café\n",
	"a:\n",
	"a: # c\n  b: 1\n",
	"a: b # mqctl:ignore MQ101\n",
	"[1, 2]\n",
	"{a: 1}\n",
	"x\n",
	"a: {b: }\n",
	"a: [1, 2,]\n",
	"a: {b: 1}}\n",
	"a: \"x\"y\n",
	"a: x #c\n  # c\nb: 1\n",
	"a:\n    - 1\n  b: 2\n",
	"a:\n  b: 1\n c: 2\n",
	"? a\n: b\n",
	"a: - b\n",
	"a: '\n",
	"- - a\n",
	"a: -\n",
	"<<: {a: 1}\n",
	"a: [-]\n",
	"a: [-1, -x]\n",
	"a: {b: [c, d], e: f}  # c\n",
	"---\na: 1\n",
	"# c\n\n---\n# c\na: 1\n",
	"---\n",
	"---",
	"--- \na: 1\n",
	"--- # c\na: 1\n",
	"---\na: 1\n---\nb: 2\n",
	"--- {a: 1}\n",
	"---\n---\na: 1\n",
	"---\n  a: 1\n",
	"a: 1\n...\n",
	"%YAML 1.2\n---\na: 1\n",
	"a: 1\n...\n",
	"a: b:\n",
	"\"a\": 1\n'b c': 2\n",
	"a:\n\n\n  b: 1\n\n",
	"a: 1\n   \n",
	"a: 1\n  ",
}

func TestFastParseMatchesLibrary(t *testing.T) {
	read := 0
	long := strings.Repeat("k", 1020)
	cases := append([]string{
		long + ": 1\n", long + "kkkkk: 1\n", "a: {" + long + ": 1}\n", "a: {" + long + "kkkkk: 1}\n",
		"- " + long + ": 1\n", "a: \"" + long + "kkkk\": 1\n", "a: " + long + long + "\n",
	}, fastCases...)
	for _, c := range cases {
		d, fast := sameParse([]byte(c))
		if d != "" {
			t.Errorf("%q: %s", c, d)
		}
		if fast {
			read++
		}
	}
	t.Logf("the fast path read %d of %d cases", read, len(cases))
	if read < len(cases)/3 {
		t.Errorf("the fast path read only %d of %d cases", read, len(cases))
	}
}

// TestFastParseReadsTheProjectsFiles: every YAML file of the repository,
// every file in its scripts and every YAML-like string its tests write
// reads the same either way, and the files
// users start from take the fast path (otherwise it would quietly stop
// paying for itself).
func TestFastParseReadsTheProjectsFiles(t *testing.T) {
	root := filepath.Join("..", "..")
	files := projectInputs(t, root)
	read := 0
	for name, data := range files {
		d, fast := sameParse(data)
		if d != "" {
			t.Errorf("%s: %s", name, d)
		}
		if fast {
			read++
		}
	}
	t.Logf("the fast path read %d of %d files", read, len(files))
	for _, name := range []string{"gentopo", filepath.Join(root, "topology.yaml"), filepath.Join(root, "examples", "worker", "topology.yaml"), filepath.Join(root, "examples", "orders", "topology.yaml")} {
		if _, fast := sameParse(files[name]); !fast {
			t.Errorf("%s: the fast path gave up on it", name)
		}
	}
}

// projectInputs are the YAML files under root, those in its scripts, the
// YAML-like strings of its tests, and make bench's generated file.
func projectInputs(t *testing.T, root string) map[string][]byte {
	files := map[string][]byte{"gentopo": []byte(gentopo.YAML("v", 200))}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml":
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files[path] = data
		case ".go":
			if !strings.HasSuffix(path, "_test.go") {
				return nil
			}
			// The YAML the tests write inline: every string literal of a
			// test file that spans lines and holds a key.
			fset := token.NewFileSet()
			f, err := goparser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(v, ":") && strings.Contains(v, "\n") {
						files[fset.Position(lit.ValuePos).String()] = []byte(v)
					}
				}
				return true
			})
		case ".txtar":
			a, err := txtar.ParseFile(path)
			if err != nil {
				return err
			}
			for _, f := range a.Files {
				if ext := filepath.Ext(f.Name); ext == ".yaml" || ext == ".yml" {
					files[path+":"+f.Name] = f.Data
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// FuzzFastParse: whatever the fast path reads, it reads as the library
// does, errors, variables and positions included.
func FuzzFastParse(f *testing.F) {
	for _, c := range fastCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if d, _ := sameParse([]byte(src)); d != "" {
			t.Fatalf("%q: %s", src, d)
		}
	})
}

// TestFastParseDepth: past maxDepth the library decides, and refuses
// what it refuses (the fast path would read 100,000 nested lists, and the
// decoder then spend gigabytes naming their paths).
func TestFastParseDepth(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1, 100_000} {
		src := "a: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
		d, fast := sameParse([]byte(src))
		if d != "" {
			t.Errorf("depth %d: %s", depth, d)
		}
		if want := depth < maxDepth; fast != want {
			t.Errorf("depth %d: fast path read it: %v, want %v", depth, fast, want)
		}
	}
	_, err := LoadBytes("deep.yaml", []byte("a: "+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+"\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "deep.yaml:1:") || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("100,000 nested lists: %v", err)
	}
}

// TestFastParseLongLine: a file that is not ASCII, with 500,000 values on
// one line, reads as the library reads it, positions included. Counting
// each value's column from the start of the line, as the first version
// did, made this hundreds of billions of steps: the library reads such a
// line in linear time, and so must the fast path.
func TestFastParseLongLine(t *testing.T) {
	src := "a: é\nb: [" + strings.Repeat("é, ", 500_000) + "é]\nc: ü\n"
	d, fast := sameParse([]byte(src))
	if d != "" {
		t.Fatal(d)
	}
	if !fast {
		t.Fatal("the fast path gave up on it")
	}
}
