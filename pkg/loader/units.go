package loader

import (
	"errors"
	"math"
	"strconv"
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
