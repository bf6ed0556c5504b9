package cli

import (
	"bytes"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"
	"github.com/mqctl/mqctl/internal/jsondoc"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestValidateJSONEveryField: validate -o json writes every field of each
// object (an exchange, a queue with its alert, a binding, a policy and an
// operator policy, a vhost's and the broker's items, secrets masked, each
// with its position) under the name and in the place
// testdata/validate/every-field.json pins (written from pkg/topology's own
// JSON, which was the output before the document had types of its own:
// format_version 1's names and meanings change only by addition). A field
// the document misses, or a name that changes, fails here.
func TestValidateJSONEveryField(t *testing.T) {
	var (
		x      topology.Exchange
		q      topology.Queue
		b      topology.Binding
		p, op  topology.Policy
		it, bi topology.Item
	)
	for _, o := range []any{&x, &q, &b, &p, &op, &it, &bi} {
		jsondoc.Fill(o, 1)
	}
	it.Kind, it.Settings["password"], it.Secret = kind.User, "s3cret", []string{"password"}
	bi.Kind = kind.User
	top := topology.New()
	v := topology.NewVhost("v")
	v.Description, v.DefaultQueueType, v.Pos = "Description", "quorum", topology.Pos{File: "File", Line: 1, Col: 1}
	v.Exchanges[x.Name], v.Queues[q.Name], v.Bindings = &x, &q, []*topology.Binding{&b}
	v.Policies[p.Name], v.OperatorPolicies[op.Name] = &p, &op
	v.Items.Put(&it)
	top.Vhosts[v.Name] = v
	top.Items.Put(&bi)
	var got bytes.Buffer
	if err := writeValidateJSON(&got, top); err != nil {
		t.Fatal(err)
	}
	gold.Check(t, "testdata/validate/every-field.json", got.Bytes())
	if bytes.Contains(got.Bytes(), []byte("s3cret")) {
		t.Errorf("validate -o json shows a secret:\n%s", got.String())
	}
}
