package loader

import (
	"strings"
	"testing"
)

// TestErrors checks each class of error with its exact text: position,
// offending value, and what would be accepted.
func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  []string
		want string // one line per error
	}{
		// File level.
		{"empty file", "", nil, `t.yaml: file is empty (a topology file starts with "version: 1")`},
		{"only comments", "# nothing here\n", nil, `t.yaml: file holds only comments (a topology file starts with "version: 1")`},
		{"missing version", "vhosts: {}\n", nil, `t.yaml:1:1: missing version (add "version: 1" at the top of the file)`},
		{"unsupported version", "version: 2\n", nil, `t.yaml:1:10: version 2 is not supported (this mqctl reads version: 1)`},
		{"version as a string", "version: \"1\"\n", nil, `t.yaml:1:10: version: expected the integer 1, got string "1" (write version: 1)`},
		{"not a mapping", "- a\n- b\n", nil, `t.yaml:1:1: a topology file is a mapping, got a list (start the file with "version: 1" and "vhosts:")`},
		{"two documents", "version: 1\n---\nversion: 1\n", nil, `t.yaml:2:1: a second YAML document (---) starts here; a topology file holds one document (put each topology in its own file, or merge them into one document)`},
		{"unknown top-level field with suggestion", "version: 1\nvhost: {}\n", nil, `t.yaml:2:1: unknown top-level field "vhost" (did you mean "vhosts"?)`},
		{"tests must be a list", "version: 1\ntests: {a: 1}\n", nil, `t.yaml:2:8: tests: expected a list, got a mapping (write tests as a list: tests: [ … ])`},
		// YAML syntax.
		{"syntax error on the first line", "a: b: c\n", nil, `t.yaml:1:5: invalid YAML: mapping values are not allowed in this context`},
		{"syntax error later (scanner)", "version: 1\nvhosts:\n  x: {a: @b}\n", nil, `t.yaml:3:10: invalid YAML: found character that cannot start any token`},
		// A tab says why: the scanner's words alone name no tab.
		{"tab indentation", "version: 1\nvhosts:\n\tx: 1\n", nil, `t.yaml:3:1: invalid YAML: found character that cannot start any token (YAML indents with spaces, never tabs: replace the tab with spaces)`},
		{"tab after spaces", "version: 1\nvhosts:\n  x:\n  \t a: 1\n", nil, `t.yaml:4:3: invalid YAML: found character that cannot start any token (YAML indents with spaces, never tabs: replace the tab with spaces)`},
		// JSON is YAML: a definitions export read as a topology is named
		// for what it is, once, with the command that converts it.
		{"definitions file", `{"rabbit_version": "3.13.0", "vhosts": [{"name": "/"}], "queues": []}`, nil,
			`t.yaml:1:1: this is a RabbitMQ definitions file (JSON, as GET /api/definitions or rabbitmqctl export_definitions write it), not an mqctl topology file (turn it into one with "mqctl export --from t.yaml > topology.yaml", then use that file)`},
		{"definitions file without metadata", `{"queues": [{"name": "q", "vhost": "/"}]}`, nil,
			`t.yaml:1:1: this is a RabbitMQ definitions file (JSON, as GET /api/definitions or rabbitmqctl export_definitions write it), not an mqctl topology file (turn it into one with "mqctl export --from t.yaml > topology.yaml", then use that file)`},
		{"topology written as JSON is no definitions file", `{"version": 1, "vhosts": {"v": {"queues": []}}}`, nil,
			`t.yaml:1:43: vhost "v": queues: expected a mapping of names, got a list (write a mapping from each queue name to its settings)`},
		{"syntax error later (parser)", "version: 1\nvhosts: {a: 1\nb: [\n", nil, `t.yaml:2:9: invalid YAML: did not find expected ',' or '}' (in the flow mapping {...} that starts here: is a ',' or the closing '}' missing?)`},
		{"unclosed flow sequence", "version: 1\ny: 2\nz: [1,2\n", nil, `t.yaml:3:4: invalid YAML: did not find expected ',' or ']' (in the flow sequence [...] that starts here: is a ',' or the closing ']' missing?)`},
		{"unknown anchor", "version: 1\nvhosts:\n  /: *nope\n", nil, `t.yaml:3:6: invalid YAML: alias *nope refers to no anchor &nope defined before it`},
		{"broken flow sequence further on the line", vhostFile("queues:\n  a: {bindings: [{exchange: x, routing_key: k}, {exchange: y routing_key: j}]}"), nil,
			`t.yaml:5:53: invalid YAML: did not find expected ',' or '}' (in the flow mapping {...} that starts here: is a ',' or the closing '}' missing?)`},
		{"unquoted ${…} in a flow mapping", vhostFile("queues:\n  a: {max_priority: ${P:-5}}"), nil,
			`t.yaml:5:25: invalid YAML: did not find expected ',' or '}' (inside {…} or […], YAML reads the { of ${VAR} as the start of a mapping: write that mapping or list one entry per line, where ${VAR} needs no quotes and takes the type of its value, or quote it, "${VAR}", in a field of mqctl's own (a quoted ${…} takes the field's type there; in arguments, a policy's definition and headers it stays a string))`},
		{"unquoted ${…} in a flow sequence", vhostFile("queues:\n  a: {bindings: [{exchange: x, routing_keys: [${K}]}]}"), nil,
			`t.yaml:5:51: invalid YAML: did not find expected ',' or ']' (inside {…} or […], YAML reads the { of ${VAR} as the start of a mapping: write that mapping or list one entry per line, where ${VAR} needs no quotes and takes the type of its value, or quote it, "${VAR}", in a field of mqctl's own (a quoted ${…} takes the field's type there; in arguments, a policy's definition and headers it stays a string))`},
		// A setting written one level too far left reads as an object's
		// name: it said `queue "type": expected a mapping, got string
		// "quorum"` and nothing of q1.
		// One value or one list where a mapping goes: the mapping meant,
		// when the value fits the field (a queue type, an integer).
		{"exchange written as its type", vhostFile("exchanges:\n  e: topic"), nil,
			`t.yaml:5:10: exchange "e": expected a mapping, got string "topic" (write it as {type: topic}; fields: type, durable, auto_delete, internal, alternate_exchange, arguments)`},
		{"dead_letter written as its exchange", vhostFile("queues:\n  q: {dead_letter: dlx}"), nil,
			`t.yaml:5:24: queue "q": dead_letter: expected a mapping, got string "dlx" (write it as {exchange: dlx}; fields: exchange, routing_key, strategy, queue)`},
		{"retry written as its delays", vhostFile("queues:\n  q: {retry: [10s, 1m]}"), nil,
			`t.yaml:5:18: queue "q": retry: expected a mapping, got a list (write it as {delays: [10s, 1m]}; fields: delays, backoff, when, attempts)`},
		{"limits written as a number", vhostFile("queues:\n  q: {limits: 100}"), nil,
			`t.yaml:5:19: queue "q": limits: expected a mapping, got integer 100 (write it as {max_length: 100}; fields: max_length, max_length_bytes, overflow, message_ttl, expires)`},
		{"a value that fits no field gets no guess", vhostFile("queues:\n  q: yes"), nil,
			`t.yaml:5:10: queue "q": expected a mapping, got string "yes" (fields: type, durable, auto_delete, arguments, limits, max_priority, single_active_consumer, delivery_limit, dead_letter, retry, bindings, alert)`},
		{"setting beside its queue", vhostFile("queues:\n  q1:\n  type: quorum\n  durable: true\n  q2: {}"), nil,
			`t.yaml:6:7: "type" reads as another queue's name, but it is a setting: it is written beside queue "q1" (t.yaml:5:7), which has none (indent it under "q1", further than "q1")` + "\n" +
				`t.yaml:7:7: "durable" reads as another queue's name, but it is a setting: it is written beside queue "q1" (t.yaml:5:7), which has none (indent it under "q1", further than "q1")`},
		{"setting beside its exchange", vhostFile("exchanges:\n  e:\n  type: topic"), nil,
			`t.yaml:6:7: "type" reads as another exchange's name, but it is a setting: it is written beside exchange "e" (t.yaml:5:7), which has none (indent it under "e", further than "e")`},
		{"misindented key", vhostFile("queues:\n  a: {}\n b: {}"), nil,
			`t.yaml:6:6: invalid YAML: did not find expected key (this line is indented to no key of the mapping that starts at 4:5, nor inside one)`},
		{"unclosed quote", vhostFile("queues:\n  a: {arguments: {x-q: \"abc}}"), nil,
			`t.yaml:5:28: invalid YAML: found unexpected end of stream (the quoted string that starts here is never closed)`},
		{"alias of itself", "version: 1\nvhosts: &v\n  /: *v\n", nil, `t.yaml:3:6: alias *v refers to the node that contains it (an anchor cannot contain an alias of itself)`},
		{"duplicate key", vhostFile("queues:\n  a: {}\n  b: {}\n  a: {durable: false}"), nil, `t.yaml:7:7: key "a" is already set at t.yaml:5:7 (each key may appear once in a mapping; remove or rename one)`},
		{"duplicate key in arguments", vhostFile("queues:\n  a: {arguments: {x-max-length: 1, x-max-length: 2}}"), nil, `t.yaml:5:40: key "x-max-length" is already set at t.yaml:5:23 (each key may appear once in a mapping; remove or rename one)`},
		{"unsupported tag", vhostFile("queues:\n  a: {durable: !custom true}"), nil, `t.yaml:5:20: unsupported YAML tag !custom (remove the tag; mqctl reads plain YAML values)`},
		{"bad merge", vhostFile("queues:\n  a:\n    <<: [1]\n"), nil, `t.yaml:6:14: merge key << needs a mapping, got integer 1 (write <<: *anchor or <<: [*a, *b] with anchors of mappings)`},
		// Interpolation.
		{"unset variable", vhostFile("queues:\n  a: {max_priority: \"${PRIO}\"}"), nil, `t.yaml:5:25: environment variable PRIO is not set (set PRIO, or give a default: ${PRIO:-value})`},
		{"unset variable in a key", vhostFile("queues:\n  ${SVC}.jobs: {}"), nil, `t.yaml:5:7: environment variable SVC is not set (set SVC, or give a default: ${SVC:-value})`},
		{"bad variable reference", vhostFile("queues:\n  a: {arguments: {x-note: \"${not-a-name}\"}}"), nil, `t.yaml:5:31: a ${…} in this value is no variable reference (write ${NAME} or ${NAME:-default}; NAME is letters, digits and _ and does not start with a digit)`},
		{"unterminated reference", vhostFile("queues:\n  a:\n    arguments: {x-note: \"${HOST\"}"), nil, `t.yaml:6:29: a ${ in this value is not closed (close it with }, or write $$ for a literal $)`},
		{"interpolated value of the wrong type", vhostFile("queues:\n  a:\n    max_priority: ${PRIO}"), []string{"PRIO", "high"}, `t.yaml:6:23: queue "a": max_priority: expected an integer from 0 to 255, got string ${PRIO} (its value not shown)`},
		// Unknown fields.
		{"unknown field with suggestion", vhostFile("queues:\n  a:\n    bindings:\n      - exchange: x\n        routing_kye: y"), nil, `t.yaml:8:13: queue "a": bindings[0]: unknown field "routing_kye" (did you mean "routing_key"?)`},
		{"unknown field in camelCase", vhostFile("queues:\n  a: {maxPriority: 5}"), nil, `t.yaml:5:11: queue "a": unknown field "maxPriority" (did you mean "max_priority"?)`},
		{"unknown field without a close match", vhostFile("exchanges:\n  x: {colour: red}"), nil, `t.yaml:5:11: exchange "x": unknown field "colour" (fields: type, durable, auto_delete, internal, alternate_exchange, arguments)`},
		{"unknown vhost field", vhostFile("queue:\n  a: {}"), nil, `t.yaml:4:5: vhost "/": unknown field "queue" (did you mean "queues"?)`},
		{"unknown limits field", vhostFile("queues:\n  a: {limits: {max_len: 5}}"), nil, `t.yaml:5:20: queue "a": limits: unknown field "max_len" (fields: max_length, max_length_bytes, overflow, message_ttl, expires)`},
		{"unknown defaults field", vhostFile("defaults:\n  queues: {}"), nil, `t.yaml:5:7: vhost "/": defaults: unknown field "queues" (did you mean "queue"?)`},
		// Wrong types.
		{"boolean written as yes", vhostFile("queues:\n  a: {durable: yes}"), nil, `t.yaml:5:20: queue "a": durable: expected true or false, got string "yes" (YAML 1.2 booleans are only true and false)`},
		{"integer written as text", vhostFile("queues:\n  a: {max_priority: ten}"), nil, `t.yaml:5:25: queue "a": max_priority: expected an integer from 0 to 255, got string "ten"`},
		{"integer written quoted", vhostFile("queues:\n  a: {max_priority: \"10\"}"), nil, `t.yaml:5:25: queue "a": max_priority: expected an integer from 0 to 255, got string "10" (remove the quotes)`},
		{"integer out of range", vhostFile("queues:\n  a: {max_priority: 300}"), nil, `t.yaml:5:25: queue "a": max_priority: 300 is out of range (expected an integer from 0 to 255)`},
		{"string written as a number", vhostFile("queues:\n  a: {bindings: [{exchange: x, routing_key: 404}]}"), nil, `t.yaml:5:49: queue "a": bindings[0].routing_key: expected a string, got integer 404 (quote it to use it as text: "404")`},
		{"mapping expected", vhostFile("queues:\n  a: [1]"), nil, `t.yaml:5:10: queue "a": expected a mapping, got a list (fields: type, durable, auto_delete, arguments, limits, max_priority, single_active_consumer, delivery_limit, dead_letter, retry, bindings, alert)`},
		// Arguments that are no mapping: the example is of the right kind.
		{"queue arguments as a list", vhostFile("queues:\n  a: {arguments: [1]}"), nil, `t.yaml:5:22: queue "a": arguments: expected a mapping, got a list (write a mapping such as {x-max-length: 1000})`},
		{"exchange arguments as a list", vhostFile("exchanges:\n  x: {type: topic, arguments: [1]}"), nil, `t.yaml:5:35: exchange "x": arguments: expected a mapping, got a list (write a mapping such as {alternate-exchange: orders.unrouted})`},
		{"binding arguments as a list", vhostFile("exchanges:\n  x: {type: headers}\nqueues:\n  a: {bindings: [{exchange: x, arguments: [1]}]}"), nil, `t.yaml:7:47: queue "a": bindings[0].arguments: expected a mapping, got a list (write a mapping such as {x-match: all, format: pdf})`},
		{"policy definition as a list", vhostFile("policies:\n  p: {pattern: a, definition: [1]}"), nil, `t.yaml:5:35: policy "p": definition: expected a mapping, got a list (write a mapping such as {max-length: 100000})`},
		{"list expected", vhostFile("queues:\n  a: {bindings: {exchange: x}}"), nil, `t.yaml:5:21: queue "a": bindings: expected a list, got a mapping (write a list such as [{exchange: orders, routing_key: order.created}])`},
		{"queues as a list", vhostFile("queues: [a, b]"), nil, `t.yaml:4:13: vhost "/": queues: expected a mapping of names, got a list (write a mapping from each queue name to its settings)`},
		{"compound duration", vhostFile("queues:\n  a: {limits: {message_ttl: 1m30s}}"), nil, `t.yaml:5:33: queue "a": limits.message_ttl: invalid duration "1m30s" (write 90s: one whole number and one unit; a duration such as 250ms, 10s, 1m, 2h, 7d, or an integer of milliseconds)`},
		{"ISO 8601 duration", vhostFile("queues:\n  a:\n    retry: {delays: [PT10S]}"), nil, `t.yaml:6:26: queue "a": retry.delays[0]: invalid duration "PT10S" (write 10s: one whole number and one unit; a duration such as 250ms, 10s, 1m, 2h, 7d, or an integer of milliseconds)`},
		{"size with a space", vhostFile("queues:\n  a: {limits: {max_length_bytes: 1 MiB}}"), nil, `t.yaml:5:38: queue "a": limits.max_length_bytes: invalid size "1 MiB" (write 1MiB: one whole number and one unit; a size such as 512KiB, 100MB or 1GiB, or an integer of bytes; KB=1000 and KiB=1024 bytes)`},
		{"bad duration", vhostFile("queues:\n  a: {limits: {message_ttl: 10 sec}}"), nil, `t.yaml:5:33: queue "a": limits.message_ttl: invalid duration "10 sec" (write 10s: one whole number and one unit; a duration such as 250ms, 10s, 1m, 2h, 7d, or an integer of milliseconds)`},
		{"fractional duration", vhostFile("queues:\n  a: {limits: {message_ttl: 1.5}}"), nil, `t.yaml:5:33: queue "a": limits.message_ttl: expected a duration, got number 1.5 (write a duration such as 250ms, 10s, 1m, 2h, 7d, or an integer of milliseconds)`},
		{"bad size", vhostFile("queues:\n  a: {limits: {max_length_bytes: 10mb}}"), nil, `t.yaml:5:38: queue "a": limits.max_length_bytes: invalid size "10mb" (write a size such as 512KiB, 100MB or 1GiB, or an integer of bytes; KB=1000 and KiB=1024 bytes)`},
		{"expires of zero", vhostFile("queues:\n  a: {limits: {expires: 0}}"), nil, `t.yaml:5:29: queue "a": limits.expires: 0 is too small (the minimum is 1ms) (write a duration such as 250ms, 10s, 1m, 2h, 7d, or an integer of milliseconds)`},
		{"negative max_length", vhostFile("queues:\n  a: {limits: {max_length: -1}}"), nil, `t.yaml:5:32: queue "a": limits.max_length: -1 is out of range (expected a non-negative integer)`},
		{"argument number out of range", vhostFile("queues:\n  a: {arguments: {x-big: .inf}}"), nil, `t.yaml:5:30: queue "a": arguments.x-big: .inf is not a finite number (quote it to use it as text: ".inf")`},
		// Bad enum values.
		{"queue type", vhostFile("queues:\n  a: {type: qourum}"), nil, `t.yaml:5:17: queue "a": type: invalid value "qourum" (did you mean "quorum"?)`},
		{"exchange type", vhostFile("exchanges:\n  x: {type: topix}"), nil, `t.yaml:5:17: exchange "x": type: invalid value "topix" (did you mean "topic"?; expected direct, fanout, topic, headers, or a plugin type starting with x- such as x-delayed-message)`},
		{"exchange type unrelated", vhostFile("exchanges:\n  x: {type: broadcast}"), nil, `t.yaml:5:17: exchange "x": type: invalid value "broadcast" (expected direct, fanout, topic, headers, or a plugin type starting with x- such as x-delayed-message)`},
		{"overflow", vhostFile("queues:\n  a: {limits: {overflow: drop-tail}}"), nil, `t.yaml:5:30: queue "a": limits.overflow: invalid value "drop-tail" (expected one of: drop-head, reject-publish, reject-publish-dlx)`},
		{"dead-letter strategy", vhostFile("queues:\n  a: {dead_letter: {exchange: d, strategy: exactly-once}}"), nil, `t.yaml:5:48: queue "a": dead_letter.strategy: invalid value "exactly-once" (expected one of: at-most-once, at-least-once)`},
		{"apply_to", vhostFile("policies:\n  p: {pattern: x, apply_to: queue, definition: {max-length: 1}}"), nil, `t.yaml:5:33: policy "p": apply_to: invalid value "queue" (did you mean "queues"?)`},
		{"destination_type", vhostFile("bindings:\n  - {source: a, destination: b, destination_type: topic}"), nil, `t.yaml:5:55: vhost "/": bindings[0].destination_type: invalid value "topic" (expected one of: queue, exchange)`},
		{"default_queue_type", vhostFile("default_queue_type: lazy"), nil, `t.yaml:4:25: vhost "/": default_queue_type: invalid value "lazy" (expected one of: classic, quorum, stream)`},
		{"vhost tags as a string", vhostFile("tags: a,b"), nil, `t.yaml:4:11: vhost "/": tags: expected a list of strings, got string "a,b" (write a list of strings: tags: [prod, team-a], or [] for none)`},
		{"vhost tag with a comma", vhostFile("tags: [a, \"b,c\"]"), nil, `t.yaml:4:15: vhost "/": tags[1]: a tag must not contain a comma (the broker splits tags at commas), found "b,c" (write each tag as its own list item)`},
		{"vhost tag empty", vhostFile("tags: [a, \" \"]"), nil, `t.yaml:4:15: vhost "/": tags[1]: a tag must not be empty (remove it, or write the tag)`},
		{"vhost tag a mapping", vhostFile("tags: [{a: 1}]"), nil, `t.yaml:4:12: vhost "/": tags[0]: expected a string, got a mapping (quote it)`},
		{"lint severity", "version: 1\nlint: {rules: {MQ101: warn}}\n", nil, `t.yaml:2:23: lint.rules.MQ101: invalid value "warn" (expected one of: off, info, warning, error)`},
		{"lint rule id", "version: 1\nlint: {rules: {no-dlx: off}}\n", nil, `t.yaml:2:16: lint.rules: "no-dlx" is not a rule ID (rule IDs look like MQ101)`},
		{"raw x-queue-type", vhostFile("queues:\n  a: {arguments: {x-queue-type: lazy}}"), nil, `t.yaml:5:37: queue "a": arguments.x-queue-type: invalid value "lazy" (expected one of classic, quorum, stream; or set type: instead)`},
		// Reserved names.
		{"amq. exchange", vhostFile("exchanges:\n  amq.custom: {type: topic}"), nil, `t.yaml:5:7: exchange "amq.custom": the amq. prefix is reserved by RabbitMQ; the broker refuses to declare it (choose a name that does not start with "amq.")`},
		{"amq. queue", vhostFile("queues:\n  amq.gen-1: {}"), nil, `t.yaml:5:7: queue "amq.gen-1": the amq. prefix is reserved by RabbitMQ; the broker refuses to declare it (choose a name that does not start with "amq.")`},
		{"amq. DLQ", vhostFile("queues:\n  a: {dead_letter: {exchange: d, queue: amq.dlq}}"), nil, `t.yaml:5:45: queue "a": dead_letter.queue "amq.dlq": the amq. prefix is reserved by RabbitMQ; the broker refuses to declare it (choose a name that does not start with "amq.")`},
		{"empty queue name", vhostFile("queues:\n  \"\": {}"), nil, `t.yaml:5:7: queue name must not be empty (give the queue a name)`},
		{"empty vhost name", "version: 1\nvhosts:\n  \"\": {}\n", nil, `t.yaml:3:3: vhost name must not be empty (the default vhost is named "/")`},
		// Conflicts between typed and raw settings.
		{"max_priority vs x-max-priority", vhostFile("queues:\n  a:\n    max_priority: 10\n    arguments: {x-max-priority: 5}"), nil, `t.yaml:6:23: queue "a": max_priority 10 conflicts with arguments.x-max-priority 5 at t.yaml:7:37 (set it once: remove max_priority or arguments.x-max-priority)`},
		{"limits vs raw", vhostFile("queues:\n  a:\n    limits: {message_ttl: 1m}\n    arguments: {x-message-ttl: 1000}"), nil, `t.yaml:6:31: queue "a": limits.message_ttl 60000 conflicts with arguments.x-message-ttl 1000 at t.yaml:7:36 (set it once: remove limits.message_ttl or arguments.x-message-ttl)`},
		{"type vs x-queue-type", vhostFile("queues:\n  a:\n    type: quorum\n    arguments: {x-queue-type: classic}"), nil, `t.yaml:7:35: queue "a": arguments.x-queue-type "classic" conflicts with type "quorum" at t.yaml:6:15 (set it once: remove type or arguments.x-queue-type)`},
		{"alternate_exchange vs raw", vhostFile("exchanges:\n  x:\n    alternate_exchange: ae\n    arguments: {alternate-exchange: other}"), nil, `t.yaml:6:29: exchange "x": alternate_exchange "ae" conflicts with arguments.alternate-exchange "other" at t.yaml:7:41 (set it once: remove alternate_exchange or arguments.alternate-exchange)`},
		{"dead_letter vs raw", vhostFile("queues:\n  a:\n    dead_letter: {exchange: dlx}\n    arguments: {x-dead-letter-exchange: other}"), nil, `t.yaml:6:33: queue "a": dead_letter.exchange "dlx" conflicts with arguments.x-dead-letter-exchange "other" at t.yaml:7:45 (set it once: remove dead_letter.exchange or arguments.x-dead-letter-exchange)`},
		// Object rules.
		{"routing_key and routing_keys", vhostFile("queues:\n  a:\n    bindings: [{exchange: x, routing_key: a, routing_keys: [b]}]"), nil, `t.yaml:6:50: queue "a": bindings[0]: sets both routing_key and routing_keys (use routing_key for one key or routing_keys for several)`},
		{"empty routing_keys", vhostFile("queues:\n  a:\n    bindings: [{exchange: x, routing_keys: []}]"), nil, `t.yaml:6:48: queue "a": bindings[0].routing_keys: is empty, so it binds nothing (list at least one key, or remove routing_keys to bind with the empty key)`},
		{"binding without exchange", vhostFile("queues:\n  a:\n    bindings: [{routing_key: a}]"), nil, `t.yaml:6:20: queue "a": bindings[0]: missing required field "exchange" (add exchange: <exchange name>)`},
		{"binding to the default exchange", vhostFile("queues:\n  a:\n    bindings: [{exchange: \"\"}]"), nil, `t.yaml:6:31: queue "a": bindings[0].exchange: must not be empty (the default exchange is bound implicitly: it routes by queue name)`},
		{"vhost binding without source", vhostFile("bindings:\n  - {destination: q}"), nil, `t.yaml:5:9: vhost "/": bindings[0]: missing required field "source" (add source: <exchange name>)`},
		{"raw dead-letter routing key without exchange", vhostFile("queues:\n  a: {arguments: {x-dead-letter-routing-key: b}}"), nil, `t.yaml:5:50: queue "a": x-dead-letter-routing-key without x-dead-letter-exchange: RabbitMQ refuses to declare such a queue (add x-dead-letter-exchange ("" for the default exchange), or use dead_letter: {exchange: …, routing_key: …})`},
		{"dead_letter with neither exchange nor queue", vhostFile("queues:\n  a:\n    dead_letter: {routing_key: x}"), nil, `t.yaml:6:9: queue "a": dead_letter: names neither an exchange nor a queue (set dead_letter.exchange, where dead letters are published, and usually dead_letter.queue, the queue that keeps them)`},
		{"dead letters via the default exchange with a foreign key", vhostFile("queues:\n  a:\n    dead_letter: {routing_key: x, queue: a.dlq}"), nil, `t.yaml:6:46: queue "a": dead_letter: dead letters go to the default exchange with routing key "x", which does not reach queue "a.dlq" (the default exchange routes by queue name: remove routing_key, or set dead_letter.exchange)`},
		{"dead_letter.queue mapping without name", vhostFile("queues:\n  a:\n    dead_letter: {exchange: d, queue: {type: quorum}}"), nil, `t.yaml:6:43: queue "a": dead_letter.queue: missing required field "name" (add name: <queue name>)`},
		{"dead_letter.queue of the wrong type", vhostFile("queues:\n  a:\n    dead_letter: {exchange: d, queue: [x]}"), nil, `t.yaml:6:43: queue "a": dead_letter.queue: expected a queue name, got a list (write a queue name, or a mapping {name: …, <queue settings>})`},
		{"DLQ collides with a declared queue", vhostFile("queues:\n  a:\n    dead_letter: {exchange: d, queue: b}\n  b: {type: quorum}"), nil, `t.yaml:6:43: queue "b" declared by dead_letter.queue of queue "a" differs from the queue of that name declared at t.yaml:7:7: type classic here, quorum there (give the queues different names, or the same settings)`},
		{"DLQ mapping collides with a declared queue", vhostFile("queues:\n  a:\n    dead_letter: {exchange: d, queue: {name: b, limits: {max_length: 5}}}\n  b: {}"), nil, `t.yaml:6:50: queue "b" declared by dead_letter.queue of queue "a" differs from the queue of that name declared at t.yaml:7:7: arguments {"x-max-length":5} here, {} there (give the queues different names, or the same settings)`},
		{"DLQ named by a transient queue collides with a declared transient queue", vhostFile("queues:\n  a:\n    durable: false\n    dead_letter: {exchange: d, queue: b}\n  b: {durable: false}"), nil, `t.yaml:7:43: queue "b" declared by dead_letter.queue of queue "a" differs from the queue of that name declared at t.yaml:8:7: durable true here, false there (a DLQ named by dead_letter.queue is durable, so that it keeps dead letters across a restart: remove durable: false from queue "b", or write dead_letter.queue as {name: "b", durable: false} to keep it transient)`},
		{"two DLQs of one name differ", vhostFile("queues:\n  a:\n    dead_letter: {exchange: d, queue: shared}\n  b:\n    type: quorum\n    dead_letter: {exchange: d, queue: shared}"), nil, `t.yaml:9:43: queue "shared" declared by dead_letter.queue of queue "b" differs from the queue of that name declared by dead_letter.queue of queue "a" at t.yaml:6:43: type quorum here, classic there (give the queues different names, or the same settings)`},
		{"retry tier collides with a declared queue", vhostFile("queues:\n  a:\n    retry: {delays: [10s]}\n  a.retry.10s: {}"), nil, `t.yaml:6:26: queue "a.retry.10s" declared by retry.delays of queue "a" differs from the queue of that name declared at t.yaml:7:7: arguments {"x-dead-letter-exchange":"","x-dead-letter-routing-key":"a","x-message-ttl":10000} here, {} there (give the queues different names, or the same settings)`},
		{"repeated delay", vhostFile("queues:\n  a:\n    retry: {delays: [10s, 10000]}"), nil, `t.yaml:6:31: queue "a": retry.delays[1]: 10000 repeats the delay 10s at t.yaml:6:26 (list each delay once)`},
		{"zero delay", vhostFile("queues:\n  a:\n    retry: {delays: [0s]}"), nil, `t.yaml:6:26: queue "a": retry.delays[0]: 0s is too small (the minimum is 1ms) (write a duration such as 250ms, 10s, 1m, 2h, 7d, or an integer of milliseconds)`},
		{"delays not a list", vhostFile("queues:\n  a:\n    retry: {delays: 10s}"), nil, `t.yaml:6:25: queue "a": retry.delays: expected a list of durations, got string "10s" (write a list such as [10s, 1m, 10m])`},
		{"duplicate binding", vhostFile("queues:\n  a:\n    bindings: [{exchange: x, routing_key: k}]\nbindings:\n  - {source: x, destination: a, routing_key: k}"), nil, `t.yaml:8:9: binding from exchange "x" to queue "a" with routing key "k" is already declared at t.yaml:6:20 (declare each binding once; remove one)`},
		{"duplicate key in routing_keys", vhostFile("queues:\n  a:\n    bindings: [{exchange: x, routing_keys: [k, k]}]"), nil, `t.yaml:6:52: binding from exchange "x" to queue "a" with routing key "k" is already declared at t.yaml:6:49 (declare each binding once; remove one)`},
		{"policy without pattern and definition", vhostFile("policies:\n  p: {priority: 1}"), nil, `t.yaml:5:10: policy "p": missing required field "pattern" (add pattern: "^orders\\.")
t.yaml:5:10: policy "p": missing required field "definition" (add definition: {max-length: 100000})`},
		{"policy null", vhostFile("policies:\n  p:"), nil, `t.yaml:5:7: policy "p": needs a pattern and a definition (write {pattern: "^name\\.", definition: {…}})`},
		{"policy with empty definition", vhostFile("policies:\n  p: {pattern: x, definition: {}}"), nil, `t.yaml:5:35: policy "p": definition is empty (a policy sets at least one key, e.g. {max-length: 100000})`},
		{"defaults with an error are reported once", vhostFile("defaults:\n  queue: {max_priority: high}\nqueues:\n  a:\n  b:\n  c:"), nil, `t.yaml:5:29: vhost "/": defaults.queue: max_priority: expected an integer from 0 to 255, got string "high"`},
		{"defaults conflict with a queue's raw argument", vhostFile("defaults:\n  queue: {max_priority: 10}\nqueues:\n  a: {arguments: {x-max-priority: 5}}"), nil, `t.yaml:5:29: queue "a": max_priority 10 conflicts with arguments.x-max-priority 5 at t.yaml:7:39 (set it once: remove max_priority or arguments.x-max-priority)`},
		{"several errors in file order", vhostFile("queues:\n  b: {durable: 1}\n  a: {type: x}\nexchanges:\n  amq.x: {}"), nil, `t.yaml:5:20: queue "b": durable: expected true or false, got integer 1
t.yaml:6:17: queue "a": type: invalid value "x" (expected one of: classic, quorum, stream)
t.yaml:8:7: exchange "amq.x": the amq. prefix is reserved by RabbitMQ; the broker refuses to declare it (choose a name that does not start with "amq.")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(tt.src), Options{LookupEnv: envOf(tt.env...)})
			if err == nil {
				t.Fatalf("no error; want:\n%s", tt.want)
			}
			if got := errorLines(err); got != strings.TrimSpace(tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", got, strings.TrimSpace(tt.want))
			}
		})
	}
}
