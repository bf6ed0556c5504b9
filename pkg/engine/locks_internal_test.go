package engine

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/lock"
)

// TestLostLockNamesTheNode: when the node an apply holds its lock on goes
// down mid-apply (a cluster node stopped during a 2,000-queue apply), the
// error says which AMQP endpoint closed, never its credentials.
func TestLostLockNamesTheNode(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"amqp://deploy:s3cret@rabbit-2.prod:5672/", "its AMQP connection to rabbit-2.prod:5672 closed: that node may be down or restarting"},
		{"amqps://127.0.0.1:5681", "its AMQP connection to 127.0.0.1:5681 closed"},
		{"%zz", "its AMQP connection to the broker closed"},
	} {
		l := &locks{opts: lock.Options{URL: tc.url}, held: map[string]*lock.Lock{"v": {Vhost: "v"}}}
		err := l.lost()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("lost lock through %s: %v; want it to say %q, without the password", tc.url, err, tc.want)
		}
	}
}
