package lint

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
)

// TestMisspelledArgs: MQ506 flags a queue or exchange argument RabbitMQ
// does not read that is one or two edits from one it does (3.10.8, 4.0.5
// and 4.3.6 declare a queue with x-max-lenght or max-length, and an
// exchange with x-alternate-exchange, storing the argument unread), at the
// argument, with the spelling meant; an application's own argument, far
// from every known one, and a known one are left alone.
func TestMisspelledArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want string // the finding's place and what it says; "" for none
		says string
	}{
		{name: "a typo in a queue argument", src: `    queues:
      q:
        arguments:
          x-max-length-bytes: 1000
          x-max-lenght: |10
`, says: "Write x-max-length if"},
		{name: "a policy key as a queue argument", src: `    queues:
      q:
        arguments:
          message-ttl: |1000
`, says: "Write x-message-ttl if"},
		{name: "x- before alternate-exchange", src: `    exchanges:
      x:
        type: topic
        arguments:
          x-alternate-exchange: |ae
`, says: "Write alternate-exchange if"},
		{name: "an application's own argument", src: `    queues:
      q:
        arguments: {x-owner-team: payments}
`},
		{name: "known arguments", src: `    exchanges:
      x: {type: topic, alternate_exchange: ae}
      ae: {type: fanout}
    queues:
      q:
        arguments: {x-max-length: 10, x-queue-mode: lazy, x-stream-filter-size-bytes: 16}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "version: 1\nvhosts:\n  v:\n" + tc.src
			want := ""
			if strings.Contains(src, "|") {
				want, src = markedPos(t, "t.yaml", src)
			}
			top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fs, err := Run(top, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := only(fs, "MQ506")
			if want == "" {
				if len(got) != 0 {
					t.Errorf("want no MQ506, got:\n%s", describe(got))
				}
				return
			}
			if len(got) != 1 || got[0].Pos.String() != want || !strings.Contains(got[0].Message, tc.says) {
				t.Errorf("want one MQ506 at %s saying %q, got:\n%s", want, tc.says, describe(got))
			}
		})
	}
}
