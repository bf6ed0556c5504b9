package broker

import "testing"

func TestRefusedResource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason string
		want   resource
		ok     bool
	}{
		{"ACCESS_REFUSED - access to queue 'orders' in vhost 'shop' refused for user 'deploy'", resource{"queue", "orders"}, true},
		{"ACCESS_REFUSED - access to exchange 'a.b' in vhost '/' refused for user 'x'", resource{"exchange", "a.b"}, true},
		{"access to queue 'it's' in vhost 'v' refused for user 'u'", resource{"queue", "it's"}, true},
		{"access to exchange 'amq.default' in vhost 'v' refused for user 'u'", resource{"exchange", ""}, true},
		{"ACCESS_REFUSED - operation not permitted on the default exchange", resource{}, false},
		{"access to vhost 'v' refused for user 'u'", resource{}, false},
	}
	for _, tt := range tests {
		got, ok := refusedResource(tt.reason)
		if got != tt.want || ok != tt.ok {
			t.Errorf("refusedResource(%q) = %v, %v; want %v, %v", tt.reason, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSplitPath(t *testing.T) {
	t.Parallel()
	got := splitPath(seg("bindings", "a/b", "e", "x y", "q", "%q"))
	want := []string{"bindings", "a/b", "e", "x y", "q", "%q"}
	if len(got) != len(want) {
		t.Fatalf("splitPath = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("segment %d = %q, want %q", i, got[i], want[i])
		}
	}
}
