// Command testsum reads `go test -json` from stdin and prints what a person
// wants of it: each package's ok/FAIL line, the output of every failed test
// (and of a package that failed to build or panicked), and one closing line
// "LABEL: N passed, N failed, N skipped" counting every test and subtest.
// It exits 1 when anything failed.
//
//	go test -count=1 -json ./... | go run ./cmd/testsum -label 4.0
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

type event struct {
	Action     string
	Package    string
	ImportPath string // of build-output and build-fail events
	Test       string
	Output     string
	Elapsed    float64
}

func main() {
	label := flag.String("label", "tests", "word printed before the counts")
	appendTo := flag.String("append", "", "also append the closing line to this file")
	flag.Parse()
	passed, failed, skipped, bad := summarize(os.Stdin, os.Stdout)
	line := fmt.Sprintf("%s: %d passed, %d failed, %d skipped\n", *label, passed, failed, skipped)
	fmt.Print(line)
	if *appendTo != "" {
		f, err := os.OpenFile(*appendTo, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.WriteString(line)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "testsum: %v\n", err)
			os.Exit(1)
		}
	}
	if failed > 0 || bad {
		os.Exit(1)
	}
}

// summarize writes the package lines and failures of the event stream r to
// w and returns the counts; bad is true when a package failed without a
// failed test (a build error, a panic, a timeout) or the stream held a line
// that is not an event.
func summarize(r io.Reader, w io.Writer) (passed, failed, skipped int, bad bool) {
	out := map[string][]string{} // package + "\x00" + test -> output lines
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			// go test prints build errors as plain text.
			fmt.Fprintln(w, sc.Text())
			bad = true
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			fmt.Fprintf(w, "FAIL\t%s [build failed]\n", e.ImportPath)
			bad = true
		case "output":
			if !strings.HasPrefix(e.Output, "=== ") {
				out[key] = append(out[key], e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test != "" {
				switch e.Action {
				case "pass":
					passed++
				case "fail":
					failed++
					fmt.Fprint(w, strings.Join(out[key], ""))
				case "skip":
					skipped++
				}
				delete(out, key)
				continue
			}
			// The package's own result.
			if e.Action == "fail" {
				bad = true
				// A panic or a timeout leaves the output of the tests that
				// were running, which never got a result of their own.
				for k, lines := range out {
					if strings.HasPrefix(k, e.Package+"\x00") {
						fmt.Fprint(w, strings.Join(lines, ""))
						delete(out, k)
					}
				}
				fmt.Fprintf(w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
			} else {
				fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
			delete(out, key)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(w, "testsum: reading the test events: %v\n", err)
		bad = true
	}
	return passed, failed, skipped, bad
}
