package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: want 2, got 3\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"pass","Package":"p","Test":"TestA/sub"}`,
		`{"Action":"fail","Package":"p","Elapsed":1.5}`,
		`{"Action":"pass","Package":"q","Elapsed":0.25}`,
		`{"Action":"output","Package":"r","Test":"TestHang","Output":"panic: test timed out after 10m0s\n"}`,
		`{"Action":"fail","Package":"r","Elapsed":600}`,
		`{"ImportPath":"s","Action":"build-output","Output":"s/x.go:3:1: syntax error\n"}`,
		`{"ImportPath":"s","Action":"build-fail"}`,
		`# q/broken`,
	}, "\n")
	var out bytes.Buffer
	passed, failed, skipped, bad := summarize(strings.NewReader(in), &out)
	if passed != 2 || failed != 1 || skipped != 1 || !bad {
		t.Errorf("counts = %d passed, %d failed, %d skipped, bad %v; want 2, 1, 1, true", passed, failed, skipped, bad)
	}
	got := out.String()
	for _, want := range []string{"b_test.go:9: want 2, got 3", "FAIL\tp\t1.500s", "ok  \tq\t0.250s", "# q/broken", "panic: test timed out", "s/x.go:3:1: syntax error", "FAIL\ts [build failed]"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN") {
		t.Errorf("output keeps the run lines:\n%s", got)
	}
}
