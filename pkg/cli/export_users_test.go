package cli

import (
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestScopeUsers: an export of some vhosts keeps the users with a
// permission or a topic permission in them, and those mqctl manages (a
// plan of the export would otherwise delete them); it leaves out the
// others with their limits, and says which.
func TestScopeUsers(t *testing.T) {
	tests := []struct {
		name       string
		permission []string // users with a permission in the exported vhost
		topic      []string // users with a topic permission there
		managed    []string
		wantKept   []string
		wantLeft   []string
	}{
		{"none has access", nil, nil, nil, nil, []string{"a", "b", "c", "guest"}},
		{"a permission, a topic permission", []string{"a"}, []string{"b"}, nil, []string{"a", "b"}, []string{"c", "guest"}},
		{"managed without access", []string{"a"}, nil, []string{"c"}, []string{"a", "c"}, []string{"b", "guest"}},
		{"everyone", []string{"a", "b", "c", "guest"}, nil, nil, []string{"a", "b", "c", "guest"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := &topology.Topology{Vhosts: map[string]*topology.Vhost{"v": topology.NewVhost("v")}}
			for _, u := range []string{"a", "b", "c", "guest"} {
				top.Items.Put(&topology.Item{Kind: kind.User, Name: u, Settings: topology.Args{kind.UserTags: []any{}}})
				top.Items.Put(&topology.Item{Kind: kind.UserLimits, Name: u, Settings: topology.Args{"max-connections": int64(5)}})
			}
			for _, u := range tt.permission {
				top.Vhosts["v"].Items.Put(&topology.Item{Kind: kind.Permission, Name: u, Settings: topology.Args{"configure": ".*", "write": ".*", "read": ".*"}})
			}
			for _, u := range tt.topic {
				top.Vhosts["v"].Items.Put(&topology.Item{Kind: kind.TopicPermission, Name: u, Settings: topology.Args{}})
			}
			managed := map[string]bool{}
			for _, u := range tt.managed {
				managed[u] = true
			}
			left := scopeUsers(top, managed)
			if !slices.Equal(left, tt.wantLeft) {
				t.Errorf("left out %v, want %v", left, tt.wantLeft)
			}
			if got := top.Items.Names(kind.User); !slices.Equal(got, tt.wantKept) && !(len(got) == 0 && len(tt.wantKept) == 0) {
				t.Errorf("users kept %v, want %v", got, tt.wantKept)
			}
			if got := top.Items.Names(kind.UserLimits); !slices.Equal(got, tt.wantKept) && !(len(got) == 0 && len(tt.wantKept) == 0) {
				t.Errorf("user limits kept %v, want those of %v", got, tt.wantKept)
			}
		})
	}
}
