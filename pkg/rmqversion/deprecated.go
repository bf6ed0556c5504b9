package rmqversion

import "fmt"

// Deprecated queue arguments (and the policy keys that stand for them):
// what a version still accepts but ignores or warns about, and from which
// version it refuses them.

// IgnoresQueueMode: x-queue-mode (policy key queue-mode) changes nothing
// (3.12+): classic queues keep few messages in memory whatever the mode, as
// lazy ones did (RabbitMQ docs, "Lazy Queues": ignored from 3.12). Before
// 3.12 "lazy" moves messages to disk as early as possible.
func (v Version) IgnoresQueueMode() bool { return v.AtLeast(3, 12) }

// IgnoresInMemoryLimits: x-max-in-memory-length and
// x-max-in-memory-bytes (policy keys max-in-memory-length,
// max-in-memory-bytes) change nothing on a quorum queue (4.0+): quorum
// queues keep no message bodies in memory, and rabbit_quorum_queue at
// v4.0.5 and v4.3.5 takes the arguments (and rabbit_policies the keys)
// but reads neither, where v3.10.8 hands them to rabbit_fifo as
// max_in_memory_length and max_in_memory_bytes. Measured: 4.3.6, 4.0.5 and
// 3.10.8 all declare a quorum queue with x-max-in-memory-length and keep
// the argument.
func (v Version) IgnoresInMemoryLimits() bool { return v.AtLeast(4, 0) }

// ValidatesQueueMode: the value of x-queue-mode on a classic queue is
// checked ("default" or "lazy"). 4.3 removed the check with the CQv1
// storage: its release notes say a queue with the argument is refused, but
// RabbitMQ 4.3.6 declares a classic queue with x-queue-mode "lazy", and
// even "bogus" (pkg/rmqversion's live test states each version's answer).
// The broker wins: no version refuses the argument on a classic queue.
func (v Version) ValidatesQueueMode() bool { return !v.AtLeast(4, 3) }

// DeprecatesQueueMasterLocator: x-queue-master-locator (policy key
// queue-master-locator) is the deprecated feature queue_master_locator, for
// which the broker logs a warning (4.0+); x-queue-leader-locator replaces
// it for classic queues (which 3.x refuses; see RefusesQueueArgument).
func (v Version) DeprecatesQueueMasterLocator() bool { return v.AtLeast(4, 0) }

// RefusesQueueMasterLocator: the deprecated feature queue_master_locator is
// denied, and a queue declared with x-queue-master-locator is refused: by
// default from 4.3 (4.3.0 release notes), or as a live broker reports it
// (its configuration may permit the feature, or deny it earlier).
func (v Version) RefusesQueueMasterLocator() bool {
	if denied, known := v.denied("queue_master_locator"); known {
		return denied
	}
	return v.AtLeast(4, 3)
}

// queueMasterLocatorDenier says who denies queue_master_locator: the
// broker, where it reports the feature's state (its configuration may deny
// it on a version that permits it by default), else the version's default.
func (v Version) queueMasterLocatorDenier() string {
	if _, known := v.denied("queue_master_locator"); known {
		return "this broker denies the deprecated feature queue_master_locator (GET /api/deprecated-features)"
	}
	return fmt.Sprintf("RabbitMQ %s denies the deprecated feature queue_master_locator by default", v.Line())
}

// ClassicQueueV1: classic queues may use version 1 storage (x-queue-version
// 1, policy key queue-version 1). 4.3 removed it: the argument is refused
// ("unsupported queue version '1'"), the policy key still accepted and
// meaningless, every classic queue being version 2 (4.3.0 release notes;
// measured on 4.3.6, notes §2). 4.0 and 3.10 take both.
func (v Version) ClassicQueueV1() bool { return !v.AtLeast(4, 3) }
