package rmqversion_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A quorum queue whose file asks for retry.backoff is refused where the
// version has no delayed retry: the broker would take the arguments and
// ignore them (4.0.5 and 3.10.8 do, TestBackoffAgainstBroker in pkg/cli).
// The same arguments written raw are not refused (lint MQ504 says it).
func TestCheckBackoff(t *testing.T) {
	build := func(attempts int64) *topology.Topology {
		top := topology.New()
		v := top.Vhost("/")
		args := topology.Args{"x-delayed-retry-type": "failed", "x-delayed-retry-min": int64(1000)}
		if attempts > 0 {
			args["x-delivery-limit"] = attempts - 1
		}
		v.Queues["jobs"] = &topology.Queue{Name: "jobs", Type: topology.QueueQuorum, Durable: true, Arguments: args,
			Backoff: &topology.Backoff{Pos: topology.Pos{File: "t.yaml", Line: 9, Col: 7}, MinMS: 1000, On: "failed", Attempts: attempts}}
		v.Queues["raw"] = &topology.Queue{Name: "raw", Type: topology.QueueQuorum, Durable: true, Arguments: args.Clone()}
		return top
	}
	for _, tt := range []struct {
		version  string
		attempts int64
		want     string // "" when accepted
	}{
		{"4.3", 5, ""},
		{"4.3.0", 5, ""},
		{"4.3.6", 0, ""},
		{"4.2", 5, "RabbitMQ 4.2 would refuse or ignore 1 object of the file:\n" +
			`  t.yaml:9:7: queue "jobs" in vhost "/": retry.backoff: RabbitMQ 4.2 has no delayed retry (quorum queues have it from 4.3): it declares the queue with the x-delayed-retry-* arguments and ignores them, so a message its consumer rejects is redelivered at once, and its 5 attempts are spent in a burst, with no wait between them; ` +
			"write retry: {delays: [10s, 1m, …]} instead: before 4.3, delay queues are the only way to make a retry wait (the consumer publishes the message to jobs.retry.<delay> and acknowledges it; the tier returns it when its TTL expires); or target RabbitMQ 4.3 or later"},
		{"4.0.5", 0, "its 21 attempts (the default delivery limit of 20, +1) are spent in a burst"},
		{"3.10.8", 0, "RabbitMQ 3.10 has no delayed retry (quorum queues have it from 4.3): it declares the queue with the x-delayed-retry-* arguments and ignores them, so a message its consumer rejects is redelivered at once, again and again;"},
	} {
		err := rmqversion.MustParse(tt.version).Check(build(tt.attempts))
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.version, err)
			}
			continue
		}
		var re *rmqversion.RefusalsError
		if !errors.As(err, &re) || len(re.Refusals) != 1 || !re.Refusals[0].Ignored || re.Refusals[0].Key != "retry.backoff" {
			t.Errorf("%s: want one refusal of retry.backoff, got %v", tt.version, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %s\nwant …%s…", tt.version, err, tt.want)
		}
	}
}

// A file refused only for what the broker would refuse keeps its header.
func TestCheckHeaderWithoutIgnored(t *testing.T) {
	top := topology.New()
	v := top.Vhost("/")
	v.Queues["c"] = &topology.Queue{Name: "c", Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{"x-delivery-limit": int64(3)}}
	err := rmqversion.MustParse("4.0").Check(top)
	if err == nil || !strings.HasPrefix(err.Error(), "RabbitMQ 4.0 would refuse 1 object of the file:") {
		t.Errorf("got %v", err)
	}
}
