package loader

import (
	"slices"
	"testing"
)

func TestInterpolate(t *testing.T) {
	env := map[string]string{"HOST": "rabbit", "EMPTY": "", "N": "10"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want string
		changed  bool
		err      string
		// unset: the variables the error lists when nothing else is wrong.
		unset []string
	}{
		{in: "plain", want: "plain"},
		{in: "${HOST}", want: "rabbit", changed: true},
		{in: "amqp://${HOST}:5672/${N}", want: "amqp://rabbit:5672/10", changed: true},
		{in: "${MISSING:-fallback}", want: "fallback", changed: true},
		{in: "${EMPTY:-fallback}", want: "fallback", changed: true},
		{in: "${EMPTY}", want: "", changed: true},
		{in: "${HOST:-x}", want: "rabbit", changed: true},
		{in: "${MISSING:-}", want: "", changed: true},
		{in: "$$", want: "$", changed: true},
		{in: "$${HOST}", want: "${HOST}", changed: true},
		{in: "cost $5", want: "cost $5"},
		{in: "trailing $", want: "trailing $"},
		{in: "${MISSING}", err: "environment variable MISSING is not set", unset: []string{"MISSING"}},
		{in: "amqp://${U}:${P}@${HOST}/${U}", err: "environment variable U is not set", unset: []string{"U", "P"}},
		{in: "${U}${1X}", err: "environment variable U is not set"},
		{in: "${1X}${U}", err: "a ${…} in this value is no variable reference"},
		{in: "${U} ${HOST", err: "environment variable U is not set"},
		{in: "${HOST", err: "a ${ in this value is not closed"},
		{in: "${1X}", err: "a ${…} in this value is no variable reference"},
		{in: "${}", err: "a ${…} in this value is no variable reference"},
		{in: "${A-b}", err: "a ${…} in this value is no variable reference"},
	}
	for _, tt := range tests {
		got, changed, ierr := interpolate(tt.in, lookup)
		if tt.err != "" {
			if ierr == nil || ierr.msg != tt.err || !slices.Equal(ierr.unset, tt.unset) {
				t.Errorf("interpolate(%q) error = %+v, want %q, unset %q", tt.in, ierr, tt.err, tt.unset)
			}
			continue
		}
		if ierr != nil || got != tt.want || changed != tt.changed {
			t.Errorf("interpolate(%q) = %q, %t, %v; want %q, %t", tt.in, got, changed, ierr, tt.want, tt.changed)
		}
	}
}

func TestParseIgnores(t *testing.T) {
	tests := map[string][]string{
		"# mqctl:ignore MQ101":                       {"MQ101"},
		"# mqctl:ignore MQ101 MQ301":                 {"MQ101", "MQ301"},
		"# mqctl:ignore MQ101,MQ301, MQ401":          {"MQ101", "MQ301", "MQ401"},
		"# mqctl:ignore MQ101 because it is a probe": {"MQ101"},
		"# mqctl:ignore all":                         {"all"},
		"# just a comment":                           nil,
		"# header\n# mqctl:ignore MQ502":             {"MQ502"},
	}
	for in, want := range tests {
		got := parseIgnores(in)
		if len(got) != len(want) {
			t.Errorf("parseIgnores(%q) = %v, want %v", in, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("parseIgnores(%q) = %v, want %v", in, got, want)
			}
		}
	}
}
