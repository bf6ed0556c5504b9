package broker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMembersUp: RabbitMQ 3.10.8 lists a quorum queue's members with a
// Raft server as online; with the nodes that run, the members online are
// those whose node runs, and those of them without a server are apart.
func TestMembersUp(t *testing.T) {
	a, b, c := "rabbit@a", "rabbit@b", "rabbit@c"
	for _, tc := range []struct {
		name             string
		typ              string
		listed           []string
		up               map[string]bool
		online, noServer []string
	}{
		{"every server runs", "quorum", []string{a, b, c}, map[string]bool{a: true, b: true, c: true}, []string{a, b, c}, nil},
		{"no server on nodes that run", "quorum", nil, map[string]bool{a: true, b: true, c: true}, []string{a, b, c}, []string{a, b, c}},
		{"a node down", "quorum", []string{a, b}, map[string]bool{a: true, b: true}, []string{a, b}, nil},
		{"a node down, a server stopped", "quorum", []string{a}, map[string]bool{a: true, b: true}, []string{a, b}, []string{b}},
		{"nodes unread (4.0+, or no monitoring tag)", "quorum", []string{a}, nil, []string{a}, nil},
		{"a stream is left as listed", "stream", []string{a}, map[string]bool{a: true, b: true, c: true}, []string{a}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			online, noServer := membersUp(tc.typ, []string{a, b, c}, tc.listed, tc.up)
			if diff := cmp.Diff(tc.online, online); diff != "" {
				t.Errorf("online (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.noServer, noServer); diff != "" {
				t.Errorf("noServer (-want +got):\n%s", diff)
			}
		})
	}
}
