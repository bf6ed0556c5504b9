package topology

import (
	"slices"
	"strings"
	"testing"
)

// TestEnvValuesWrittenWorksWhereItMayMatch: Written asks at each byte of a
// text whether a value is there, in any of its forms (quoted, quoted
// twice, as it is); a text that shows none, and has no quote, makes none
// of the forms (strconv.Quote, json.Marshal): it allocates nothing. It
// made them at every byte, for every value: a 50,002-object replace plan
// with one value from the environment took 31 s of CPU to show, 5 s
// without.
func TestEnvValuesWrittenWorksWhereItMayMatch(t *testing.T) {
	vs := NewEnvValues([]EnvValue{
		{Value: "20000", Raw: "${N}", Key: "max_length"},
		{Value: "s3cr3t-T0KEN-value", Raw: "${TOKEN}"},
	})
	text := strings.Repeat("  ~ queue svc001.q00001: arguments.x-max-length: 10000 → 30000 (forces a replace)\n", 100)
	if allocs := testing.AllocsPerRun(10, func() { vs.Written(text) }); allocs > 0 {
		t.Errorf("Written of %d bytes that show no value allocated %.0f times, want none", len(text), allocs)
	}
	if got := vs.Written(`max_length: 20000 and "s3cr3t-T0KEN-value"`); got != `max_length: ${N} and ${TOKEN}` {
		t.Errorf("Written = %q", got)
	}
}

// TestEnvValuesWritten: mqctl test's report shows a value from the
// environment as the file wrote it, wherever it quotes it or sets it
// apart, and anywhere when it is long.
func TestEnvValuesWritten(t *testing.T) {
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
		if got := vs.Written(tc.in); got != tc.want {
			t.Errorf("%s: Written(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	if got := EnvValues(nil).Written("eu"); got != "eu" {
		t.Errorf("no values: %q", got)
	}
}

// TestEnvValuesHide: a value from the environment is shown as what the
// file wrote wherever a text quotes it, every quote, and wherever it is
// when it is long enough not to be part of the text's own words.
func TestEnvValuesHide(t *testing.T) {
	hs := NewEnvValues([]EnvValue{
		{Value: "tokenvalue-secret1", Raw: "${OVF}"},
		{Value: "dlx", Raw: "${DLX}"},
		{Value: "pre-abc", Raw: "pre-${X}"},
	})
	for _, tc := range []struct{ in, want string }{
		{`invalid_overflow: "tokenvalue-secret1" is none of drop-head`, `invalid_overflow: ${OVF} (its value not shown) is none of drop-head`},
		{`x-overflow: tokenvalue-secret1: refused`, `x-overflow: ${OVF}: refused`},
		{`exchange "dlx" is not declared. Declare exchange "dlx"`, `exchange ${DLX} (its value not shown) is not declared. Declare exchange ${DLX} (its value not shown)`},
		// Short and unquoted: too likely the text's own words.
		{`the dlx exchange`, `the dlx exchange`},
		{`pattern "pre-abc"`, `pattern "pre-${X}" (its value not shown)`},
		{`nothing to hide`, `nothing to hide`},
	} {
		if got := hs.Hide(tc.in); got != tc.want {
			t.Errorf("Hide(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	// The loader's own errors are about their position's value, named
	// last: the object named first keeps its name.
	h := EnvValue{Value: "q", Raw: "${Q}"}
	if got, want := h.Hide(`queue "q": dead_letter.queue "q" is the queue itself`, true), `queue "q": dead_letter.queue ${Q} (its value not shown) is the queue itself`; got != want {
		t.Errorf("lastOnly\n got %q\nwant %q", got, want)
	}
}

// TestEnvValuesHideShortAfterKey: a short value (under HiddenMinBytes) is
// hidden where a message names its field and gives the value after it, as
// mqctl's messages quote a field's value (lint's "sets x-max-length -5,
// which", a refusal's "x-max-length: -5: RabbitMQ refuses it", a plan's
// "message-ttl: 60000", a JSON "x-overflow": abc), under the argument's
// name for a typed field (limits.max_length is x-max-length), and nowhere
// else: not in the text's own words and numbers, nor after another field.
func TestEnvValuesHideShortAfterKey(t *testing.T) {
	hs := NewEnvValues([]EnvValue{
		{Value: "-5", Raw: "${N}", Key: "max_length"},
		{Value: "abc", Raw: "${OVF}", Key: "x-overflow"},
		{Value: "60000", Raw: "${TTL}", Key: "message-ttl"},
		{Value: "5", Raw: "${P}", Key: "x-max-priority"},
		{Value: "quorum", Raw: "${QT}", Key: "type"},
		{Value: "dlx", Raw: "${DLX}", Key: "exchange"},
		{Value: "rk2", Raw: "${RK}", Key: "routing_key"},
	})
	for _, tc := range []struct{ in, want string }{
		{`classic queue "q1" sets x-max-length -5, which RabbitMQ 4.3 refuses`, `classic queue "q1" sets x-max-length ${N} (its value not shown), which RabbitMQ 4.3 refuses`},
		{`queue "q1" in vhost "v": x-max-length: -5: RabbitMQ 4.3 refuses it`, `queue "q1" in vhost "v": x-max-length: ${N} (its value not shown): RabbitMQ 4.3 refuses it`},
		{`limits.max_length: -5`, `limits.max_length: ${N} (its value not shown)`},
		{`sets x-overflow abc, which`, `sets x-overflow ${OVF} (its value not shown), which`},
		{`      message-ttl: 60000`, `      message-ttl: ${TTL} (its value not shown)`},
		{`"x-overflow": abc,`, `"x-overflow": ${OVF} (its value not shown),`},
		{`x-max-priority 5.`, `x-max-priority ${P} (its value not shown).`},
		{`x-dead-letter-exchange dlx;`, `x-dead-letter-exchange ${DLX} (its value not shown);`},
		// A plan's field change: the after side too.
		{`      ~ arguments.x-max-length: 4 → -5  (forces replace)`, `      ~ arguments.x-max-length: 4 → ${N} (its value not shown)  (forces replace)`},
		{`      ~ definition.message-ttl: "a b: c" → 60000`, `      ~ definition.message-ttl: "a b: c" → ${TTL} (its value not shown)`},
		{`      ~ arguments.x-message-ttl: 1 → -5`, `      ~ arguments.x-message-ttl: 1 → -5`},
		// A binding key: "key", and the flows' "matching".
		{`key rk2 (matching rk2) on exchange "tp"`, `key ${RK} (its value not shown) (matching ${RK} (its value not shown)) on exchange "tp"`},
		// Not the field's value: the text's own words and numbers.
		{`x-max-priority 50 and 5 queues at t.yaml:5:5`, `x-max-priority 50 and 5 queues at t.yaml:5:5`},
		{`x-max-priority 5.5`, `x-max-priority 5.5`},
		{`quorum queue "q" is of type classic`, `quorum queue "q" is of type classic`},
		{`x-max-length -50`, `x-max-length -50`},
		{`x-message-ttl: -5`, `x-message-ttl: -5`},
		{`the dlx exchange`, `the dlx exchange`},
		{`abc x-overflow`, `abc x-overflow`},
	} {
		if got := hs.Hide(tc.in); got != tc.want {
			t.Errorf("Hide(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestEnvValuesHideSameValue: where two variables hold the same value, a
// text that quotes it names both (it does not say whose it is, and one
// alone may be the wrong one: "x-message-ttl ... got ${DL}"); after its
// field's name it is that field's.
func TestEnvValuesHideSameValue(t *testing.T) {
	hs := NewEnvValues([]EnvValue{
		{Value: "-1", Raw: "${TTL}", Key: "x-message-ttl"},
		{Value: "-1", Raw: "${DL}", Key: "x-delivery-limit"},
		{Value: "-1", Raw: "${TTL}", Key: "message_ttl"}, // one variable twice
	})
	for _, tc := range []struct{ in, want string }{
		{`x-message-ttl: -1: RabbitMQ 4.3 refuses it: expected a whole number, got "-1"`, `x-message-ttl: ${TTL} (its value not shown): RabbitMQ 4.3 refuses it: expected a whole number, got ${DL} or ${TTL} (its value not shown)`},
		{`sets x-delivery-limit -1, which`, `sets x-delivery-limit ${DL} (its value not shown), which`},
		{`headers {k=-1}`, `headers {k=${DL} or ${TTL}}`},
	} {
		if got := hs.Hide(tc.in); got != tc.want {
			t.Errorf("Hide(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestEnvValuesQuoted: a diagram or a JSON document keeps its quotes
// around what the file wrote.
func TestEnvValuesQuoted(t *testing.T) {
	vs := NewEnvValues([]EnvValue{{Value: "s3cr3t-T0KEN-value", Raw: "${TOKEN}"}, {Value: "eu", Raw: "${REGION}"}})
	for _, tc := range []struct{ in, want string }{
		{`{"token":"s3cr3t-T0KEN-value","r":"eu"}`, `{"token":"${TOKEN}","r":"${REGION}"}`},
		{`tp -->|"eu"| q`, `tp -->|"${REGION}"| q`},
		{`label="k=s3cr3t-T0KEN-value"`, `label="k=${TOKEN}"`},
	} {
		if got := vs.Quoted(tc.in); got != tc.want {
			t.Errorf("Quoted(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEnvValuesHideJSON: in a JSON document a value from the environment
// that is a whole value under its field's name, or a long one, becomes the
// string the file wrote; a field change whose before or after it was says
// so; the same value under another field, and a string only holding a
// short one, stay; text holding one shows what the file wrote.
func TestEnvValuesHideJSON(t *testing.T) {
	vs := NewEnvValues([]EnvValue{
		{Value: "5", Raw: "${N}", Key: "max_length"},
		{Value: "s3cr3t-T0KEN-value", Raw: "${TOKEN}", Key: "x-tok"},
		{Value: "eu", Raw: "${REGION}", Key: "routing_key"},
		{Value: "true", Raw: "${SAC}", Key: "single_active_consumer"},
	})
	in := `{"changes":[{"name":"x -> queue q [eu]","after":{"queue":{"arguments":{"x-max-length":5,"x-max-priority":5,"x-single-active-consumer":true,"x-tok":"s3cr3t-T0KEN-value"}}},"durable":true,` +
		`"fields":[{"field":"arguments.x-max-length","before":4,"after":5,"forces_replace":true},{"field":"arguments.x-max-priority","before":null,"after":5}],"bindings":[{"routing_key":"eu","note":"europe"}],"matches":["eu","us"],"messages":5}]}`
	want := `{
  "changes": [
    {
      "name": "x -\u003e queue q [${REGION}]",
      "after": {
        "queue": {
          "arguments": {
            "x-max-length": "${N}",
            "x-max-priority": 5,
            "x-single-active-consumer": "${SAC}",
            "x-tok": "${TOKEN}"
          }
        }
      },
      "durable": true,
      "fields": [
        {
          "field": "arguments.x-max-length",
          "before": 4,
          "after": "${N}",
          "forces_replace": true,
          "from_env": true
        },
        {
          "field": "arguments.x-max-priority",
          "before": null,
          "after": 5
        }
      ],
      "bindings": [
        {
          "routing_key": "${REGION}",
          "note": "europe"
        }
      ],
      "matches": [
        "${REGION}",
        "us"
      ],
      "messages": 5
    }
  ]
}
`
	got, err := vs.HideJSON([]byte(in), "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("HideJSON\n got %s\nwant %s", got, want)
	}
}

// TestEnvValuesLiterals: a literal the file wrote for an object's field
// equal to a value from the environment for another object's (q2's
// max_length: 1000 beside q1's ${N}) is shown in a text about that object
// (after its ScopeMark, and in a JSON object about it), and hidden
// everywhere else as before; a literal never hides anything itself.
func TestEnvValuesLiterals(t *testing.T) {
	vs := NewEnvValues([]EnvValue{
		{Value: "1000", Raw: "${N}", Key: "max_length"},
		{Value: "1000", Raw: "${DL}", Key: "delivery_limit"},
		{Value: "1000", Raw: "1000", Key: "x-max-length", Literal: true, Kind: "queue", Vhost: "v", Object: "q2"},
	})
	q1, q2, none := ScopeMark("queue", "v", "q1"), ScopeMark("queue", "v", "q2"), ScopeMark("", "", "")
	for _, tc := range []struct{ in, want string }{
		{q1 + "x-max-length: 1000\n" + q2 + "x-max-length: 1000\n" + none + "x-max-length: 1000\n",
			"x-max-length: ${N} (its value not shown)\nx-max-length: 1000\nx-max-length: ${N} (its value not shown)\n"},
		{"x-max-length: 1000", "x-max-length: ${N} (its value not shown)"},
		// Another field's value from the environment is hidden in q2's
		// text still.
		{q2 + "x-max-length: 1000, x-delivery-limit: 1000", "x-max-length: 1000, x-delivery-limit: ${DL} (its value not shown)"},
		{ScopeMark("queue", "w", "q2") + "x-max-length: 1000", "x-max-length: ${N} (its value not shown)"},
	} {
		if got := vs.Hide(tc.in); got != tc.want {
			t.Errorf("Hide(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if got := vs.For("queue", "v", "q2"); len(got) != 1 || got[0].Raw != "${DL}" {
		t.Errorf("For(q2) = %v, want ${DL} alone", got)
	}
	if got := vs.For("queue", "v", "q1"); len(got) != 2 || got[0].Literal || got[1].Literal {
		t.Errorf("For(q1) = %v, want ${N} and ${DL}", got)
	}
	doc := `{"changes":[{"kind":"queue","vhost":"v","name":"q1","after":{"arguments":{"x-max-length":1000}}},` +
		`{"kind":"queue","vhost":"v","name":"q2","after":{"arguments":{"x-max-length":1000}},"fields":[{"field":"arguments.x-max-length","before":null,"after":1000}]}],` +
		`"flows":{"dead_letters":[{"vhost":"v","queue":"q2","x-max-length":1000},{"vhost":"v","queue":"q1","x-max-length":1000}]},"x-max-length":1000}`
	got, err := vs.HideJSON([]byte(doc), "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"changes":[{"kind":"queue","vhost":"v","name":"q1","after":{"arguments":{"x-max-length":"${N}"}}},` +
		`{"kind":"queue","vhost":"v","name":"q2","after":{"arguments":{"x-max-length":1000}},"fields":[{"field":"arguments.x-max-length","before":null,"after":1000}]}],` +
		`"flows":{"dead_letters":[{"vhost":"v","queue":"q2","x-max-length":1000},{"vhost":"v","queue":"q1","x-max-length":"${N}"}]},"x-max-length":"${N}"}` + "\n"
	if string(got) != want {
		t.Errorf("HideJSON\n got %s\nwant %s", got, want)
	}
}

// TestMergeEnv: two loads' values (mqctl diff's old and new files) keep
// a literal of one only where the other takes no such value for the same
// field from the environment, or writes it in that object too: else the
// object's value may be one from the environment on that side.
func TestMergeEnv(t *testing.T) {
	env := EnvValue{Value: "1000", Raw: "${N}", Key: "max_length"}
	lit := func(object string) EnvValue {
		return EnvValue{Value: "1000", Raw: "1000", Key: "max_length", Literal: true, Kind: "queue", Vhost: "v", Object: object}
	}
	for _, tc := range []struct {
		name     string
		a, b     EnvValues
		literals []string // the objects whose literal is kept
	}{
		{"the other load has no such value", EnvValues{env, lit("q2")}, nil, []string{"q2"}},
		{"the other writes the literal too", EnvValues{env, lit("q2")}, EnvValues{env, lit("q2")}, []string{"q2"}},
		{"the other takes it from the environment", EnvValues{env, lit("q2")}, EnvValues{env}, nil},
		{"the other's literal is another object's", EnvValues{env, lit("q2")}, EnvValues{env, lit("q3")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range MergeEnv(tc.a, tc.b) {
				if v.Literal {
					got = append(got, v.Object)
				}
			}
			if !slices.Equal(got, tc.literals) {
				t.Errorf("literals kept for %v, want %v", got, tc.literals)
			}
		})
	}
}
