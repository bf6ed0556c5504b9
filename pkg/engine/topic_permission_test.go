package engine_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestTopicPermissionForAMissingExchange: from 4.3.2 RabbitMQ refuses a
// topic permission for an exchange the vhost does not have. An apply of a
// file with one stopped at its last step, the rest written (4.3.6); the
// plan now refuses it before anything changes, naming the exchange. An
// exchange the broker holds, though the file does not declare it, is
// enough. 4.0.5 and 3.10.8 take the permission: the file applies.
//
// Not parallel: a users section takes the broker's own lock, which the
// users tests running in parallel take too; and it waits for every test
// with a users section in the other test processes (UsersSection: a live
// script of cmd/mqctl held the lock of vhost "/" once, in CI).
func TestTopicPermissionForAMissingExchange(t *testing.T) {
	f := newFixture(t)
	f.b.UsersSection(t)
	ctx := context.Background()
	u := testbroker.Name(t, "mqctl-tp")
	t.Cleanup(func() { _ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", u) })
	env := map[string]string{"VHOST": f.vhost, "U": u}
	src := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      orders: { type: topic }
users:
  ${U}:
    password: pw
    topic_permissions:
      ${VHOST}:
        - { exchange: orders, write: "^order\\..*$" }
        - { exchange: events, write: "^event\\..*$" }
`
	top, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	top.Vhosts[f.vhost].Description = "mqctl test " + t.Name()
	v := f.b.Version()
	_, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: top}, engine.ApplyOptions{})
	if !v.TopicPermissionNeedsExchange() {
		if err != nil {
			t.Fatalf("RabbitMQ %s takes a topic permission for a missing exchange; the apply failed: %v", v, err)
		}
		return
	}
	var re *rmqversion.RefusalsError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "plan refused, nothing was changed") || !strings.Contains(err.Error(), `exchange "events"`) || strings.Contains(err.Error(), `exchange "orders"`) {
		t.Fatalf("RabbitMQ %s: want the plan refused for exchange events alone, got %v", v, err)
	}
	if x, _ := f.c.GetExchange(ctx, f.vhost, "orders"); x != nil {
		t.Errorf("the refused apply declared exchange orders")
	}
	// The exchange made by hand: the broker has it, the file need not.
	if status, msg, err := f.b.API("PUT", "exchanges/"+url.PathEscape(f.vhost)+"/events", []byte(`{"type":"topic","durable":true}`)); err != nil || status >= 300 {
		t.Fatalf("declare events: %d %s %v", status, msg, err)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: top}, engine.ApplyOptions{}); err != nil {
		t.Fatalf("with exchange events on the broker: %v", err)
	}
	if p := f.plan(top); !p.Empty() {
		t.Errorf("plan after apply: %v", changes(p))
	}
}
