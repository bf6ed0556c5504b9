package broker

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Every kind the registry carries as topology.Item has a driver here, and
// nothing else has one: a kind added to pkg/kind without one fails here,
// before any broker is asked.
func TestEveryItemKindHasADriver(t *testing.T) {
	t.Parallel()
	for _, s := range kind.All() {
		_, ok := drivers[s.Kind]
		switch {
		case s.Item != nil && !ok:
			t.Errorf("kind %q is carried as topology.Item but has no driver: add one to drivers (pkg/broker/items.go; README, \"Adding a kind\")", s.Kind)
		case s.Item == nil && ok:
			t.Errorf("kind %q has a driver but no kind.ItemSpec: the generic path never reaches it", s.Kind)
		}
	}
	for k := range drivers {
		if _, ok := kind.Of(k); !ok {
			t.Errorf("drivers has kind %q, which pkg/kind does not know", k)
		}
	}
}

// A kind without a driver is refused before any request, with
// kind.Unknown's error.
func TestNoDriverIsUnknown(t *testing.T) {
	t.Parallel()
	c := &Client{} // no endpoint: a request would fail otherwise
	ctx := context.Background()
	want := kind.Unknown("broker driver", kind.Queue).Error()
	it := &topology.Item{Kind: kind.Queue, Name: "q"}
	for name, err := range map[string]error{
		"read":   func() error { _, err := c.ReadItems(ctx, kind.Queue, "/"); return err }(),
		"write":  c.WriteItem(ctx, kind.Queue, "/", nil, it),
		"delete": c.DeleteItem(ctx, kind.Queue, "/", it),
	} {
		if err == nil || err.Error() != want {
			t.Errorf("%s of a queue as an item: %v, want %q", name, err, want)
		}
	}
}

// scrub masks the secrets the broker quoted and keeps the sentinel
// errors of the original.
func TestScrubMasksSecrets(t *testing.T) {
	t.Parallel()
	it := &topology.Item{Kind: kind.Shovel, Name: "s", Settings: topology.Args{
		"src-uri": []any{"amqp://u:s3cret@h1:x", "amqps://h3/v?password=k2&verify=v"}, "dest-uri": "amqps://u:other-pw@h2?verify=x&password=keypw"}}
	orig := &APIError{msg: `set shovel "s": "amqp://u:s3cret@h1:x" not a valid URI; other-pw; "amqps://u:other-pw@h2?verify=x&password=keypw" not a valid URI: {{invalid_ssl_parameter, verify, "x", [{"verify", "x"}, {"password", "keypw"}]}}; [{"password", "k2"}, {"verify", "v"}]`, kind: []error{ErrRejected}}
	err := scrub(orig, it, kind.SecretFields(kind.Shovel))
	if !errors.Is(err, ErrRejected) {
		t.Errorf("scrubbed error %v no longer wraps ErrRejected", err)
	}
	for _, secret := range []string{"s3cret", "other-pw", "keypw", "k2"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("scrubbed error %q still holds %q", err, secret)
		}
	}
	if scrub(nil, it, nil) != nil {
		t.Error("scrub(nil) is not nil")
	}
}

// A user's write refused for its hash does not show the hash: the broker
// quotes it ([not_base64, HASH], measured on 4.3.6), whether it is the
// file's or the stored one sent back for an unchanged password.
func TestWriteUserMasksTheHash(t *testing.T) {
	t.Parallel()
	const fileHash = "notbase64!!xyz"
	salt := []byte{1, 2, 3, 4}
	sum := sha256.Sum256(append(salt, "pw-x"...))
	storedHash := base64.StdEncoding.EncodeToString(append(salt, sum[:]...))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/api/users/svc" {
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"bad_request","reason":["not_base64",%q]}`, body[kind.UserPasswordHash])
			return
		}
		fakeAPI(http.StatusOK, "").ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := Connect(context.Background(), Config{Server: srv.URL, Username: "bob", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	stored := &topology.Item{Kind: kind.User, Name: "svc", Settings: topology.Args{
		kind.UserPasswordHash: storedHash, kind.UserHashingAlgorithm: "rabbit_password_hashing_sha256", kind.UserTags: []any{}}}
	for name, w := range map[string]struct{ have, want *topology.Item }{
		"the file's hash": {nil, &topology.Item{Kind: kind.User, Name: "svc", Settings: topology.Args{kind.UserPasswordHash: fileHash, kind.UserTags: []any{}}}},
		"the stored hash": {stored, &topology.Item{Kind: kind.User, Name: "svc", Settings: topology.Args{kind.UserPassword: "pw-x", kind.UserTags: []any{"management"}}}},
	} {
		err := c.WriteItem(context.Background(), kind.User, "", w.have, w.want)
		if !errors.Is(err, ErrRejected) {
			t.Errorf("%s: error %v does not wrap ErrRejected", name, err)
		}
		if err != nil && (strings.Contains(err.Error(), fileHash) || strings.Contains(err.Error(), storedHash)) {
			t.Errorf("%s: error %q shows the hash", name, err)
		}
	}
}
