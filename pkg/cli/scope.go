package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// guessVhosts reads, from the text of the topology files, the names of the
// vhosts they declare: the keys of each file's top-level "vhosts:" block,
// as block-style YAML writes them. It does not load anything; it lets plan
// read the broker while the files are still being parsed (loadAndRead),
// which at 10,000 objects takes longer than RabbitMQ 4.3 takes to answer
// the read. It is only a guess: the names the loader reports decide, and
// a read of other vhosts is not used. ok is false where the text is not
// that simple (stdin, a file that cannot be read, flow style, anchors,
// aliases or merge keys, ${VAR} in a name, tabs, several documents), and
// then nothing is read before the loader names the vhosts. large says
// the files are larger than earlyReadUpTo together (whether or not ok).
func guessVhosts(paths []string) (names []string, large, ok bool) {
	var files []string
	for _, p := range paths {
		if p == "-" {
			return nil, false, false
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, false, false
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, false, false
		}
		for _, e := range entries {
			if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) {
				files = append(files, filepath.Join(p, n))
			}
		}
	}
	size := int64(0)
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, false, false
		}
		size += fi.Size()
	}
	large = size > earlyReadUpTo
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, large, false
		}
		got, ok := vhostKeys(string(data))
		if !ok {
			return nil, large, false
		}
		for _, n := range got {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names, large, true
}

// earlyReadUpTo is the largest size of topology files, in bytes, for which
// plan decodes the broker's answers while it parses them (about 17,000
// objects as the bench's generated topology writes them). Past it the
// read still starts at once, but held (broker.HoldDefinitions): it
// fetches the definitions export as it comes and decodes it once the
// file is loaded. Decoded beside the parse, the file's node tree and the
// decoded definitions held at once made plans of 50,002 objects on
// RabbitMQ 4.3.6 slower (1.19-2.37 s against 0.93-2.14 s) and pushed 4 of
// 7 past 100 MB of memory; read after the parse they stayed at 91 MB.
// Held, the read's first request leaves 6-69 ms after the start instead
// of 53-337 ms, and the plan peaks at 85-90 MB (8 runs each).
const earlyReadUpTo = 1 << 20

// vhostKeys returns the keys of the top-level "vhosts:" block of one YAML
// document written in block style, copied out of text; ok is false for
// anything else (see guessVhosts).
func vhostKeys(text string) (names []string, ok bool) {
	in := false // inside the vhosts block
	indent := -1
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		body := strings.TrimLeft(line, " ")
		if strings.HasPrefix(body, "\t") {
			return nil, false
		}
		if body == "" || body[0] == '#' {
			continue
		}
		depth := len(line) - len(body)
		if depth == 0 {
			if strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...") {
				if marker, _, _ := strings.Cut(line, " #"); strings.TrimSpace(marker) != "---" || len(names) > 0 || in {
					return nil, false // a second document, or content after the marker
				}
				continue
			}
			key, rest, ok := mapKey(line)
			if !ok {
				return nil, false
			}
			in = key == "vhosts"
			if in && rest != "" {
				return nil, false // vhosts: {…}, vhosts: &anchor, vhosts: *alias
			}
			continue
		}
		if !in {
			continue
		}
		if indent < 0 {
			indent = depth
		}
		switch {
		case depth < indent:
			return nil, false
		case depth == indent:
			key, _, ok := mapKey(body)
			if !ok {
				return nil, false
			}
			// A copy: a slice of text would hold all of it for as long
			// as the plan keeps the read's scope.
			names = append(names, strings.Clone(key))
		}
	}
	return names, true
}

// mapKey splits a block mapping entry "key: value" (the value, a comment
// stripped, may be empty); ok is false for what vhostKeys does not read:
// a sequence entry, a complex or merge key, an anchor or alias in the key,
// ${VAR}, a quoted key with escapes.
func mapKey(s string) (key, rest string, ok bool) {
	if s == "" || strings.ContainsRune("-?[{&*!|>%@`<", rune(s[0])) {
		return "", "", false
	}
	switch s[0] {
	case '"', '\'':
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return "", "", false
		}
		key, s = s[1:1+end], s[2+end:]
		if strings.ContainsAny(key, `\'"`) || !strings.HasPrefix(s, ":") {
			return "", "", false
		}
		s = s[1:]
	default:
		i := strings.Index(s, ": ")
		if i < 0 {
			if !strings.HasSuffix(s, ":") {
				return "", "", false
			}
			i = len(s) - 1
		}
		key, s = strings.TrimRight(s[:i], " "), s[i+1:]
		if strings.Contains(key, " #") {
			return "", "", false
		}
	}
	if strings.Contains(key, "${") || key == "" {
		return "", "", false
	}
	rest = strings.TrimSpace(s)
	if strings.HasPrefix(rest, "#") {
		rest = ""
	} else if i := strings.Index(rest, " #"); i >= 0 {
		rest = strings.TrimSpace(rest[:i])
	}
	return key, rest, true
}
