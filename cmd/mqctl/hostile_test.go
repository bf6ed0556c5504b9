package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileInput feeds the loader and the definitions reader input built
// to hurt: huge files, alias bombs, deep nesting, 10 MB strings, invalid
// UTF-8, over-long names. Each must be refused with one clear message that
// names the file (and the line where there is one), never a panic.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	yamlHead := "version: 1\nvhosts:\n  /:\n    queues:\n"
	huge := []byte(yamlHead)
	for i := 0; len(huge) < 12<<20; i++ {
		huge = append(huge, []byte("      q"+strings.Repeat("x", 40)+itoa(i)+": {}\n")...)
	}
	laughs := "version: 1\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ") + "]\n"
		prev = n
	}
	laughs += "vhosts:\n  /:\n    queues:\n      q: {arguments: {x-l: *i}}\n"

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a 12 MB topology file", []string{"validate", "-f", write("huge.yaml", huge)}, "huge.yaml: file is 10485761 bytes, more than the 10 MiB limit"},
		{"a billion laughs", []string{"validate", "-f", write("laughs.yaml", []byte(laughs))}, "laughs.yaml: YAML aliases expand this file to more than"},
		{"100,000 nested lists", []string{"validate", "-f", write("deep.yaml", []byte(yamlHead+"      q: {arguments: {x-a: "+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+"}}\n"))}, "deep.yaml:5:7: invalid YAML: exceeded max depth"},
		{"a 10 MB string", []string{"validate", "-f", write("bigstr.yaml", []byte(yamlHead+"      q: {arguments: {x-note: \""+strings.Repeat("a", 10_000_000)+"\"}}\n"))}, "bigstr.yaml:5:31: value is 10000000 bytes long (mqctl reads values of at most 64 KiB)"},
		{"invalid UTF-8", []string{"validate", "-f", write("utf.yaml", []byte(yamlHead+"      q\xff\xfe: {}\n"))}, "utf.yaml:5:8: invalid UTF-8 (byte 0xff at offset 43)"},
		{"a 300-byte queue name", []string{"validate", "-f", write("long.yaml", []byte(yamlHead+"      "+strings.Repeat("q", 300)+": {}\n"))}, "long.yaml:5:7: queue name is 300 bytes long"},
		{"definitions: 100,000 nested arrays", []string{"export", "--from", write("deep.json", []byte(`{"queues": `+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+"}"))}, "deep.json:1:10011: not valid JSON"},
		{"definitions: invalid UTF-8", []string{"export", "--from", write("utf.json", []byte("{\"vhosts\":[{\"name\":\"\xff\xfe\"}]}"))}, "utf.json:1:21: invalid UTF-8 (byte 0xff)"},
		{"definitions: a 10 MB queue name", []string{"export", "--from", write("name.json", []byte(`{"vhosts":[{"name":"/"}],"queues":[{"name":"`+strings.Repeat("a", 10_000_000)+`","vhost":"/","durable":true,"auto_delete":false,"arguments":{}}]}`))}, "the name is 10000000 bytes long; RabbitMQ takes queue names of at most 255 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := mqctl(t, tc.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%.500s", tc.want, stderr)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
				t.Errorf("want one line, got %d:\n%.500s", n+1, stderr)
			}
			if strings.Contains(stderr, "goroutine") || stdout != "" {
				t.Errorf("stdout %q, stderr %.300q", stdout, stderr)
			}
		})
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}
