package rmqversion

import (
	"slices"

	"github.com/mqctl/mqctl/pkg/suggest"
)

// queueArguments are the queue arguments some queue type of some
// supported version reads: the queue_arguments of rabbit_classic_queue,
// rabbit_quorum_queue and rabbit_stream_queue at v3.10.8, v4.0.5 and
// v4.3.5, and x-queue-version (checked on every declare). The broker
// stores any other argument with the queue and reads it nowhere.
var queueArguments = []string{
	"x-dead-letter-exchange", "x-dead-letter-routing-key", "x-dead-letter-strategy",
	"x-expires", "x-message-ttl", "x-max-length", "x-max-length-bytes", "x-overflow",
	"x-max-in-memory-length", "x-max-in-memory-bytes", "x-max-priority",
	"x-single-active-consumer", "x-queue-type", "x-queue-mode", "x-queue-version",
	"x-queue-master-locator", "x-queue-leader-locator", "x-quorum-initial-group-size",
	"x-delivery-limit", "x-consumer-timeout", "x-consumer-disconnected-timeout",
	"x-delayed-retry-type", "x-delayed-retry-min", "x-delayed-retry-max",
	"x-max-age", "x-stream-max-segment-size-bytes", "x-stream-filter-size-bytes", "x-initial-cluster-size",
}

// exchangeArguments are the exchange arguments the broker or a plugin's
// exchange type reads: alternate-exchange (rabbit_exchange), x-delayed-type
// (rabbitmq_delayed_message_exchange), hash-header and hash-property
// (rabbitmq_consistent_hash_exchange).
var exchangeArguments = []string{"alternate-exchange", "x-delayed-type", "hash-header", "hash-property"}

// MisspelledQueueArgument is the queue argument arg most likely stands
// for, when arg is none RabbitMQ reads and is one or two edits from one
// that is (x-max-lenght for x-max-length, max-length for x-max-length):
// the broker takes such a queue and stores arg unread, so the setting
// meant never applies. "" when arg is known or near none (an
// application's own argument, say).
func MisspelledQueueArgument(arg string) string {
	return misspelled(arg, queueArguments)
}

// MisspelledExchangeArgument is MisspelledQueueArgument for an exchange's
// argument (x-alternate-exchange for alternate-exchange).
func MisspelledExchangeArgument(arg string) string {
	return misspelled(arg, exchangeArguments)
}

func misspelled(arg string, known []string) string {
	if slices.Contains(known, arg) {
		return ""
	}
	return suggest.Within(arg, known, 2)
}
