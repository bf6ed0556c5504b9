package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	yaml "go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/suggest"
)

// connFlags are the connection settings (SPEC §1). Precedence: flag, then
// environment variable, then the selected context of the config file, then
// the default (http://localhost:15672, guest/guest).
type connFlags struct {
	servers                       []string
	username, password            string
	amqpURL                       string
	caCert, clientCert, clientKey string
	insecure                      bool
	context, config               string
	timeout                       time.Duration
	set                           func(name string) bool
}

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.servers, "server", nil, "management API URL; several (repeated or comma-separated: the nodes of a cluster) fail over in order (env MQCTL_SERVER; default http://localhost:15672)")
	fs.StringVar(&c.username, "username", "", "management API user (env MQCTL_USERNAME; default guest)")
	fs.StringVar(&c.password, "password", "", "password (env MQCTL_PASSWORD; default guest); never printed")
	fs.StringVar(&c.amqpURL, "amqp-url", "", "AMQP URL for locks, queue checks and dlq (env MQCTL_AMQP_URL; default: the server's host and the AMQP port the broker reports)")
	fs.StringVar(&c.caCert, "ca-cert", "", "PEM file of CA certificates to trust (env MQCTL_CA_CERT)")
	fs.StringVar(&c.clientCert, "client-cert", "", "PEM client certificate for mutual TLS (env MQCTL_CLIENT_CERT)")
	fs.StringVar(&c.clientKey, "client-key", "", "PEM client key for mutual TLS (env MQCTL_CLIENT_KEY)")
	fs.BoolVar(&c.insecure, "insecure-skip-verify", false, "do not verify the server's TLS certificate")
	fs.StringVar(&c.context, "context", "", "named broker context from the config file (env MQCTL_CONTEXT)")
	fs.StringVar(&c.config, "config", "", "config file (env MQCTL_CONFIG; default ~/.config/mqctl/config.yaml)")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "timeout of each management API request (a definitions read of a vhost with tens of thousands of objects takes a while)")
	c.set = func(name string) bool { return fs.Changed(name) }
}

// Context is one named broker in the config file.
type Context struct {
	Server string `yaml:"server"`
	// Servers are several management API endpoints (a cluster's nodes),
	// tried in order after Server.
	Servers            []string `yaml:"servers"`
	Username           string   `yaml:"username"`
	Password           string   `yaml:"password"`
	PasswordEnv        string   `yaml:"password_env"`
	AMQPURL            string   `yaml:"amqp_url"`
	CACert             string   `yaml:"ca_cert"`
	ClientCert         string   `yaml:"client_cert"`
	ClientKey          string   `yaml:"client_key"`
	InsecureSkipVerify bool     `yaml:"insecure_skip_verify"`
}

// Config is ~/.config/mqctl/config.yaml.
type Config struct {
	CurrentContext string             `yaml:"current_context"`
	Contexts       map[string]Context `yaml:"contexts"`
}

// brokerConfig resolves the connection settings.
func (g *globals) brokerConfig() (broker.Config, string, error) {
	src := connSource{c: &g.conn, env: func(name string) string { v, _ := g.env.LookupEnv(name); return v }}
	ctx, name, path, err := g.configContext(src)
	if err != nil {
		return broker.Config{}, "", err
	}
	if ctx.PasswordEnv != "" && ctx.Password == "" {
		v, ok := g.env.LookupEnv(ctx.PasswordEnv)
		// Unset, the login would fall back on guest's password, and be
		// refused as "authentication failed" (or, worse, succeed as guest
		// on a broker that still has it): the variable is what to fix.
		if !ok && !src.given("password") && src.env("MQCTL_PASSWORD") == "" {
			return broker.Config{}, "", fmt.Errorf("context %q of %s takes its password from the environment variable %s (password_env), which is not set: set it, or pass --password", name, path, ctx.PasswordEnv)
		}
		ctx.Password = v
	}
	c := src.c
	servers := src.servers(ctx)
	bc := broker.Config{
		Server:             strings.Join(servers, ","),
		Servers:            servers,
		Username:           src.pick("username", c.username, "MQCTL_USERNAME", ctx.Username),
		Password:           src.pick("password", c.password, "MQCTL_PASSWORD", ctx.Password),
		CACert:             src.pick("ca-cert", c.caCert, "MQCTL_CA_CERT", ctx.CACert),
		ClientCert:         src.pick("client-cert", c.clientCert, "MQCTL_CLIENT_CERT", ctx.ClientCert),
		ClientKey:          src.pick("client-key", c.clientKey, "MQCTL_CLIENT_KEY", ctx.ClientKey),
		InsecureSkipVerify: c.insecure || ctx.InsecureSkipVerify || src.env("MQCTL_INSECURE_SKIP_VERIFY") == "true",
		Timeout:            c.timeout,
	}
	amqpURL := src.pick("amqp-url", c.amqpURL, "MQCTL_AMQP_URL", ctx.AMQPURL)
	bc.AMQPURL = amqpURL
	return bc, amqpURL, nil
}

// connSource is where a connection setting comes from, in order: the
// flag, set on the command line; the environment variable, not empty;
// the config file's context.
type connSource struct {
	c   *connFlags
	env func(name string) string
}

// given says whether flag was set on the command line.
func (s connSource) given(flag string) bool { return s.c.set != nil && s.c.set(flag) }

// pick is flagVal when flag is given, else the value of envName when not
// empty, else ctxVal.
func (s connSource) pick(flag, flagVal, envName string, ctxVal string) string {
	if s.given(flag) {
		return flagVal
	}
	if v := s.env(envName); v != "" {
		return v
	}
	return ctxVal
}

// servers are the management API URLs: --server's, MQCTL_SERVER's
// (comma-separated), or ctx's server and servers.
func (s connSource) servers(ctx Context) []string {
	var servers []string
	switch {
	case s.given("server"):
		servers = s.c.servers
	case s.env("MQCTL_SERVER") != "":
		servers = strings.Split(s.env("MQCTL_SERVER"), ",")
	default:
		servers = append(strings.Split(ctx.Server, ","), ctx.Servers...)
	}
	return cleanServers(servers)
}

// configContext reads the config file (--config, MQCTL_CONFIG, else
// ~/.config/mqctl/config.yaml where there is one) at path, and returns
// the context chosen, named name (the zero Context for none).
func (g *globals) configContext(src connSource) (ctx Context, name, path string, err error) {
	name = src.pick("context", src.c.context, "MQCTL_CONTEXT", "")
	path = src.pick("config", src.c.config, "MQCTL_CONFIG", "")
	named := path != "" // by --config or MQCTL_CONFIG: it must exist
	if path == "" {
		if home, ok := g.env.LookupEnv("HOME"); ok && home != "" {
			path = filepath.Join(home, ".config", "mqctl", "config.yaml")
		}
	}
	if path == "" {
		return Context{}, name, path, nil
	}
	cfg, err := readConfig(path)
	switch {
	case err == nil:
		serverGiven := src.given("server") || src.env("MQCTL_SERVER") != ""
		ctx, name, err = chooseContext(cfg, path, name, serverGiven)
		return ctx, name, path, err
	case os.IsNotExist(err) && named:
		return Context{}, name, path, fmt.Errorf("config file %s (--config or MQCTL_CONFIG) does not exist: check the path, or leave it out for ~/.config/mqctl/config.yaml", path)
	case os.IsNotExist(err) && name == "":
		return Context{}, name, path, nil
	case os.IsNotExist(err):
		return Context{}, name, path, fmt.Errorf("--context %q given but the config file %s does not exist", name, path)
	default:
		return Context{}, name, path, err
	}
}

// chooseContext is the context of cfg (read from path) named name (given
// by --context or MQCTL_CONTEXT), else the file's current context, else
// its only context unless the server is given anyway (serverGiven); the
// zero Context for none.
func chooseContext(cfg *Config, path, name string, serverGiven bool) (Context, string, error) {
	if name == "" {
		name = cfg.CurrentContext
	}
	// Contexts and none chosen: mqctl went to the defaults (localhost,
	// guest) without a word. The one context is the one meant; of
	// several, which one is the user's to say, unless the server is
	// given anyway.
	if name == "" && len(cfg.Contexts) > 0 && !serverGiven {
		if len(cfg.Contexts) > 1 {
			return Context{}, "", fmt.Errorf("config file %s defines contexts %v and chooses none: set current_context: NAME in it, or pass --context NAME (MQCTL_CONTEXT), or give --server", path, keys(cfg.Contexts))
		}
		for n := range cfg.Contexts {
			name = n
		}
	}
	if name == "" {
		return Context{}, "", nil
	}
	cx, ok := cfg.Contexts[name]
	if !ok {
		return Context{}, name, fmt.Errorf("context %q is not defined in %s (defined: %v)", name, path, keys(cfg.Contexts))
	}
	return cx, name, nil
}

// cleanServers trims the management API URLs and drops empty ones.
func cleanServers(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func readConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		// yaml's "line 3: field sever not found in type cli.Context" names
		// a Go type: say it as the file is written, with the field meant.
		var te *yaml.TypeError
		if errors.As(err, &te) {
			var lines []string
			for _, e := range te.Errors {
				m := unknownConfigField.FindStringSubmatch(e)
				if m == nil {
					lines = append(lines, fmt.Sprintf("%s: %s", path, yamlValues.ReplaceAllString(e, "(a value, not shown)")))
					continue
				}
				known, where := contextFields, "a context"
				if m[3] == "Config" {
					known, where = configFields, "the file"
				}
				hint := "fields: " + strings.Join(known, ", ")
				if near := suggest.Closest(m[2], known); near != "" {
					hint = fmt.Sprintf("did you mean %q?", near)
				}
				lines = append(lines, fmt.Sprintf("%s:%s: unknown field %q in %s (%s)", path, m[1], m[2], where, hint))
			}
			if len(lines) == 1 {
				return nil, errors.New(lines[0])
			}
			return nil, fmt.Errorf("%d errors in config file %s:\n  %s", len(lines), path, strings.Join(lines, "\n  "))
		}
		return nil, fmt.Errorf("config file %s: %s (expected current_context: NAME and contexts: {NAME: {server | servers: [URL, …], username, password | password_env, amqp_url, ca_cert, client_cert, client_key, insecure_skip_verify}})", path, yamlValues.ReplaceAllString(err.Error(), "(a value, not shown)"))
	}
	return &cfg, nil
}

// yamlValues matches a value the YAML library quotes in an error, in
// backquotes (cannot decode !!str `s3cret` as a !!int): the value may be a
// password, and the error's line names it.
var yamlValues = regexp.MustCompile("`[^`]*`")

var (
	unknownConfigField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type cli\.(Context|Config)$`)
	configFields       = []string{"current_context", "contexts"}
	contextFields      = []string{"server", "servers", "username", "password", "password_env", "amqp_url", "ca_cert", "client_cert", "client_key", "insecure_skip_verify"}
)

// connect opens the management API connection and works out the AMQP URL
// that goes with it, for commands that open AMQP connections.
func (g *globals) connect(ctx context.Context) (*broker.Client, string, error) {
	c, err := g.connectAPI(ctx)
	if err != nil {
		return nil, "", err
	}
	u, err := c.AMQPURL(ctx, "")
	if err != nil {
		return nil, "", err
	}
	return c, u, nil
}

// connectAPI opens the management API connection only.
func (g *globals) connectAPI(ctx context.Context) (*broker.Client, error) {
	cfg, _, err := g.brokerConfig()
	if err != nil {
		return nil, err
	}
	return broker.Connect(ctx, cfg)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
