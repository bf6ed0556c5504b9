package main

import (
	"os"
	"runtime/pprof"
)

func init() {
	if p := os.Getenv("TMP_CPUPROFILE"); p != "" {
		f, _ := os.Create(p)
		pprof.StartCPUProfile(f)
		stopProf = func() { pprof.StopCPUProfile(); f.Close() }
	}
}

var stopProf = func() {}
