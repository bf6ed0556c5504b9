package broker_test

import (
	"net/url"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/kind"
)

// TestExistsAgainstBroker: Client.Exists asks the broker, through each
// kind's APIPath, whether a vhost holds an object of that kind by name: an
// exchange, a queue, a policy and an operator policy that are there are
// found; a name that is not (a shovel's too: its
// APIPath, parameters/shovel, is two segments of the request's path), and
// a vhost that does not exist, are no error; a binding (named by its
// ends), a vhost's limits (one per vhost), a vhost, a user and its
// limits, and a permission and a topic permission (by user) are refused as
// bugs. 4.3.6, 4.0.5 and 3.10.8 answer alike.
func TestExistsAgainstBroker(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	c := connect(t, b)
	vh := b.Vhost(t)
	p := url.PathEscape(vh)
	for _, put := range []struct{ path, body string }{
		{"exchanges/" + p + "/x", `{"type":"direct","durable":true}`},
		{"queues/" + p + "/q", `{"durable":true}`},
		{"policies/" + p + "/pol", `{"pattern":"^nothing$","apply-to":"queues","definition":{"max-length":1}}`},
		{"operator-policies/" + p + "/op", `{"pattern":"^nothing$","apply-to":"queues","definition":{"max-length":1}}`},
	} {
		if status, answer, err := b.API("PUT", put.path, []byte(put.body)); err != nil || status >= 300 {
			t.Fatalf("PUT %s: %d %s %v", put.path, status, answer, err)
		}
	}
	for _, c2 := range []struct {
		k           kind.Kind
		vhost, name string
		want        bool
	}{
		{kind.Exchange, vh, "x", true},
		{kind.Exchange, vh, "amq.direct", true},
		{kind.Exchange, vh, "nope", false},
		{kind.Queue, vh, "q", true},
		{kind.Queue, vh, "nope", false},
		{kind.Queue, vh, "x", false}, // an exchange's name
		{kind.Policy, vh, "pol", true},
		{kind.Policy, vh, "op", false},
		{kind.OperatorPolicy, vh, "op", true},
		{kind.Shovel, vh, "nope", false},
		{kind.Queue, vh + "-none", "q", false},
	} {
		got, err := c.Exists(t.Context(), c2.k, c2.vhost, c2.name)
		if err != nil || got != c2.want {
			t.Errorf("RabbitMQ %s: Exists(%s, %q, %q) = %v, %v; want %v, no error", b.Version(), c2.k, c2.vhost, c2.name, got, err, c2.want)
		}
	}
	for _, k := range []kind.Kind{kind.Binding, kind.Vhost, kind.VhostLimits, kind.User, kind.UserLimits, kind.Permission, kind.TopicPermission, "nokind"} {
		if _, err := c.Exists(t.Context(), k, vh, "x"); err == nil {
			t.Errorf("Exists(%s) is no error: a %s is not looked up by name in a vhost", k, k)
		}
	}
}
