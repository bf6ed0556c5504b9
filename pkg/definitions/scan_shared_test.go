package definitions

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// TestScannerSharesRepeatedStrings: the strings that repeat from one
// queue or binding to the next (arguments' names and string values, a
// queue's type, a binding's source and destination type) are one string
// per read, not a copy per object; names and keys are the objects' own;
// and past intern.Max distinct values the tables take no more (the values
// still read right).
func TestScannerSharesRepeatedStrings(t *testing.T) {
	const n = 2000
	var b strings.Builder
	b.WriteString(`{"queues":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"q%d","type":"classic","durable":true,"auto_delete":false,"arguments":{"x-queue-type":"classic","x-dead-letter-exchange":"dlx","x-dead-letter-routing-key":"k%d"}}`, i, i)
	}
	b.WriteString(`],"bindings":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"source":"events","destination":"q%d","destination_type":"queue","routing_key":"k%d","arguments":{}}`, i, i)
	}
	b.WriteString(`]}`)
	var d Document
	var els collected
	if err := d.decodeReader(strings.NewReader(b.String()), &els); err != nil {
		t.Fatal(err)
	}
	if len(els.Queues) != n || len(els.Bindings) != n {
		t.Fatalf("%d queues and %d bindings, want %d of each", len(els.Queues), len(els.Bindings), n)
	}
	same := func(what, a, b string) {
		t.Helper()
		if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
			t.Errorf("%s: %q and %q are two copies, want one string", what, a, b)
		}
	}
	apart := func(what, a, b string) {
		t.Helper()
		if a == b {
			t.Errorf("%s: both %q", what, a)
		}
	}
	key := func(args map[string]any, k string) string {
		for got := range args {
			if got == k {
				return got
			}
		}
		t.Fatalf("no argument %s in %v", k, args)
		return ""
	}
	first, last := els.Queues[0], els.Queues[n-1]
	same("queue type", first.Type, last.Type)
	for _, k := range []string{"x-queue-type", "x-dead-letter-exchange", "x-dead-letter-routing-key"} {
		same("argument name "+k, key(first.Arguments, k), key(last.Arguments, k))
	}
	for _, k := range []string{"x-queue-type", "x-dead-letter-exchange"} {
		same("value of "+k, first.Arguments[k].(string), last.Arguments[k].(string))
	}
	apart("queue names", first.Name, last.Name)
	if got, want := last.Arguments["x-dead-letter-routing-key"], fmt.Sprintf("k%d", n-1); got != want {
		t.Errorf("the last queue's dead-letter routing key is %v, want %s", got, want)
	}
	same("binding source", els.Bindings[0].Source, els.Bindings[n-1].Source)
	same("binding destination type", els.Bindings[0].DestinationType, els.Bindings[n-1].DestinationType)
	if got, want := els.Bindings[n-1].Destination, fmt.Sprintf("q%d", n-1); got != want {
		t.Errorf("the last binding's destination is %s, want %s", got, want)
	}
}
