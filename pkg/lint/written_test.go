package lint

import "github.com/mqctl/mqctl/pkg/rmqversion"

// writtenCases: findings about an argument name it as the file writes it,
// the typed field with the argument in parentheses (limits.max_length
// (x-max-length)), and an argument written raw as itself.
func writtenCases() []ruleCase {
	on := func(v string) Options { return Options{Version: rmqversion.MustParse(v)} }
	return []ruleCase{
		{name: "a stream's limits.max_length, named so, beside its max_length_bytes", id: "MQ501",
			build: fromYAML(`queues:
  s: {type: stream, limits: {max_length: 7, max_length_bytes: 1GB}}
`), opts: on("4.3"), fire: []string{"s"},
			contains: []string{`stream "s" sets limits.max_length (x-max-length), which streams do not support`,
				"Streams are bounded by retention instead, which its limits.max_length_bytes (x-max-length-bytes) sets already: remove it"}},
		{name: "a stream's limits.message_ttl without retention: the typed fields to use", id: "MQ501",
			build: fromYAML(`queues:
  s: {type: stream, limits: {message_ttl: 1m}}
`), opts: on("4.3"), fire: []string{"s"},
			contains: []string{`sets limits.message_ttl (x-message-ttl)`, "use limits.max_length_bytes or arguments.x-max-age"}},
		{name: "a raw argument stays as written", id: "MQ501",
			build: fromYAML(`queues:
  s: {type: stream, arguments: {x-max-length: 7}}
`), opts: on("4.3"), fire: []string{"s"},
			contains: []string{`stream "s" sets x-max-length, which`, "use x-max-length-bytes or x-max-age"}},
		{name: "a classic queue's delivery_limit", id: "MQ501",
			build: fromYAML(`exchanges:
  dlx: {type: direct}
queues:
  c: {delivery_limit: 3, dead_letter: {exchange: dlx, queue: c.dlq}}
`), opts: on("4.3"), fire: []string{"c"},
			contains: []string{`classic queue "c" sets delivery_limit (x-delivery-limit), which classic queues do not support`}},
		{name: "a quorum queue's limits.overflow reject-publish-dlx", id: "MQ501",
			build: fromYAML(`exchanges:
  dlx: {type: direct}
queues:
  qq: {type: quorum, dead_letter: {exchange: dlx, queue: qq.dlq}, limits: {max_length: 10, overflow: reject-publish-dlx}}
`), opts: on("4.3"), fire: []string{"qq"},
			contains: []string{`quorum queue "qq" sets limits.overflow (x-overflow) reject-publish-dlx, which quorum queues do not support`}},
		{name: "a queue's limits.overflow that a policy's drop-head overrides", id: "MQ302",
			build: fromYAML(`queues:
  qq: {type: quorum, limits: {max_length: 10, overflow: reject-publish}}
policies:
  p: {pattern: "^qq$", definition: {overflow: drop-head}}
`), opts: on("4.3"), fire: []string{"qq"},
			contains: []string{`queue "qq" sets limits.overflow (x-overflow) reject-publish, but policy "p" sets overflow drop-head`}},
		{name: "a classic queue's max_priority above 10", id: "MQ502",
			build: fromYAML(`queues:
  c: {max_priority: 20}
`), opts: on("4.3"), fire: []string{"c"},
			contains: []string{`queue "c" has max_priority (x-max-priority) 20`}},
	}
}
