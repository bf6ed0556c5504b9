package topology

import "testing"

func TestEnvValuesHide(t *testing.T) {
	vs := NewEnvValues([]EnvValue{
		{Value: "s3cr3t-T0KEN-value", Raw: "${TOKEN}"},
		{Value: "eu", Raw: "${REGION}"},
		{Value: "eu.orders", Raw: "${REGION}.orders"},
		{Value: "7", Raw: "${N}"},
		{Value: "eu", Raw: "${REGION}"}, // a repeat
	})
	if len(vs) != 4 || vs[0].Value != "s3cr3t-T0KEN-value" {
		t.Fatalf("NewEnvValues: %v, want 4 values, the longest first", vs)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"quoted", `routing key "eu"`, `routing key ${REGION}`},
		{"quoted, written with more than the variable", `key "eu.orders"`, `key "${REGION}.orders"`},
		{"long, anywhere", `token=s3cr3t-T0KEN-valueX`, `token=${TOKEN}X`},
		{"a binding key in a route", `tp [eu] -> q`, `tp [${REGION}] -> q`},
		{"a longer value first", `tp [eu.orders] -> q`, `tp [${REGION}.orders] -> q`},
		{"a header among others", `headers {k=eu, n=7}`, `headers {k=${REGION}, n=${N}}`},
		{"a number in a table", `{"n":7,"t":"s3cr3t-T0KEN-value"}`, `{"n":${N},"t":${TOKEN}}`},
		{"a short value within a word", `queue "europe" reaches 7 queues at t.yaml:7:5`, `queue "europe" reaches 7 queues at t.yaml:7:5`},
		{"quoted within a quoted text", `tests "key \"eu\"", "key \"eu.orders\""`, `tests "key ${REGION}", "key \"${REGION}.orders\""`},
		{"nothing to hide", `PASS a`, `PASS a`},
		{"at the end", `k=eu`, `k=${REGION}`},
	} {
		if got := vs.Hide(tc.in); got != tc.want {
			t.Errorf("%s: Hide(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	if got := EnvValues(nil).Hide("eu"); got != "eu" {
		t.Errorf("no values: %q", got)
	}
}
