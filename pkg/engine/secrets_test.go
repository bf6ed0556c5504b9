package engine_test

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
)

// A shovel whose destination is a list of URIs, each with credentials
// from a variable of its own, goes through a saved plan: the plan file
// holds neither password, and applying it reads both variables again and
// writes the URIs whole.
func TestSavedPlanWithListOfSecretURIs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	host := net.JoinHostPort(f.b.AMQPHost, strconv.Itoa(f.b.AMQPPort))
	uri := func(pw string) string {
		return (&url.URL{Scheme: "amqp", User: url.UserPassword(f.b.Username, pw), Host: host, Path: "/" + f.vhost}).String()
	}
	env := map[string]string{"VHOST": f.vhost, "DEST_A": uri("pw-list-a-" + f.b.Password), "DEST_B": uri("pw-list-b-" + f.b.Password)}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	src := "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      s.src: {}\n      s.dst: {}\n" +
		"    shovels:\n      s: { src-uri: \"amqp:///${VHOST}\", src-queue: s.src, dest-uri: [\"${DEST_A}\", \"${DEST_B}\"], dest-queue: s.dst }\n"
	desired, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	desired.Vhosts[f.vhost].Description = "mqctl test " + t.Name()
	var saved bytes.Buffer
	if err := plan.WriteSaved(&saved, f.plan(desired)); err != nil {
		t.Fatalf("save the plan: %v", err)
	}
	for _, pw := range []string{"pw-list-a", "pw-list-b"} {
		if strings.Contains(saved.String(), pw) {
			t.Errorf("the saved plan holds %s", pw)
		}
	}
	p, err := plan.ReadSaved(&saved, "plan.out")
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(f.c, engine.Options{LookupEnv: lookup})
	if _, err := eng.Apply(context.Background(), engine.ApplyInput{Saved: p}, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply the saved plan: %v", err)
	}
	l, err := f.eng.ReadLive(context.Background(), []string{f.vhost})
	if err != nil {
		t.Fatal(err)
	}
	sh := l.State().Vhosts[f.vhost].Items.Get(kind.Shovel, "s")
	if sh == nil {
		t.Fatal("no shovel s on the broker")
	}
	got, _ := sh.Settings["dest-uri"].([]any)
	if len(got) != 2 || got[0] != env["DEST_A"] || got[1] != env["DEST_B"] {
		t.Errorf("the shovel's dest-uri on the broker is not the variables' URIs (%d items)", len(got))
	}
	if p := f.plan(desired); !p.Empty() {
		t.Errorf("second plan: %v", changes(p))
	}
	// Without one of the variables, nothing is changed.
	delete(env, "DEST_B")
	saved.Reset()
	desired.Vhosts[f.vhost].Items.Get(kind.Shovel, "s").Settings["dest-uri"] = []any{env["DEST_A"], uri("pw-list-c")}
	if err := plan.WriteSaved(&saved, f.plan(desired)); err != nil {
		t.Fatalf("save the second plan: %v", err)
	}
	p, err = plan.ReadSaved(&saved, "plan.out")
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Apply(context.Background(), engine.ApplyInput{Saved: p}, engine.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "set DEST_B: item 2 of dest-uri") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("apply without DEST_B: %v, want a refusal naming the variable", err)
	}
}
