package topotest_test

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topotest"
)

// TestSimulateKeepsNothing: a queue with a message TTL or a length limit
// of 0 keeps no message that no consumer takes at once; a test's verdict
// follows where the message goes from there, on 3.10, 4.0 and 4.3 alike
// (rabbit_amqqueue_process, rabbit_fifo; see route.Simulator.OnArrival).
func TestSimulateKeepsNothing(t *testing.T) {
	top := loadSrc(t, `version: 1
vhosts:
  /:
    exchanges: { ex: {type: fanout}, dlx: {type: fanout}, rx: {type: fanout}, hx: {type: fanout}, qx: {type: fanout} }
    queues:
      zero:
        bindings: [ {exchange: ex} ]
        limits: { message_ttl: 0 }
        arguments: { x-dead-letter-exchange: dlx }
      qzero:
        type: quorum
        bindings: [ {exchange: qx} ]
        limits: { message_ttl: 0 }
        arguments: { x-dead-letter-exchange: dlx }
      catch: { bindings: [ {exchange: dlx} ] }
      full:
        bindings: [ {exchange: rx} ]
        limits: { max_length: 0, overflow: reject-publish }
      fulldlx:
        bindings: [ {exchange: rx} ]
        limits: { max_length: 0, overflow: reject-publish-dlx }
        arguments: { x-dead-letter-exchange: dlx }
      head:
        bindings: [ {exchange: hx} ]
        limits: { max_length: 0 }
        arguments: { x-dead-letter-exchange: dlx }
      qhead:
        type: quorum
        bindings: [ {exchange: hx} ]
        limits: { max_length: 0 }
      qfull:
        type: quorum
        bindings: [ {exchange: qx} ]
        limits: { max_length: 0, overflow: reject-publish }
      work:
        retry: { delays: [10s] }
tests:
  - { name: ttl 0 dead-letters on arrival, publish: {exchange: ex}, expect: {queues: [catch]} }
  - { name: ttl 0 does not keep it, publish: {exchange: ex}, expect: {queues: [zero]} }
  - { name: quorum ttl 0 and quorum reject-publish limit 0, publish: {exchange: qx}, expect: {queues: [catch, qfull]} }
  - { name: reject-publish refuses and reject-publish-dlx dead-letters, publish: {exchange: rx}, expect: {queues: [catch]} }
  - { name: drop-head limit 0, publish: {exchange: hx}, expect: {queues: [catch]} }
  - { name: expire on arrival, publish: {exchange: ex}, expire: zero, expect: {queues: [catch]} }
  - { name: reject where nothing stays, publish: {exchange: ex}, reject: zero, expect: {queues: [catch]} }
  - { name: delay tier, retry: {queue: work, delay: 10s}, expect: {queues: [work]} }
`)
	want := map[string]string{
		"ttl 0 dead-letters on arrival":                              "",
		"ttl 0 does not keep it":                                     `expected [zero], got [catch]; "catch" gets it (the hops show how): add it to expect.queues if that is right, else change the binding or dead-letter wiring that leads there; "zero" gets it but keeps nothing (the hops say why): if it should keep it, change its limits or message TTL; else take it out of expect.queues`,
		"quorum ttl 0 and quorum reject-publish limit 0":             "",
		"reject-publish refuses and reject-publish-dlx dead-letters": "",
		"drop-head limit 0":                                          "",
		"expire on arrival":                                          "",
		"reject where nothing stays":                                 `queue "zero" keeps no message (expires on arrival: its message TTL is 0`,
		"delay tier":                                                 "",
	}
	for _, ver := range []string{"3.10", "4.0", "4.3"} {
		r := topotest.Simulate(top, top.Tests, rmqversion.MustParse(ver))
		for _, o := range r.Tests {
			w, ok := want[o.Name]
			switch {
			case !ok:
				t.Errorf("unexpected test %q", o.Name)
			case w == "" && !o.Passed:
				t.Errorf("%s: %s: %s (hops: %q)", ver, o.Name, o.Message, o.Hops)
			case w != "" && (o.Passed || !strings.Contains(o.Message, w)):
				t.Errorf("%s: %s: passed %v, message %q, want %q", ver, o.Name, o.Passed, o.Message, w)
			}
		}
	}
}
