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

// scrub masks the broker's words only: a name of mqctl's own words that is
// also the password stays (masking it would tell the password), and a
// short password is masked where the broker's words make it one (a URI's,
// the query's pair), not wherever the word appears (a mechanism the URI
// shows anyway).
func TestScrubKeepsNamesThatAreThePassword(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		it       *topology.Item
		op       string
		reason   string
		want     string
		notShown []string
	}{
		{"a shovel named as its password",
			&topology.Item{Kind: kind.Shovel, Name: "bogus", Settings: topology.Args{"src-uri": "amqp://bogus:bogus@h/v?auth_mechanism=bogus"}},
			`set shovel "bogus" in vhost "v"`,
			`Validation failed: "amqp://bogus:bogus@h/v?auth_mechanism=bogus" not a valid URI: {{unknown_mechanism, "bogus"}, "amqp://bogus:bogus@h/v?auth_mechanism=bogus"}`,
			`set shovel "bogus" in vhost "v": the broker at http://h:15672 refused (400): Validation failed: "amqp://bogus:***@h/v?auth_mechanism=bogus" not a valid URI: {{unknown_mechanism, "bogus"}, "amqp://bogus:***@h/v?auth_mechanism=bogus"}`,
			[]string{"bogus:bogus"}},
		{"a password that is a query parameter's name",
			&topology.Item{Kind: kind.Shovel, Name: "s", Settings: topology.Args{"src-uri": "amqp://u:auth_mechanism@h/v?auth_mechanism=bogus"}},
			`set shovel "s" in vhost "v"`,
			`Validation failed: "amqp://u:auth_mechanism@h/v?auth_mechanism=bogus" not a valid URI: {{unknown_mechanism, "bogus"}, "amqp://u:auth_mechanism@h/v?auth_mechanism=bogus"}`,
			`refused (400): Validation failed: "amqp://u:***@h/v?auth_mechanism=bogus" not a valid URI: {{unknown_mechanism, "bogus"}, "amqp://u:***@h/v?auth_mechanism=bogus"}`,
			[]string{"u:auth_mechanism@"}},
		{"a user named as its password",
			&topology.Item{Kind: kind.User, Name: "svc", Settings: topology.Args{kind.UserPassword: "svc", kind.UserTags: []any{"svc"}}},
			`write user "svc"`,
			`invalid tag "svc"`,
			`write user "svc": the broker at http://h:15672 refused (400): invalid tag "svc"`,
			nil},
		{"a TLS key password as the broker parsed the query",
			&topology.Item{Kind: kind.Shovel, Name: "s", Settings: topology.Args{"src-uri": "amqps://h/v?verify=bogus&password=x1"}},
			`set shovel "s" in vhost "v"`,
			`Validation failed: "amqps://h/v?verify=bogus&password=x1" not a valid URI: {{invalid_ssl_parameter, verify,"bogus", [{"verify","bogus"},{"password","x1"}], {invalid_atom_parameter, "bogus"}}, "amqps://h/v?verify=bogus&password=x1"}`,
			`Validation failed: "amqps://h/v?verify=bogus&password=***" not a valid URI: {{invalid_ssl_parameter, verify,"bogus", [{"verify","bogus"},{"password","***"}], {invalid_atom_parameter, "bogus"}}, "amqps://h/v?verify=bogus&password=***"}`,
			[]string{"x1"}},
		{"a long password, unquoted",
			&topology.Item{Kind: kind.User, Name: "svc", Settings: topology.Args{kind.UserPassword: "Long-Secret-9"}},
			`write user "svc"`,
			`refused: Long-Secret-9 is no good`,
			`refused (400): refused: *** is no good`,
			[]string{"Long-Secret-9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := &APIError{Op: tt.op, Status: 400, Reason: tt.reason, kind: []error{ErrRejected},
				msg: fmt.Sprintf("%s: the broker at http://h:15672 refused (400): %s", tt.op, tt.reason)}
			err := scrub(orig, tt.it, kind.SecretFields(tt.it.Kind))
			err = scrub(err, tt.it, kind.SecretFields(tt.it.Kind)) // a user is scrubbed twice (the stored and the new)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("scrubbed:\n  %s\nwant it to contain\n  %s", err, tt.want)
			}
			for _, s := range tt.notShown {
				if strings.Contains(err.Error(), s) {
					t.Errorf("scrubbed error %q still holds %q", err, s)
				}
			}
			if !errors.Is(err, ErrRejected) {
				t.Errorf("scrubbed error %v no longer wraps ErrRejected", err)
			}
		})
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
