package lint

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// markedPos is where "|" stands in src, as line:col of the file named
// file, and src without it.
func markedPos(t *testing.T, file, src string) (string, string) {
	t.Helper()
	i := strings.Index(src, "|")
	if i < 0 || strings.Count(src, "|") != 1 {
		t.Fatalf("the source marks no place, or more than one, with |:\n%s", src)
	}
	line := strings.Count(src[:i], "\n") + 1
	col := i - strings.LastIndex(src[:i], "\n")
	return fmt.Sprintf("%s:%d:%d", file, line, col), src[:i] + src[i+1:]
}

// TestFindingsAndRefusalsAtTheArgument: a lint finding or a refusal about
// one argument of a queue, exchange or binding, one key of a policy's
// definition or one setting of a shovel points at where the file writes
// it (marked | in the source: its value), not at the object's name, which
// may be many lines above it; so does one about a queue flag its type
// refuses (durable: false on a stream). Where a typed field sets the argument
// (limits.max_length for x-max-length), that field is the place.
func TestFindingsAndRefusalsAtTheArgument(t *testing.T) {
	const head = "version: 1\nvhosts:\n  v:\n"
	for _, tc := range []struct {
		name    string
		version string
		src     string
		rule    string // the finding at the mark ("" for none)
		refusal string // the refused key at the mark ("" for none)
		// topicRefusal: CheckTopicPermissionExchanges refuses the
		// entry at the mark.
		topicRefusal bool
	}{
		{name: "x-max-priority on a quorum queue", src: `    queues:
      q:
        type: quorum
        dead_letter: {exchange: "", queue: q.dlq}
        limits: {max_length: 10, overflow: reject-publish}
        arguments:
          x-max-priority: |5
`, rule: "MQ501", refusal: "x-max-priority"},
		{name: "limits.max_length on a stream", src: `    queues:
      s:
        type: stream
        arguments: {x-max-age: 7D}
        limits:
          max_length: |100
`, rule: "MQ501", refusal: "limits.max_length (x-max-length)"},
		{name: "a stream that is not durable", src: `    queues:
      s:
        type: stream
        arguments: {x-max-age: 7D}
        durable: |false
`, rule: "MQ501", refusal: "durable: false"},
		{name: "a quorum queue that is auto-delete", src: `    queues:
      q:
        type: quorum
        dead_letter: {exchange: "", queue: q.dlq}
        limits: {max_length: 10, overflow: reject-publish}
        auto_delete: |true
`, rule: "MQ501", refusal: "auto_delete: true"},
		{name: "x-queue-version 1 on 4.3", src: `    queues:
      q:
        arguments:
          x-queue-version: |1
`, rule: "MQ501", refusal: "x-queue-version: 1"},
		{name: "x-max-length as a string", src: `    queues:
      q:
        arguments:
          x-max-length: |"10"
`, rule: "MQ501", refusal: "x-max-length: 10"},
		{name: "x-queue-master-locator on 4.3", src: `    queues:
      q:
        arguments:
          x-queue-master-locator: |min-masters
`, rule: "MQ503", refusal: "x-queue-master-locator"},
		{name: "x-overflow on a quorum queue", src: `    queues:
      q:
        type: quorum
        arguments:
          x-max-length: 10
          x-overflow: |reject-publish-dlx
`, rule: "MQ501"},
		{name: "policy value refused", src: `    policies:
      p:
        pattern: "^q"
        definition:
          message-ttl: 1000
          max-length: |ten
`, rule: "MQ501", refusal: "max-length: ten"},
		{name: "policy ha-* key on 4.3", src: `    policies:
      p:
        pattern: "^q"
        definition:
          message-ttl: 1000
          ha-mode: |all
`, rule: "MQ702", refusal: "ha-mode"},
		{name: "policy ha-* key on 3.10", version: "3.10", src: `    policies:
      p:
        pattern: "^q"
        definition:
          message-ttl: 1000
          ha-mode: |all
`, rule: "MQ702"},
		{name: "policy key 3.10 does not know", version: "3.10", src: `    queues: {q: {}}
    policies:
      p:
        pattern: "^q"
        definition:
          message-ttl: 1000
          consumer-timeout: |60000
`, rule: "MQ501", refusal: "consumer-timeout"},
		{name: "alternate exchange undeclared", src: `    exchanges:
      x:
        type: topic
        arguments:
          alternate-exchange: |nope
`, rule: "MQ401"},
		{name: "typed alternate_exchange undeclared", src: `    exchanges:
      x:
        type: topic
        alternate_exchange: |nope
`, rule: "MQ401"},
		{name: "dead-letter exchange undeclared", src: `    queues:
      q:
        arguments:
          x-max-length: 10
          x-dead-letter-exchange: |nope
`, rule: "MQ102"},
		{name: "headers binding's x-match", src: `    exchanges: {h: {type: headers}}
    queues: {q: {}}
    bindings:
      - source: h
        destination: q
        arguments:
          format: pdf
          x-match: |bogus
`, refusal: "arguments"},
		{name: "shovel setting 4.0 does not know", version: "4.0", src: `    queues: {q: {}, r: {}}
    shovels:
      s:
        src-uri: "amqp://"
        src-queue: q
        dest-uri: "amqp://"
        dest-queue: r
        src-consumer-name: |mine
`, refusal: "src-consumer-name"},
		{name: "shovel from a queue the file does not declare", src: `    queues: {r: {}}
    shovels:
      s:
        src-uri: "amqp:///v"
        src-queue: |q
        dest-uri: "amqp:///v"
        dest-queue: r
`, rule: "MQ403"},
		{name: "shovel to a queue of the wrong vhost", src: `    queues: {q: {}, r: {}}
    shovels:
      s:
        src-uri: "amqp:///v"
        src-queue: q
        dest-uri: "amqp://"
        dest-queue: |r
`, rule: "MQ403"},
		{name: "an upstream set's member the vhost lacks", src: `    federation_upstreams:
      up-1: {uri: "amqp://dc1"}
    federation_upstream_sets:
      all:
        - {upstream: up-1}
        - |{upstream: up-2}
`, rule: "MQ404"},
		{name: "a topic permission for an exchange the vhost lacks", src: `    exchanges: {events: {type: topic}}
users:
  u:
    password_hash: ""
    topic_permissions:
      v:
        - {exchange: events, write: "^a$", read: "^a$"}
        - |{exchange: evnets, write: "^a$", read: "^a$"}
`, rule: "MQ801", topicRefusal: true},
		{name: "shovel queue argument 4.3 refuses", src: `    queues: {q: {}}
    shovels:
      s:
        src-uri: "amqp://"
        src-queue: q
        dest-uri: "amqp://remote"
        dest-queue: r
        dest-queue-args:
          x-max-length: |-1
`, refusal: "dest-queue-args.x-max-length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, src := markedPos(t, "t.yaml", head+tc.src)
			top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			version := tc.version
			if version == "" {
				version = "4.3"
			}
			v := rmqversion.MustParse(version)
			if tc.rule != "" {
				fs, err := Run(top, Options{Version: v})
				if err != nil {
					t.Fatal(err)
				}
				var at []string
				for _, f := range only(fs, tc.rule) {
					at = append(at, f.Pos.String())
					if f.Pos.String() == want {
						at = nil
						break
					}
				}
				if at != nil || len(only(fs, tc.rule)) == 0 {
					t.Errorf("%s: at %q, want one at %s; findings:\n%s", tc.rule, at, want, describe(fs))
				}
			}
			if tc.topicRefusal {
				var tre *rmqversion.RefusalsError
				if !errors.As(v.CheckTopicPermissionExchanges(top, nil), &tre) || len(tre.Refusals) != 1 || tre.Refusals[0].Pos.String() != want {
					t.Errorf("topic permission refusals %v, want one at %s", tre, want)
				}
			}
			var re *rmqversion.RefusalsError
			if errors.As(v.Check(top), &re) != (tc.refusal != "") {
				t.Fatalf("refusals: %v, want one of %q", v.Check(top), tc.refusal)
			}
			if tc.refusal == "" {
				return
			}
			found := false
			for _, r := range re.Refusals {
				if r.Key == tc.refusal {
					found = true
					if r.Pos.String() != want {
						t.Errorf("refusal of %s at %s, want %s: %v", r.Key, r.Pos, want, r)
					}
					if r.ObjectPos.IsZero() {
						t.Errorf("refusal of %s names no place of its object: %v", r.Key, r)
					}
				}
			}
			if !found {
				t.Errorf("no refusal of %q: %v", tc.refusal, re)
			}
		})
	}
}
