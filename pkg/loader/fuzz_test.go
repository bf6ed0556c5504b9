package loader

import (
	"errors"
	"strings"
	"testing"
)

// FuzzLoad asserts that no input makes Load panic, and that a failed load
// always explains itself with positioned errors.
func FuzzLoad(f *testing.F) {
	seeds := []string{
		"",
		"version: 1\n",
		vhostFile("queues:\n  q:\n"),
		workerDefaults + "      email:\n      sms: {dead_letter: ~}\n",
		vhostFile(`exchanges:
  orders: {type: topic, alternate_exchange: "${AE:-unrouted}"}
queues:
  a: &q
    type: quorum
    limits: {max_length: 1, max_length_bytes: 1KiB, overflow: drop-head, message_ttl: 1s, expires: 1d}
    dead_letter: {exchange: dlx, queue: {name: a.dlq, type: classic}, strategy: at-least-once}
    retry: {delays: [10s, 1m]}
    bindings: [{exchange: orders, routing_keys: [a, b]}]
  b:
    <<: *q
    max_priority: ${P}
bindings:
  - {source: orders, destination: audit, destination_type: exchange}
policies:
  p: {pattern: ".*", definition: {max-length: 1}}`),
		"version: 1\nvhosts: &v\n  /: *v\n",
		"a: &a [1,1]\nb: &b [*a,*a]\nc: [*b,*b]\n",
		"version: 1\nvhosts:\n  /: {queues: {a: {bindings: [{exchange: x, routing_key: k}, {exchange: x, routing_key: k}]}}}\n",
		"version: 1\n---\n",
		"\t",
		"{",
		"version: 1\nvhosts:\n  /:\n    queues:\n      a: {dead_letter: {queue: a}}\n",
		"version: 1\nvhosts:\n  v:\n    shovels: {s: {src-uri: \"${S}\", src-queue: q, dest-uri: [\"${D}\", \"amqp://u:${P}@h\"]}}\nusers:\n  ${U}: {password: ${PW}, tags: [\"${T}\"]}\n",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	env := envOf("P", "7", "AE", "")
	f.Fuzz(func(t *testing.T, src string) {
		top, err := LoadBytes("f.yaml", []byte(src), Options{LookupEnv: env})
		// Offline (secrets optional), a file that loads loads the same,
		// without a warning; warnings are positioned too.
		var warns ErrorList
		offline, offErr := LoadBytes("f.yaml", []byte(src), Options{LookupEnv: env, SecretsOptional: true, Warn: func(w *Error) { warns = append(warns, w) }})
		for _, w := range warns {
			if !strings.HasPrefix(w.Pos.File, "f.yaml") || !strings.Contains(w.Msg, "is not set") {
				t.Fatalf("warning without a file or not about a variable: %#v", w)
			}
		}
		if err == nil && (offErr != nil || len(warns) > 0 || offline == nil) {
			t.Fatalf("loads, but not the same offline: %v, warnings %v", offErr, warns)
		}
		if offErr == nil && offline == nil {
			t.Fatal("nil topology without error offline")
		}
		if err == nil {
			if top == nil {
				t.Fatal("nil topology without error")
			}
			return
		}
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("error is not a non-empty ErrorList: %v", err)
		}
		for _, e := range list {
			if !strings.HasPrefix(e.Pos.File, "f.yaml") || e.Msg == "" {
				t.Fatalf("error without a file or message: %#v", e)
			}
		}
	})
}
