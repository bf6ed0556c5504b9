package rmqversion

import "testing"

func TestStreamsDefinitions(t *testing.T) {
	for v, want := range map[string]bool{
		"3.10.8": false, "4.0.5": false, "4.2.9": false,
		"4.3.0": false, "4.3.2": false, "4.3.3": true, "4.3.6": true, "4.3": true, "4.4.0": true,
	} {
		if got := MustParse(v).StreamsDefinitions(); got != want {
			t.Errorf("%s: StreamsDefinitions() = %v, want %v", v, got, want)
		}
	}
}
