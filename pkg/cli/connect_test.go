package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
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
	badPath := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badPath, []byte("current_contxt: a\ncontexts:\n  a: { sever: http://a:15672 }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	twoPath := filepath.Join(dir, "two.yaml")
	if err := os.WriteFile(twoPath, []byte("contexts:\n  a: { server: http://a:15672 }\n  b: { server: http://b:15672 }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	onePath := filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(onePath, []byte("contexts:\n  only: { server: http://only:15672, username: me, password: pw }\n"), 0o600); err != nil {
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
		// A config file named by --config or MQCTL_CONFIG must exist (it
		// was passed over, and the defaults used); only the default path
		// may be absent.
		{name: "--config that does not exist", args: []string{"--config", filepath.Join(dir, "missing.yaml")},
			wantErr: "config file " + filepath.Join(dir, "missing.yaml") + " (--config or MQCTL_CONFIG) does not exist: check the path, or leave it out for ~/.config/mqctl/config.yaml"},
		{name: "MQCTL_CONFIG that does not exist", env: map[string]string{"MQCTL_CONFIG": filepath.Join(dir, "missing.yaml")}, wantErr: "(--config or MQCTL_CONFIG) does not exist"},
		// password_env naming a variable that is not set: it logged in
		// with guest's default password.
		{name: "password_env not set", env: map[string]string{"MQCTL_CONFIG": cfgPath},
			wantErr: `context "staging" of ` + cfgPath + ` takes its password from the environment variable STAGING_PW (password_env), which is not set: set it, or pass --password`},
		{name: "password_env not set, --password given", args: []string{"--password", "pw"}, env: map[string]string{"MQCTL_CONFIG": cfgPath}, server: "http://staging:15672", user: "deploy", pass: "pw", amqp: "amqp://staging:5672"},
		{name: "password_env not set, MQCTL_PASSWORD given", env: map[string]string{"MQCTL_CONFIG": cfgPath, "MQCTL_PASSWORD": "pw"}, server: "http://staging:15672", user: "deploy", pass: "pw", amqp: "amqp://staging:5672"},
		// Contexts and none chosen: it went to localhost and guest
		// without a word. One context is the one meant; of several, the
		// user says which, unless the server is given anyway.
		{name: "several contexts, none chosen", env: map[string]string{"MQCTL_CONFIG": twoPath},
			wantErr: "config file " + twoPath + " defines contexts [a b] and chooses none: set current_context: NAME in it, or pass --context NAME (MQCTL_CONTEXT), or give --server"},
		{name: "several contexts, none chosen, --server given", args: []string{"--server", "http://flag:1"}, env: map[string]string{"MQCTL_CONFIG": twoPath}, server: "http://flag:1"},
		{name: "one context, not chosen", env: map[string]string{"MQCTL_CONFIG": onePath}, server: "http://only:15672", user: "me", pass: "pw"},
		// A field misspelt is named at its line, as the file spells it,
		// with the field meant (it said "field sever not found in type
		// cli.Context").
		{name: "misspelt fields", env: map[string]string{"MQCTL_CONFIG": badPath},
			wantErr: "2 errors in config file " + badPath + ":\n  " + badPath + `:1: unknown field "current_contxt" in the file (did you mean "current_context"?)` + "\n  " + badPath + `:3: unknown field "sever" in a context (did you mean "server"?)`},
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

// TestConfigErrorsShowNoPassword: a config file the YAML library cannot
// decode is refused naming its line, never quoting the value there (a
// password written with a tag, a URL with credentials where a list goes).
func TestConfigErrorsShowNoPassword(t *testing.T) {
	const secret = "Cfg7pw"
	tests := []struct{ name, context, want string }{
		{"a tagged password", "password: !!int " + secret, "cannot decode !!str (a value, not shown) as a !!int"},
		{"a password where a boolean goes", "insecure_skip_verify: " + secret, "line 5: cannot unmarshal !!str (a value, not shown) into bool"},
		{"a URL with credentials where a list goes", "servers: u:" + secret + "@h", "line 5: cannot unmarshal !!str (a value, not shown) into []string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfgPath := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(cfgPath, []byte("current_context: c\ncontexts:\n  c:\n    server: http://h:15672\n    "+tc.context+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			g := &globals{env: Env{LookupEnv: envFrom(map[string]string{"MQCTL_CONFIG": cfgPath})}}
			g.conn.register(pflag.NewFlagSet("test", pflag.ContinueOnError))
			_, _, err := g.brokerConfig()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
