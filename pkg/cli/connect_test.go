package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/mqctl/mqctl/internal/testbroker"
)

func envFrom(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// TestBrokerConfigPrecedence: flag beats environment beats the config
// file's context beats the default.
func TestBrokerConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(`current_context: staging
contexts:
  staging: { server: http://staging:15672, username: deploy, password_env: STAGING_PW, amqp_url: "amqp://staging:5672" }
  prod: { server: https://prod:15671, username: ops, password: from-file, ca_cert: /etc/prod-ca.pem }
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name               string
		args               []string
		env                map[string]string
		server, user, pass string
		ca, amqp           string
		wantErr            string
	}{
		{name: "defaults without a config file", env: map[string]string{"HOME": t.TempDir()}, server: "", user: "", pass: ""},
		{name: "current context, password from its env var", env: map[string]string{"MQCTL_CONFIG": cfgPath, "STAGING_PW": "s3"}, server: "http://staging:15672", user: "deploy", pass: "s3", amqp: "amqp://staging:5672"},
		{name: "--context picks another", args: []string{"--context", "prod"}, env: map[string]string{"MQCTL_CONFIG": cfgPath}, server: "https://prod:15671", user: "ops", pass: "from-file", ca: "/etc/prod-ca.pem"},
		{name: "environment beats the context", args: []string{"--context", "prod"}, env: map[string]string{"MQCTL_CONFIG": cfgPath, "MQCTL_USERNAME": "envuser"}, server: "https://prod:15671", user: "envuser", pass: "from-file", ca: "/etc/prod-ca.pem"},
		{name: "flags beat everything", args: []string{"--context", "prod", "--server", "http://flag:1", "--password", "flagpw"}, env: map[string]string{"MQCTL_CONFIG": cfgPath, "MQCTL_SERVER": "http://env:2"}, server: "http://flag:1", user: "ops", pass: "flagpw", ca: "/etc/prod-ca.pem"},
		{name: "unknown context", args: []string{"--context", "nope"}, env: map[string]string{"MQCTL_CONFIG": cfgPath}, wantErr: `context "nope" is not defined in ` + cfgPath + ` (defined: [prod staging])`},
		{name: "--context without a config file", args: []string{"--context", "prod", "--config", filepath.Join(dir, "missing.yaml")}, wantErr: "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &globals{env: Env{LookupEnv: envFrom(tc.env)}}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			g.conn.register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, amqp, err := g.brokerConfig()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Server != tc.server || cfg.Username != tc.user || cfg.Password != tc.pass || cfg.CACert != tc.ca || amqp != tc.amqp {
				t.Errorf("got server=%q user=%q pass=%q ca=%q amqp=%q", cfg.Server, cfg.Username, cfg.Password, cfg.CACert, amqp)
			}
		})
	}
}

// TestConnectionErrors: a wrong password, an unreachable host and a
// missing vhost each get one line saying which, never the password.
func TestConnectionErrors(t *testing.T) {
	br := testbroker.New(t)
	const secret = "not-the-Password-42"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"wrong password", []string{"export", "--server", br.URL, "--username", br.Username, "--password", secret}, `mqctl: authentication failed for user "` + br.Username + `" at ` + br.URL + `: check --username/--password`},
		{"unreachable host", []string{"export", "--server", "http://127.0.0.1:1", "--password", secret}, "mqctl: cannot reach the management API at http://127.0.0.1:1"},
		{"credentials in the URL are masked", []string{"export", "--server", "http://guest:" + secret + "@127.0.0.1:1"}, "mqctl: cannot reach the management API at http://127.0.0.1:1"},
		{"missing vhost", []string{"export", "--vhost", "no-such-vhost", "--server", br.URL, "--username", br.Username, "--password", br.Password}, `mqctl: vhost "no-such-vhost" does not exist on ` + br.URL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(context.Background(), tc.args, Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: envFrom(nil)})
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) {
				t.Errorf("stderr = %q, want one line starting %q", errb.String(), tc.want)
			}
			if strings.Contains(out.String()+errb.String(), secret) {
				t.Errorf("the password appears in the output: %q", errb.String())
			}
		})
	}
}
