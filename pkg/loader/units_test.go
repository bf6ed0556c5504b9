package loader

import "testing"

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"250ms", 250, true},
		{"10s", 10_000, true},
		{"1m", 60_000, true},
		{"2h", 7_200_000, true},
		{"7d", 604_800_000, true},
		{"0s", 0, true},
		{"10", 0, false},    // a bare number is an integer node, not a string
		{"10 s", 0, false},  // no spaces
		{"1.5s", 0, false},  // no fractions
		{"10sec", 0, false}, // unknown unit
		{"s", 0, false},
		{"-1s", 0, false},
		{"99999999999999999d", 0, false}, // overflows int64 milliseconds
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseDuration(%q) = %d, %v; want %d, ok=%t", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512KiB", 512 * 1024, true},
		{"100MB", 100_000_000, true},
		{"1KB", 1000, true},
		{"1kB", 1000, true},
		{"1MiB", 1 << 20, true},
		{"2GB", 2_000_000_000, true},
		{"2GiB", 2 << 30, true},
		{"1TiB", 1 << 40, true},
		{"10B", 10, true},
		{"10mb", 0, false},
		{"10 MB", 0, false},
		{"MB", 0, false},
		{"9999999999TiB", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%t", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := map[int64]string{
		250:        "250ms",
		1500:       "1500ms",
		10_000:     "10s",
		60_000:     "1m",
		90_000:     "90s",
		600_000:    "10m",
		7_200_000:  "2h",
		86_400_000: "1d",
		0:          "0ms",
	}
	for in, want := range tests {
		if got := FormatDuration(in); got != want {
			t.Errorf("FormatDuration(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestFormatSize checks the sizes export writes back: the largest unit
// that divides the count, IEC before SI at the same magnitude, and none
// (an integer) where no unit above a byte divides it.
func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 30: "1GiB", 5_000_000: "5MB", 1024: "1KiB", 2000: "2KB", 1 << 40: "1TiB", 3_000_000_000_000: "3TB", 1500: "", 0: "", -1024: ""} {
		got, ok := FormatSize(n)
		if got != want || ok != (want != "") {
			t.Errorf("FormatSize(%d) = %q, %v; want %q", n, got, ok, want)
		}
		if ok {
			if back, err := parseSize(got); err != nil || back != n {
				t.Errorf("parseSize(%q) = %d, %v; want %d", got, back, err, n)
			}
		}
	}
}

// TestGuessQuantity: a duration or size written another way that means
// one value only gets that value as the loader spells it, in the user's
// unit where it is whole; an ambiguous or impossible one gets no guess.
func TestGuessQuantity(t *testing.T) {
	durations := map[string]string{
		"10 s": "10s", "60 s": "60s", "10S": "10s", "10sec": "10s", "10 seconds": "10s", "5 min": "5m",
		"1m30s": "90s", "1h30m": "90m", "PT10S": "10s", "PT1M30S": "90s", "P1D": "1d", "pt0.5s": "500ms",
		"1.5s": "1500ms", "2 hours": "2h",
		"-1s": "", "10x": "", "1.0005s": "", "P": "", "": "", "1s 2": "",
	}
	for in, want := range durations {
		if got := guessDuration(in); got != want {
			t.Errorf("guessDuration(%q) = %q, want %q", in, got, want)
		}
		if want != "" {
			if _, err := parseDuration(want); err != nil {
				t.Errorf("guessDuration(%q) = %q, which the loader does not read: %v", in, want, err)
			}
		}
	}
	sizes := map[string]string{
		"1 MiB": "1MiB", "512 KB": "512KB", "1.5GB": "1500MB", "1.5 KiB": "1536",
		"1mb": "", "1M": "", "0.5B": "", "1 MiB 2": "",
	}
	for in, want := range sizes {
		if got := guessSize(in); got != want {
			t.Errorf("guessSize(%q) = %q, want %q", in, got, want)
		}
	}
}
