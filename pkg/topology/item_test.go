package topology

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaskSecret(t *testing.T) {
	tests := []struct {
		in   any
		want any
	}{
		{"amqp://shovel:s3cret@dc2.example.com:5672/orders", "amqp://shovel:***@dc2.example.com:5672/orders"},
		{"amqps://u:p@h", "amqps://u:***@h"},
		{"amqp:///orders", "amqp:///orders"},     // local: no credential
		{"amqp://guest@h/v", "amqp://guest@h/v"}, // a user without a password
		{"amqp://h/v?auth_mechanism=external", "amqp://h/v?auth_mechanism=external"},
		{"amqp://u:p@ss@h/v", "amqp://u:***@h/v"}, // a raw @ in the password
		{"amqp://u:p/a@h/v", "amqp://u:***@h/v"},  // a raw / in the password
		{"amqp://h/v?x=a@b", "amqp://h/v?x=a@b"},  // an @ in the query
		{"hunter2", Mask},                         // a password
		{"", Mask},
		{[]any{"amqp://a:b@h1", "amqp:///x"}, []any{"amqp://a:***@h1", "amqp:///x"}},
		{int64(3), Mask},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := MaskSecret(tt.in); !cmp.Equal(got, tt.want) {
			t.Errorf("MaskSecret(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// No JSON form of an item holds its secrets; Refs survive, so that a saved
// plan can find them again.
func TestItemJSONMasksSecrets(t *testing.T) {
	it := Item{Kind: "shovel", Name: "s", Settings: Args{"src-uri": "amqp://u:pw-123@h/v", "src-queue": "q"},
		Secret: []string{"src-uri"}, Refs: map[string]string{"src-uri": "SRC_URI"}}
	data, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "pw-123") {
		t.Fatalf("JSON holds the secret: %s", data)
	}
	var back Item
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	want := Item{Kind: "shovel", Name: "s", Settings: Args{"src-uri": "amqp://u:***@h/v", "src-queue": "q"},
		Secret: []string{"src-uri"}, Refs: map[string]string{"src-uri": "SRC_URI"}}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	if it.Settings["src-uri"] != "amqp://u:pw-123@h/v" {
		t.Errorf("marshalling changed the item itself: %v", it.Settings)
	}
}
