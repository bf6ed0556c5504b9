// Package rmqversion owns the RabbitMQ versions mqctl targets and what
// differs between them: what a version refuses, what it fills in by itself
// and what it does differently at run time (dead-lettering, delivery limits).
//
// Live commands take the version the broker reports; offline commands take
// --rabbitmq-version (env MQCTL_RABBITMQ_VERSION), Default when unset.
package rmqversion

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a RabbitMQ release, major.minor[.patch]. The zero Version
// stands for Default.
type Version struct {
	Major, Minor, Patch int
	// HasPatch is false for a version given as major.minor ("4.0").
	HasPatch bool
}

// Default is the version offline commands judge for when none is given:
// what production teams run today.
var Default = Version{Major: 4, Minor: 0}

// Supported is the range mqctl is built and tested for.
var (
	Oldest = Version{Major: 3, Minor: 10}
	Newest = Version{Major: 4, Minor: 0}
)

// EnvVar names the environment variable offline commands read.
const EnvVar = "MQCTL_RABBITMQ_VERSION"

// Parse reads "4.0", "4.0.5", "3.10.8" (and tolerates a suffix such as
// "4.0.5+1.g123" or "4.1.0-beta.1" after the numbers).
func Parse(s string) (Version, error) {
	orig := s
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "+-~ "); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("RabbitMQ version %q: want MAJOR.MINOR such as 4.0 or 3.10 (a patch, 4.0.5, may follow)", orig)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" {
			return Version{}, fmt.Errorf("RabbitMQ version %q: %q is not a number; want MAJOR.MINOR such as 4.0 or 3.10", orig, p)
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2], HasPatch: len(parts) == 3}, nil
}

// MustParse is Parse for constants; it panics on a malformed version.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// OrDefault returns v, or Default for the zero Version.
func (v Version) OrDefault() Version {
	if v == (Version{}) {
		return Default
	}
	return v
}

// String renders the version as given ("4.0" or "4.0.5").
func (v Version) String() string {
	v = v.OrDefault()
	if v.HasPatch {
		return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// Line is the release series, "4.0" for 4.0.5.
func (v Version) Line() string {
	v = v.OrDefault()
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// AtLeast reports whether v is major.minor or later.
func (v Version) AtLeast(major, minor int) bool {
	v = v.OrDefault()
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Supported reports whether v lies in the range mqctl is tested for; a
// later 4.x is judged as 4.x.
func (v Version) Supported() bool {
	v = v.OrDefault()
	return v.AtLeast(Oldest.Major, Oldest.Minor) && v.Major <= Newest.Major
}

// StoresDefaultQueueType: the vhost's default queue type is kept (3.11+);
// 3.10 ignores it.
func (v Version) StoresDefaultQueueType() bool { return v.AtLeast(3, 11) }

// FillsDefaultQueueType: the broker gives every vhost a default queue type
// ("classic" when none is asked for) and reports it (4.0+).
func (v Version) FillsDefaultQueueType() bool { return v.AtLeast(4, 0) }

// PolicyApplyToQueueTypes: apply-to classic_queues, quorum_queues and
// streams exist (3.12+).
func (v Version) PolicyApplyToQueueTypes() bool { return v.AtLeast(3, 12) }

// ClassicMirroring: the ha-* policy keys are accepted (before 4.0; 4.0
// removed classic queue mirroring and refuses them with HTTP 400).
func (v Version) ClassicMirroring() bool { return !v.AtLeast(4, 0) }

// QuorumDeliveryLimit is the delivery limit a quorum queue has when none is
// set: 20 from 4.0 (past it a message is dead-lettered, or dropped without
// a dead-letter exchange), none (0) before.
func (v Version) QuorumDeliveryLimit() int {
	if v.AtLeast(4, 0) {
		return 20
	}
	return 0
}

// DeprecatesTransientQueues: transient (non-durable) non-exclusive queues
// are a deprecated feature (transient_nonexcl_queues), refused where the
// broker denies it (4.0+).
func (v Version) DeprecatesTransientQueues() bool { return v.AtLeast(4, 0) }

// IgnoresClientXDeath: an x-death header a client publishes is not taken as
// dead-letter history (4.0+); before, the broker reads it and updates it.
func (v Version) IgnoresClientXDeath() bool { return v.AtLeast(4, 0) }
