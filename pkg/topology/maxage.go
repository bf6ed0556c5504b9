package topology

import (
	"math"
	"strconv"
)

// MaxAgeArgument is a stream's retention by age, as a queue argument (the
// policy key is max-age).
const MaxAgeArgument = "x-max-age"

// maxAgeUnits are the units of a max-age, largest first, each with its
// length in milliseconds: a month is 30 days, a year 365
// (rabbit_amqqueue:unit_value_in_ms/1 at v3.10.8, v4.0.5 and v4.3.5).
var maxAgeUnits = []struct {
	unit byte
	ms   int64
}{
	{'Y', 365 * 86_400_000},
	{'M', 30 * 86_400_000},
	{'D', 86_400_000},
	{'h', 3_600_000},
	{'m', 60_000},
	{'s', 1000},
}

// MaxAgeMillis reads a max-age (the queue argument x-max-age, the policy
// key max-age) as RabbitMQ does (rabbit_amqqueue:check_max_age/1 at
// v3.10.8, v4.0.5 and v4.3.5): a string of decimal digits, a number above
// 0, then one unit of maxAgeUnits and nothing else; its length in
// milliseconds. ok is false for anything else, which RabbitMQ refuses,
// and for an age too long for an int64.
func MaxAgeMillis(v any) (ms int64, ok bool) {
	s, isString := v.(string)
	if !isString || len(s) < 2 {
		return 0, false
	}
	digits := s[:len(s)-1]
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	for _, u := range maxAgeUnits {
		if u.unit == s[len(s)-1] {
			if n > math.MaxInt64/u.ms {
				return 0, false
			}
			return n * u.ms, true
		}
	}
	return 0, false
}

// maxAgeForm is the form in which RabbitMQ 4.3.6 compares an x-max-age on
// a declare (its length: "7D", "168h", "604800s" and "07D" are one age)
// written in its largest whole unit ("7D"), so that a print of the
// commonest spelling stays what it was before the form.
func maxAgeForm(v any) (any, bool) {
	ms, ok := MaxAgeMillis(v)
	if !ok {
		return nil, false
	}
	for _, u := range maxAgeUnits {
		if ms%u.ms == 0 {
			return strconv.FormatInt(ms/u.ms, 10) + string(u.unit), true
		}
	}
	return nil, false // every age is a whole number of seconds
}
