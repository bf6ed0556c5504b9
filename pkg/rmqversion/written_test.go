package rmqversion_test

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestRefusalsNameTheWrittenField: a refusal of an argument the file sets
// through mqctl's typed field names the field, with the argument in
// parentheses, and its fix names the field; an argument written raw reads
// as before.
func TestRefusalsNameTheWrittenField(t *testing.T) {
	const file = `version: 1
vhosts:
  /:
    exchanges:
      dlx: {type: direct}
    queues:
      s: {type: stream, limits: {max_length: 7, message_ttl: 1m}}
      raw: {type: stream, arguments: {x-max-length: 7}}
      c: {type: classic, delivery_limit: 3, dead_letter: {exchange: dlx, strategy: at-least-once}}
      qq: {type: quorum, max_priority: 5}
      r: {type: stream, dead_letter: {exchange: dlx}, single_active_consumer: true}
      ttl: {type: classic, limits: {message_ttl: 4000d}}
      v1: {type: classic, arguments: {x-queue-version: 1}}
`
	top, err := loader.LoadBytes("topology.yaml", []byte(file), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	every := []string{"3.10", "4.0", "4.3"}
	for _, c := range []struct {
		versions []string
		want     string
	}{
		{every, `queue "s" in vhost "/": limits.max_length (x-max-length): RabbitMQ %s refuses this argument on a stream queue (HTTP 400 invalid arg); remove it: streams are bounded by limits.max_length_bytes and arguments.x-max-age, not by message count`},
		{every, `queue "s" in vhost "/": limits.message_ttl (x-message-ttl): RabbitMQ %s refuses this argument on a stream queue (HTTP 400 invalid arg); remove it: a stream keeps messages by arguments.x-max-age and limits.max_length_bytes`},
		{every, `queue "raw" in vhost "/": x-max-length: RabbitMQ %s refuses this argument on a stream queue (HTTP 400 invalid arg); remove it: streams are bounded by max_length_bytes and x-max-age, not by message count`},
		{every, `queue "c" in vhost "/": delivery_limit (x-delivery-limit): RabbitMQ %s refuses this argument on a classic queue (HTTP 400 invalid arg); remove it, or declare the queue with the type that takes delivery_limit`},
		{every, `queue "c" in vhost "/": dead_letter.strategy (x-dead-letter-strategy): RabbitMQ %s refuses`},
		{every, `queue "qq" in vhost "/": max_priority (x-max-priority): RabbitMQ %s refuses this argument on a quorum queue`},
		{every, `queue "r" in vhost "/": dead_letter.exchange (x-dead-letter-exchange): RabbitMQ %s refuses`},
		{every, `queue "r" in vhost "/": single_active_consumer (x-single-active-consumer): RabbitMQ %s refuses`},
		{every, `queue "ttl" in vhost "/": limits.message_ttl (x-message-ttl): 345600000000: RabbitMQ %s refuses it: {value_too_large,345600000000} (HTTP 400 invalid arg); write limits.message_ttl as a duration of at most ten years, such as 30d (3650d is the most)`},
		{[]string{"4.3"}, `queue "v1" in vhost "/": x-queue-version: 1: RabbitMQ %s refuses it: unsupported queue version '1'`},
	} {
		for _, ver := range c.versions {
			err := rmqversion.MustParse(ver).Check(top)
			if want := strings.ReplaceAll(c.want, "%s", ver); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("on %s: Check = %v\nwant a refusal containing %q", ver, err, want)
			}
		}
	}
}

// TestKeepClassicFixNamesTheField: a queue that is quorum only by its
// vhost's default_queue_type is told to write type: classic to keep the
// field the file writes.
func TestKeepClassicFixNamesTheField(t *testing.T) {
	const file = `version: 1
vhosts:
  v:
    default_queue_type: quorum
    queues:
      p: {max_priority: 5}
`
	top, err := loader.LoadBytes("topology.yaml", []byte(file), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = rmqversion.MustParse("4.3").Check(top)
	want := `queue "p" in vhost "v": max_priority (x-max-priority): RabbitMQ 4.3 refuses this argument on a quorum queue (HTTP 400 invalid arg); it is a quorum queue only because the file gives it no type and vhost "v" has default_queue_type: quorum; to keep max_priority, write type: classic`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Check = %v\nwant a refusal containing %q", err, want)
	}
}
