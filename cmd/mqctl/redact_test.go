package main

import "testing"

// The sweep's notes about other tests' leftovers leave the scripts'
// outputs as they are without them, in every form mqctl writes them.
func TestDropLeftoverNotes(t *testing.T) {
	const swept = "deleted the throwaway vhosts that killed mqctl applies left behind: $PREFLIGHT_VHOST"
	const failed = "a throwaway vhost that a killed mqctl apply left behind could not be deleted (500); the next apply tries again"
	for _, tc := range []struct{ name, in, want string }{
		{"stream line", `{"type":"plan"}` + "\n" + `{"type":"note","message":"note: ` + swept + `"}` + "\n" + `{"type":"summary"}` + "\n",
			`{"type":"plan"}` + "\n" + `{"type":"summary"}` + "\n"},
		{"stderr line", "mqctl: note: " + swept + "\nmqctl: note: the preflight does not try users\n",
			"mqctl: note: the preflight does not try users\n"},
		{"the only element, indented", "{\n  \"notes\": [\n    \"" + swept + "\"\n  ],\n  \"flows\": {}\n}\n",
			"{\n  \"notes\": [],\n  \"flows\": {}\n}\n"},
		{"the last element, indented", "  \"notes\": [\n    \"keep\",\n    \"" + swept + "\"\n  ]\n",
			"  \"notes\": [\n    \"keep\"\n  ]\n"},
		{"the first element, indented", "  \"notes\": [\n    \"" + failed + "\",\n    \"keep\"\n  ]\n",
			"  \"notes\": [\n    \"keep\"\n  ]\n"},
		{"compact, alone", `{"notes":["` + swept + `"],"x":1}` + "\n", `{"notes":[],"x":1}` + "\n"},
		{"compact, among others", `{"notes":["a","` + swept + `","b \"q\""],"x":1}` + "\n", `{"notes":["a","b \"q\""],"x":1}` + "\n"},
		{"compact, last", `{"notes":["a","` + failed + `"]}`, `{"notes":["a"]}`},
		{"nothing to drop", "{\n  \"notes\": []\n}\n", "{\n  \"notes\": []\n}\n"},
	} {
		if got := dropLeftoverNotes(tc.in); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
