package loader

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
)

type unit struct {
	suffix string
	factor int64
}

// durationUnits are tried in order, so "ms" is matched before "m" and "s".
var durationUnits = [...]unit{
	{"ms", 1},
	{"s", 1000},
	{"m", 60 * 1000},
	{"h", 60 * 60 * 1000},
	{"d", 24 * 60 * 60 * 1000},
}

// sizeUnits: SI multiples of 1000 and IEC multiples of 1024.
var sizeUnits = [...]unit{
	{"B", 1},
	{"KB", 1000}, {"kB", 1000}, {"KiB", 1 << 10},
	{"MB", 1000 * 1000}, {"MiB", 1 << 20},
	{"GB", 1000 * 1000 * 1000}, {"GiB", 1 << 30},
	{"TB", 1000 * 1000 * 1000 * 1000}, {"TiB", 1 << 40},
}

const (
	durationHelp = "write a duration such as 250ms, 10s, 1m, 2h, 7d, or an integer of milliseconds"
	sizeHelp     = "write a size such as 512KiB, 100MB or 1GiB, or an integer of bytes; KB=1000 and KiB=1024 bytes"
)

var errOverflow = errors.New("too large")

// parseDuration reads "<digits><unit>" and returns milliseconds.
func parseDuration(s string) (int64, error) { return parseWithUnit(s, durationUnits[:]) }

// parseSize reads "<digits><unit>" and returns bytes.
func parseSize(s string) (int64, error) { return parseWithUnit(s, sizeUnits[:]) }

func parseWithUnit(s string, units []unit) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errors.New("no number")
	}
	num, suffix := s[:i], s[i:]
	for _, u := range units {
		if suffix != u.suffix {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/u.factor {
			return 0, errOverflow
		}
		return n * u.factor, nil
	}
	return 0, errors.New("unknown unit")
}

// FormatSize renders a byte count n with the largest unit that divides it
// exactly, as the file may write it (1073741824 -> "1GiB", 5000000 ->
// "5MB"); false when no unit above a byte does (n is then best written as
// an integer).
func FormatSize(n int64) (string, bool) {
	if n <= 0 {
		return "", false
	}
	for i := len(sizeUnits) - 1; i > 0; i-- {
		u := sizeUnits[i]
		if u.suffix != "kB" && n%u.factor == 0 {
			return strconv.FormatInt(n/u.factor, 10) + u.suffix, true
		}
	}
	return "", false
}

// FormatDuration renders ms with the largest unit that divides it exactly:
// 10000 -> "10s", 60000 -> "1m", 1500 -> "1500ms". It names the delay tiers
// retry.delays declares (Q.retry.10s).
func FormatDuration(ms int64) string {
	if ms == 0 {
		return "0ms"
	}
	for i := len(durationUnits) - 1; i > 0; i-- {
		u := durationUnits[i]
		if ms%u.factor == 0 {
			return strconv.FormatInt(ms/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// durationWords are the unit words people write, each with the unit the
// loader reads.
var durationWords = map[string]string{
	"ms": "ms", "msec": "ms", "msecs": "ms", "millis": "ms", "millisecond": "ms", "milliseconds": "ms",
	"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
	"m": "m", "min": "m", "mins": "m", "minute": "m", "minutes": "m",
	"h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
	"d": "d", "day": "d", "days": "d",
}

var (
	quantityPart = regexp.MustCompile(`^(\d+(?:\.\d+)?)([a-zA-Z]+)`)
	isoDuration  = regexp.MustCompile(`^p(?:(\d+)d)?(?:t(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?)?$`)
)

// guessDuration is how the loader spells a duration written another way
// that means one length of time only: "1m30s" and "PT1M30S" are "90s",
// "10 s", "10S" and "10 seconds" "10s", "1.5s" "1500ms"; "" for none
// (a negative, a fraction of a millisecond, a word it does not know).
func guessDuration(s string) string {
	t := strings.ToLower(strings.Join(strings.Fields(s), ""))
	var ms float64
	if m := isoDuration.FindStringSubmatch(t); m != nil && t != "p" && t != "pt" {
		for i, f := range []float64{24 * 3600 * 1000, 3600 * 1000, 60 * 1000, 1000} {
			if m[i+1] != "" {
				n, _ := strconv.ParseFloat(m[i+1], 64)
				ms += n * f
			}
		}
	} else {
		if t == "" {
			return ""
		}
		if m := quantityPart.FindStringSubmatch(t); m != nil && m[0] == t && !strings.Contains(m[1], ".") && durationWords[m[2]] != "" {
			return m[1] + durationWords[m[2]] // one part, whole: the user's unit
		}
		for t != "" {
			m := quantityPart.FindStringSubmatch(t)
			if m == nil {
				return ""
			}
			unit, ok := durationWords[m[2]]
			if !ok {
				return ""
			}
			n, _ := strconv.ParseFloat(m[1], 64)
			for _, u := range durationUnits {
				if u.suffix == unit {
					ms += n * float64(u.factor)
				}
			}
			t = t[len(m[0]):]
		}
	}
	if ms < 1 || ms != math.Trunc(ms) || ms > math.MaxInt64/2 {
		return ""
	}
	return FormatDuration(int64(ms))
}

// guessSize is how the loader spells a size written another way that
// means one number of bytes only: "1 MiB" is "1MiB", "1.5GB" "1500MB";
// "" for none ("1mb" and "1M" may mean 10^6 or 2^20 bytes).
func guessSize(s string) string {
	t := strings.Join(strings.Fields(s), "")
	m := quantityPart.FindStringSubmatch(t)
	if m == nil || m[0] != t {
		return ""
	}
	for _, u := range sizeUnits {
		if u.suffix != m[2] {
			continue
		}
		if !strings.Contains(m[1], ".") {
			return m[1] + u.suffix // whole: the user's unit
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		b := n * float64(u.factor)
		if b < 1 || b != math.Trunc(b) || b > math.MaxInt64/2 {
			return ""
		}
		if f, ok := FormatSize(int64(b)); ok {
			return f
		}
		return strconv.FormatInt(int64(b), 10)
	}
	return ""
}
