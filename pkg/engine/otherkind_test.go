package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestPlanRefusesEndOfTheOtherKind: plan's refusal of a binding end that
// neither the file nor the broker has gives lint's MQ401 advice where the
// broker has the name as the other kind: a queue the broker has (read with
// the vhost's definitions, or asked for, as an exclusive queue the
// definitions leave out) where the binding names an exchange, and an
// exchange where it names a queue; and where the file has it as the other
// kind. A name of neither kind keeps the plain fix.
func TestPlanRefusesEndOfTheOtherKind(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if err := f.c.DeclareQueue(ctx, f.vhost, &topology.Queue{Name: "app.inbox", Type: topology.QueueClassic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeclareExchange(ctx, f.vhost, &topology.Exchange{Name: "app.router", Type: "direct", Durable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.b.Channel(t, f.vhost).QueueDeclare("client.replies", false, true, true, false, nil); err != nil {
		t.Fatal(err)
	}
	file := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      events: { type: topic }
    queues:
      audit.log: {}
    bindings:
      - { source: events, destination: app.inbox, destination_type: exchange, routing_key: "1" }
      - { source: events, destination: app.router, destination_type: queue, routing_key: "2" }
      - { source: app.inbox, destination: events, destination_type: exchange, routing_key: "3" }
      - { source: events, destination: client.replies, destination_type: exchange, routing_key: "4" }
      - { source: events, destination: audit.log, destination_type: exchange, routing_key: "5" }
      - { source: events, destination: nowhere, destination_type: exchange, routing_key: "6" }
`
	_, err := f.eng.Plan(ctx, f.desired(file), engine.PlanOptions{})
	if err == nil {
		t.Fatal("plan took bindings whose ends do not exist")
	}
	got := strings.ReplaceAll(err.Error(), f.vhost, "VHOST")
	for _, want := range []string{
		`topology.yaml:9:9: binding from "events" to exchange "app.inbox" in vhost "VHOST": routing key "1": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "app.inbox"; "app.inbox" is a queue on the broker: to bind it, write destination_type: queue`,
		`topology.yaml:10:9: binding from "events" to queue "app.router" in vhost "VHOST": routing key "2": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has queue "app.router"; "app.router" is an exchange on the broker: to bind it, write destination_type: exchange`,
		`topology.yaml:11:9: binding from "app.inbox" to exchange "events" in vhost "VHOST": routing key "3": RabbitMQ refuses a binding whose source does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "app.inbox"; "app.inbox" is a queue on the broker, and a binding carries messages from an exchange to a queue, never out of a queue: to send exchange "events"'s messages to it, swap the ends (source: events, destination: app.inbox, destination_type: queue)`,
		`topology.yaml:12:9: binding from "events" to exchange "client.replies" in vhost "VHOST": routing key "4": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "client.replies"; "client.replies" is a queue on the broker: to bind it, write destination_type: queue`,
		`topology.yaml:13:9: binding from "events" to exchange "audit.log" in vhost "VHOST": routing key "5": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "audit.log"; "audit.log" is a queue of this file: to bind it, write destination_type: queue`,
		`topology.yaml:14:9: binding from "events" to exchange "nowhere" in vhost "VHOST": routing key "6": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "nowhere"; declare exchange "nowhere" in the file, or fix the name (mqctl lint reports it as MQ401)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("RabbitMQ %s: the refusal does not say\n%s\nit says:\n%s", f.c.RabbitMQVersion(), want, got)
		}
	}
	if n := strings.Count(got, "\n  topology.yaml:"); n != 6 {
		t.Errorf("RabbitMQ %s: %d refusals, want 6:\n%s", f.c.RabbitMQVersion(), n, got)
	}
}
