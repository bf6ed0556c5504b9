package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestServersList: several management endpoints from repeated or
// comma-separated --server, MQCTL_SERVER, or a context's server/servers,
// with the same precedence as every other setting.
func TestServersList(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(`current_context: cluster
contexts:
  cluster: { servers: [http://n1:15672, http://n2:15672, "http://n3:15672"] }
  both: { server: "http://a:1, http://b:2", servers: [http://c:3] }
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"repeated --server", []string{"--server", "http://a:1", "--server", "http://b:2"}, nil, []string{"http://a:1", "http://b:2"}},
		{"comma-separated --server", []string{"--server", "http://a:1,http://b:2"}, nil, []string{"http://a:1", "http://b:2"}},
		{"MQCTL_SERVER", nil, map[string]string{"MQCTL_SERVER": "http://a:1, http://b:2,"}, []string{"http://a:1", "http://b:2"}},
		{"context servers:", nil, map[string]string{"MQCTL_CONFIG": cfgPath}, []string{"http://n1:15672", "http://n2:15672", "http://n3:15672"}},
		{"context server: then servers:", []string{"--context", "both"}, map[string]string{"MQCTL_CONFIG": cfgPath}, []string{"http://a:1", "http://b:2", "http://c:3"}},
		{"the flag beats the environment and the context", []string{"--server", "http://f:1"}, map[string]string{"MQCTL_CONFIG": cfgPath, "MQCTL_SERVER": "http://e:1,http://e:2"}, []string{"http://f:1"}},
		{"none: the client's default", nil, map[string]string{"HOME": dir}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &globals{env: Env{LookupEnv: envFrom(tc.env)}}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			g.conn.register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, _, err := g.brokerConfig()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cfg.Servers, " "); got != strings.Join(tc.want, " ") {
				t.Errorf("servers %q, want %q", cfg.Servers, tc.want)
			}
			if cfg.Server != strings.Join(tc.want, ",") {
				t.Errorf("Server %q, want the list joined with commas", cfg.Server)
			}
		})
	}
}
