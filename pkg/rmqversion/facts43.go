package rmqversion

// Facts of RabbitMQ 4.3 that the offline simulator (pkg/route) and lint
// follow, beside the ones in rmqversion.go. Sources are named per method:
// the server's source at v4.3.5 (and v4.0.5 for the earlier behaviour), its
// release notes, and the research notes rabbitmq-4.1-4.3.md.

// ModulusHashPicksStably: x-modulus-hash is a core exchange type that sorts
// its bound destinations (one entry per binding, exchanges before queues,
// then by name) and delivers each message to the one at
// erlang:phash2(RoutingKeys, 2^27) rem N, so the pick follows from the
// bindings and the routing keys alone (4.3+; release notes of 4.3.0,
// rabbitmq-server#15849; rabbit_exchange_type_modulus_hash:route/3 at
// v4.3.5). Before, the type is the rabbitmq_sharding plugin's, which picks
// from the bindings in the order the metadata store lists them
// (rabbit_sharding_exchange_type_modulus_hash at v4.0.5), an order mqctl
// cannot know offline. On every version it delivers to exactly one of its
// bound destinations.
func (v Version) ModulusHashPicksStably() bool { return v.HasCoreExchangeType(ModulusHashExchangeType) }

// DelayedRetry: quorum queues read x-delayed-retry-type, -min and -max
// (policy keys delayed-retry-type, -min, -max): a returned message waits
// min(min × delivery count, max) ms before it is delivered again (4.3+;
// rabbit_fifo should_delay0/4 and calculate_ready_at/4 at v4.3.5). Before
// 4.3 no queue type knows the arguments and every type stores them unread.
// The broker does not check the arguments' values: a type it does not know,
// a min that is missing or not a positive integer mean "disabled", a max
// that is missing or not a positive integer means max = min
// (rabbit_quorum_queue:get_delayed_retry_config/1 at v4.3.5).
func (v Version) DelayedRetry() bool { return v.AtLeast(4, 3) }

// PassiveDeclareHidesDelayed: a quorum queue's messages that wait for a
// delayed retry, or for an AMQP 1.0 delivery time (a modified outcome with
// x-opt-delivery-time, taken by any quorum queue whatever its delayed-retry
// settings: rabbit_fifo:should_delay/5 at v4.3.5), are counted by no
// passive declare, which reports the ready messages and the consumers
// (rabbit_fifo:query_stat/1), and by no delete: a quorum queue has no
// if-empty. Only the queue's statistics count them (messages,
// messages_delayed), refreshed at each of its ticks (4.3+).
func (v Version) PassiveDeclareHidesDelayed() bool { return v.DelayedRetry() }

// DelayedRetryPolicyKeys: policies and operator policies may set
// delayed-retry-type, delayed-retry-min and delayed-retry-max (4.3.1+:
// 4.3.0 refused them in policy definitions, fixed in 4.3.1; earlier
// versions do not know them and refuse a policy holding them, HTTP 400
// "not recognised policy settings"). The broker validates their values.
// Where a policy and an operator policy both set one, the operator
// policy's type wins, the larger min and the smaller max apply
// (rabbit_quorum_queue merge_policy_value/3 at v4.3.5). A 4.3 given
// without a patch is judged as the latest 4.3.
func (v Version) DelayedRetryPolicyKeys() bool { return v.atLeastPatch(4, 3, 1) }

// ConsumerTimeoutQuorumOnly: only quorum queues evaluate consumer
// timeouts (4.3+). Classic queues and streams never do, whatever sets the
// timeout: the consumer-timeout policy key, the x-consumer-timeout argument
// (refused on them, see RefusesQueueArgument) or consumer_timeout in
// rabbitmq.conf (release notes of 4.3.0, "Consumer Timeouts are No Longer
// Evaluated for Classic Queues and Streams"; rabbit_channel.erl at v4.3.5
// no longer has evaluate_consumer_timeout, which v4.2.9 runs for every
// queue type). Before 4.3 the AMQP 0-9-1 channel evaluates them for every
// queue type, closing the channel of a consumer past its timeout.
func (v Version) ConsumerTimeoutQuorumOnly() bool { return v.AtLeast(4, 3) }

// AcquiredCountHeader: quorum queues give a delivered message both
// x-delivery-count (failed deliveries, absent until the first) and
// x-acquired-count (every time a consumer took it) (4.3+;
// rabbit_fifo_client add_delivery_count_header/2 at v4.3.0). Before, the
// one header x-delivery-count counts every return.
func (v Version) AcquiredCountHeader() bool { return v.AtLeast(4, 3) }

// ShovelIgnoresAMQP10Properties: an amqp10 shovel destination's
// dest-application-properties, dest-message-annotations and
// dest-properties are accepted and ignored (4.2+: "The bare message should
// be immutable in the AMQP network", rabbit_shovel_parameters at v4.2.0,
// rabbit_amqp10_shovel at v4.3.5; release notes of 4.2.0). Before 4.2 the
// shovel sets them on every message it moves.
func (v Version) ShovelIgnoresAMQP10Properties() bool { return v.AtLeast(4, 2) }

// UpstreamURIChecksVhost: a federation upstream whose URI has no host (a
// direct connection to this broker) is refused unless the user writing it
// may connect to the URI's vhost (4.3.3+: "Federation: more strict when
// validating URIs", rabbit_federation_parameters at v4.3.3; measured:
// 4.3.6 refuses amqp:///nowhere and amqp:///, 4.0.5 and 3.10.8 take both,
// and the link never connects).
func (v Version) UpstreamURIChecksVhost() bool { return v.atLeastPatch(4, 3, 3) }

// TopicPermissionsGoWithExchange: deleting an exchange deletes every
// user's topic permission for it, where the metadata store is Khepri,
// which keeps a topic permission under its exchange
// (RABBITMQ_KHEPRI_TOPIC_PERMISSION_PATH in rabbit_khepri.hrl at v4.0.5
// and v4.3.5; rabbit_db_exchange:delete_in_khepri/3 deletes the
// exchange's path with what is under it). So an exchange deleted and
// declared again, as a replace does, has no topic permission: its keys
// are checked against none until one is set again (measured on 4.3.6).
// Khepri is the only store from 4.3.0; 4.0 to 4.2 use it where the
// khepri_db feature flag is enabled (the default of a new 4.2 cluster),
// and keep the topic permission in Mnesia otherwise (measured on 4.0.5
// and 3.10.8).
func (v Version) TopicPermissionsGoWithExchange() bool {
	if v.AtLeast(4, 3) {
		return true
	}
	on, _ := v.FeatureFlag("khepri_db")
	return on
}

// LeaksEmptyTopicKey: a binding with the empty key on a topic exchange
// also takes every message published with an empty routing key to
// another topic exchange. The topic binding index of 4.3.0 (feature flag
// topic_binding_projection_v4) roots every exchange's trie at one node,
// where the empty key's bindings sit; 4.3.1's (topic_binding_projection_v5)
// roots each exchange's apart (rabbit_db_topic_exchange:match/3 at
// v4.3.5; release notes of 4.3.1, rabbitmq-server#16271; measured on
// 4.3.6 with v5 enabled: no leak). A broker that reports its feature
// flags says which index it routes with: v4 enabled and v5 not. Where it
// does not (or offline), 4.3.0 leaks (a new node enables v4, and v5 does
// not exist) and every other version does not (4.3.1+ nodes enable v5;
// before 4.3 the index is another one).
func (v Version) LeaksEmptyTopicKey() bool {
	if !v.AtLeast(4, 3) {
		return false
	}
	if v4, known := v.FeatureFlag("topic_binding_projection_v4"); known {
		v5, _ := v.FeatureFlag("topic_binding_projection_v5")
		return v4 && !v5
	}
	return v.HasPatch && v.Major == 4 && v.Minor == 3 && v.Patch == 0
}
