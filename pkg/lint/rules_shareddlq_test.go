package lint

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
)

// TestNoDLXNamesTheSharedDLQ: MQ101's advice for a queue without a
// dead-letter exchange names the DLQ the vhost's other queues share, with
// the exchange and routing key they reach it by, rather than a new DLQ of
// the queue's own (as for the job.status queue of the corpus file of
// distriqueue, whose job.high, job.medium and job.low dead-letter into
// job.dead-letter); a DLQ only one queue uses, its own, is no model.
func TestNoDLXNamesTheSharedDLQ(t *testing.T) {
	const head = "version: 1\nvhosts:\n  v:\n"
	for _, tc := range []struct {
		name      string
		src       string
		want, not []string
	}{
		{
			name: "two queues share a DLQ through the default exchange",
			src: `    exchanges: {jobs: {type: direct}}
    queues:
      job.dead-letter: {limits: {max_length: 1000}}
      job.high:
        bindings: [{exchange: jobs, routing_key: high}]
        dead_letter: {exchange: "", routing_key: job.dead-letter}
      job.low:
        bindings: [{exchange: jobs, routing_key: low}]
        dead_letter: {exchange: "", routing_key: job.dead-letter}
      job.status:
        bindings: [{exchange: jobs, routing_key: status}]
`,
			want: []string{`Add dead_letter: {exchange: "", routing_key: job.dead-letter}, as queues job.high and job.low do`, `in DLQ "job.dead-letter"`, "job.status.dlq} for a DLQ of its own"},
		},
		{
			name: "two queues share a DLQ through a fanout dead-letter exchange",
			src: `    exchanges: {jobs: {type: direct}, dlx: {type: fanout}}
    queues:
      parked:
        bindings: [{exchange: dlx}]
      a:
        bindings: [{exchange: jobs, routing_key: a}]
        dead_letter: {exchange: dlx, routing_key: failed}
      b:
        bindings: [{exchange: jobs, routing_key: b}]
        dead_letter: {exchange: dlx, routing_key: failed}
      c:
        bindings: [{exchange: jobs, routing_key: c}]
`,
			want: []string{`Add dead_letter: {exchange: dlx, routing_key: failed}, as queues a and b do`, `in DLQ "parked"`},
		},
		{
			name: "each queue has a DLQ of its own: a new one for this queue too",
			src: `    exchanges: {jobs: {type: direct}}
    queues:
      a:
        bindings: [{exchange: jobs, routing_key: a}]
        dead_letter: {exchange: "", queue: a.dlq}
      b:
        bindings: [{exchange: jobs, routing_key: b}]
        dead_letter: {exchange: "", queue: b.dlq}
      c:
        bindings: [{exchange: jobs, routing_key: c}]
`,
			want: []string{`Add dead_letter: {exchange: "", queue: c.dlq}`},
			not:  []string{"as queues"},
		},
		{
			name: "one other queue's DLQ is its own",
			src: `    exchanges: {jobs: {type: direct}}
    queues:
      dlq: {}
      a:
        bindings: [{exchange: jobs, routing_key: a}]
        dead_letter: {exchange: "", routing_key: dlq}
      c:
        bindings: [{exchange: jobs, routing_key: c}]
`,
			want: []string{`Add dead_letter: {exchange: "", queue: c.dlq}`},
			not:  []string{"as queue"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, err := loader.LoadBytes("t.yaml", []byte(head+tc.src), loader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fs, err := Run(top, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, f := range only(fs, "MQ101") {
				msgs = append(msgs, f.Message)
			}
			if len(msgs) != 1 {
				t.Fatalf("want one MQ101, got:\n%s", describe(fs))
			}
			for _, s := range tc.want {
				if !strings.Contains(msgs[0], s) {
					t.Errorf("MQ101 lacks %q: %s", s, msgs[0])
				}
			}
			for _, s := range tc.not {
				if strings.Contains(msgs[0], s) {
					t.Errorf("MQ101 says %q: %s", s, msgs[0])
				}
			}
		})
	}
}
