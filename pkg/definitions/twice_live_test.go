package definitions_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestListedTwiceAgainstBroker imports into a vhost of its own a
// definitions document that lists a policy twice and a queue twice, each
// time with another setting, and reads it as export --from does: the
// broker keeps the policy's last entry on 4.3, 4.0 and 3.10 alike (the
// import sets policies one after the other), and so does mqctl; of the
// queue it keeps one of the two entries (it adds queues concurrently,
// and which one is not defined), and mqctl keeps the first and says the
// broker may keep either.
func TestListedTwiceAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	doc := `{"policies":[
	  {"name":"p","pattern":"^zz","apply-to":"queues","priority":0,"definition":{"max-length":5}},
	  {"name":"p","pattern":"^zz","apply-to":"queues","priority":0,"definition":{"max-length":7}}],
	 "queues":[
	  {"name":"q","durable":true,"auto_delete":false,"arguments":{"x-max-length":10}},
	  {"name":"q","durable":true,"auto_delete":false,"arguments":{"x-max-length":20}}]}`
	if status, answer, err := b.API("POST", "definitions/"+url.PathEscape(vh), []byte(doc)); err != nil || status/100 != 2 {
		t.Fatalf("import: %d %s %v", status, answer, err)
	}
	var pol struct{ Definition map[string]any }
	if err := json.Unmarshal(b.GetAPI(t, "policies/"+url.PathEscape(vh)+"/p"), &pol); err != nil {
		t.Fatal(err)
	}
	var q struct{ Arguments map[string]any }
	if err := json.Unmarshal(b.GetAPI(t, "queues/"+url.PathEscape(vh)+"/q"), &q); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pol.Definition["max-length"]); got != "7" {
		t.Errorf("RabbitMQ %s kept policy p with max-length %s, want the last entry's 7", b.Version(), got)
	}
	if got := fmt.Sprint(q.Arguments["x-max-length"]); got != "10" && got != "20" {
		t.Errorf("RabbitMQ %s kept queue q with x-max-length %s, want one of its entries' (10 or 20)", b.Version(), got)
	}

	top, rep, err := definitions.ReadWithOptions("defs.json", []byte(doc), definitions.ReadOptions{DefaultVhost: vh})
	if err != nil {
		t.Fatal(err)
	}
	v := top.Vhosts[vh]
	if p := v.Policies["p"]; p == nil || !topology.ValueEqual(p.Definition["max-length"], pol.Definition["max-length"]) {
		t.Errorf("mqctl read policy p as %+v; the broker keeps max-length %v", p, pol.Definition["max-length"])
	}
	if mq := v.Queues["q"]; mq == nil || !topology.ValueEqual(mq.Arguments["x-max-length"], int64(10)) {
		t.Errorf("mqctl read queue q as %+v, want the first entry", mq)
	}
	warned := strings.Join(rep.Warnings, "\n")
	for _, s := range []string{"the last, at defs.json:3:", "keeps whichever entry it adds first, which is not defined"} {
		if !strings.Contains(warned, s) {
			t.Errorf("warnings lack %q:\n%s", s, warned)
		}
	}
}
