package corpus

// Refusal is what happens to a corpus file that a RabbitMQ release line
// does not take whole: mqctl refuses it before anything changes (AtPlan:
// plan, and validate for that target unless Live), or the broker refuses
// part of it during apply (the rest is applied all the same).
type Refusal struct {
	AtPlan bool
	// Live: only plan, which reads the broker, can tell (a binding whose
	// end neither the file nor the broker has); validate takes the file.
	Live bool
	Want string // in mqctl's error (AtPlan) or in the apply report
}

// Refused gives, per RabbitMQ release line, the corpus files that a broker
// with the management, shovel and federation plugins would refuse part of,
// and what mqctl says. A file absent from a line's map is taken whole on that
// line. The lines differ in ha-* (4.0 removed classic mirroring), apply-to
// by queue type (3.12 added it) and queue-master-locator (4.3 denies it).
var Refused = map[string]map[string]Refusal{
	"3.10": {
		// Streams take no x-max-length (they have x-max-length-bytes and x-max-age).
		"case13a.json": {AtPlan: true, Want: `queue "definitions.import.case13.qq.1" in vhost`},
		// Quorum queues have no x-max-priority.
		"adrienKoumgangT__distriqueue__definitions.json": {AtPlan: true, Want: `queue "job.high" in vhost`},
		// apply-to classic_queues, quorum_queues and streams arrived in 3.12.
		"rabbitmq__rabbitmqadmin-ng__vhost.definitions.1.json": {AtPlan: true, Want: "apply_to: classic_queues: apply-to by queue type arrived in RabbitMQ 3.12"},
		// Bindings from exchanges the file never declares: RabbitMQ
		// refuses them (404), so plan does, reading the broker.
		"rauno56__rabbit-validator__full-invalid-relations.json": {AtPlan: true, Live: true, Want: `neither the file nor the broker has exchange "defect_headers"`},
	},
	"4.0": refused40,
	"4.3": with(refused40, map[string]Refusal{
		// The deprecated feature queue_master_locator is denied by default.
		"case4.json": {AtPlan: true, Want: `policy "abc" in vhost`},
	}),
}

// refused40 is what 4.0 refuses, which 4.3 refuses too.
var refused40 = map[string]Refusal{
	"case13a.json": {AtPlan: true, Want: `queue "definitions.import.case13.qq.1" in vhost`},
	"adrienKoumgangT__distriqueue__definitions.json":         {AtPlan: true, Want: `queue "job.high" in vhost`},
	"rauno56__rabbit-validator__full-invalid-relations.json": {AtPlan: true, Live: true, Want: `neither the file nor the broker has exchange "defect_headers"`},
	// Classic queue mirroring is gone: ha-* policy keys are refused.
	"case1.json": {AtPlan: true, Want: "ha-mode: classic queue mirroring was removed in RabbitMQ 4.0"},
	"case3.json": {AtPlan: true, Want: "ha-mode: classic queue mirroring was removed in RabbitMQ 4.0"},
	"juliofalbo__complete-microservices-env__rabbitmq-definitions.json": {AtPlan: true, Want: "ha-mode: classic queue mirroring was removed in RabbitMQ 4.0"},
	"rabbitmq_prometheus__rabbitmq-dist-tls-definitions.json":           {AtPlan: true, Want: "ha-mode: classic queue mirroring was removed in RabbitMQ 4.0"},
	"rabbitmq_prometheus__rabbitmq-dist-metrics-definitions.json":       {AtPlan: true, Want: "ha-mode: classic queue mirroring was removed in RabbitMQ 4.0"},
}

// with is base and more in one map.
func with(base, more map[string]Refusal) map[string]Refusal {
	out := make(map[string]Refusal, len(base)+len(more))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}
