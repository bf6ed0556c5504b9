package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestURIToAVhostTheUserCannotReach: RabbitMQ refuses a shovel whose
// URI without a host names a vhost that does not exist, or one the user
// writing it has no permission in (HTTP 400 user "U" may not connect to
// vhost "V"), on 4.3.6, 4.0.5 and 3.10.8 alike. An apply of such a file
// declared the queues and stopped at the shovel; the plan now refuses it
// before anything changes, naming the shovel, the setting and why. With
// the permission given, the file applies and plans no changes. From 4.3.3
// a federation upstream's URI is checked the same way.
func TestURIToAVhostTheUserCannotReach(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vhost := b.Vhost(t)
	user, password := b.User(t, "administrator")
	b.Permit(t, user, vhost)
	other := b.Vhost(t) // the test's administrator may connect to it; user may not
	missing := testbroker.Name(t, "mqctl-none")
	ctx := context.Background()
	c, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: user, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(c, engine.Options{})
	v := b.Version()

	// What the broker says of each, written by user directly.
	put := func(name, srcVhost string) (int, string) {
		body, _ := json.Marshal(map[string]any{"value": map[string]any{"src-uri": "amqp:///" + url.PathEscape(srcVhost), "src-queue": "a",
			"dest-uri": "amqp:///" + url.PathEscape(vhost), "dest-queue": "b"}})
		req, _ := http.NewRequest(http.MethodPut, b.URL+"/api/parameters/shovel/"+url.PathEscape(vhost)+"/"+name, strings.NewReader(string(body)))
		req.SetBasicAuth(user, password)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct{ Reason string }
		_ = json.NewDecoder(resp.Body).Decode(&answer)
		return resp.StatusCode, answer.Reason
	}
	for _, target := range []string{missing, other} {
		status, reason := put("probe", target)
		if status != http.StatusBadRequest || !strings.Contains(reason, "may not connect to vhost") {
			t.Fatalf("RabbitMQ %s, a shovel of user %s from vhost %s: %d %q, want 400 may not connect", v, user, target, status, reason)
		}
	}

	file := func(src string) string {
		return `version: 1
vhosts:
  ` + vhost + `:
    description: "mqctl test ` + t.Name() + `"
    queues:
      a: {}
      b: {}
    shovels:
      s:
        src-uri: "amqp:///` + url.PathEscape(src) + `"
        src-queue: a
        dest-uri: "amqp:///` + url.PathEscape(vhost) + `"
        dest-queue: b
`
	}
	for _, tc := range []struct{ target, why string }{
		{missing, `the broker has no vhost "` + missing + `" that user "` + user + `" can see`},
		{other, `user "` + user + `" has no permission in vhost "` + other + `"`},
	} {
		top, err := loader.LoadBytes("topology.yaml", []byte(file(tc.target)), loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = eng.Apply(ctx, engine.ApplyInput{Desired: top}, engine.ApplyOptions{})
		var re *rmqversion.RefusalsError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "plan refused, nothing was changed") ||
			!strings.Contains(err.Error(), `shovel "s" in vhost "`+vhost+`": src-uri`) || !strings.Contains(err.Error(), tc.why) {
			t.Fatalf("RabbitMQ %s, src-uri naming vhost %s: want the plan refused because %s, got %v", v, tc.target, tc.why, err)
		}
		if _, err := c.QueueArguments(ctx, vhost, "a"); !errors.Is(err, broker.ErrNotFound) {
			t.Fatalf("RabbitMQ %s: the refused apply declared queue a (or it could not be read: %v)", v, err)
		}
	}
	b.Permit(t, user, other)
	top, err := loader.LoadBytes("topology.yaml", []byte(file(other)), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Apply(ctx, engine.ApplyInput{Desired: top}, engine.ApplyOptions{}); err != nil {
		t.Fatalf("RabbitMQ %s, with the permission in %s: %v", v, other, err)
	}
	p, err := eng.Plan(ctx, top, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Plan.Empty() {
		t.Errorf("plan after apply: %v", changes(p.Plan))
	}

	// A federation upstream's URI: 4.3.3+ checks it as a shovel's (4.3.6
	// refuses one naming a vhost that does not exist); 4.0.5 and 3.10.8
	// take it, and the plan lets it through.
	upstream := `version: 1
vhosts:
  ` + vhost + `:
    description: "mqctl test ` + t.Name() + `"
    federation_upstreams:
      up: { uri: "amqp:///` + url.PathEscape(missing) + `" }
`
	top, err = loader.LoadBytes("topology.yaml", []byte(upstream), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Apply(ctx, engine.ApplyInput{Desired: top}, engine.ApplyOptions{AllowDataLoss: true})
	if !v.UpstreamURIChecksVhost() {
		if err != nil {
			t.Fatalf("RabbitMQ %s takes an upstream whose URI names a missing vhost; the apply failed: %v", v, err)
		}
		return
	}
	why := `federation upstream "up" in vhost "` + vhost + `": uri`
	if !errors.As(err, new(*rmqversion.RefusalsError)) || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), `the broker has no vhost "`+missing+`"`) {
		t.Fatalf("RabbitMQ %s, an upstream's uri naming vhost %s: want the plan refused, got %v", v, missing, err)
	}
}
