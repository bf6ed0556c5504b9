// Package cli is mqctl's commands: the cobra command tree, in which each
// command parses its flags into options, checks them and drives the
// engine or the offline packages, and hands what they return to the
// command's view (view_*.go, or the package that owns the document: human
// text or JSON). Nothing here is package-level state: NewRootCmd builds a
// fresh tree around the given IO and environment, so tests can run many
// commands in one process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitError   = 1
	ExitChanges = 2 // plan --detailed-exitcode: there are changes
)

// ExitError carries an exit code. A command returns it (wrapped or not) to
// leave with a code other than 1; Err may be nil when the message has
// already been printed.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e *ExitCodeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitCodeError) Unwrap() error { return e.Err }

// Env is what a command sees of the outside world.
type Env struct {
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	LookupEnv func(string) (string, bool)
	// IsTerminal reports whether stdout is an interactive terminal.
	IsTerminal bool
	// StdinIsTerminal reports whether stdin is one (apply asks there).
	StdinIsTerminal bool
}

// OSEnv is the process's real environment.
func OSEnv() Env {
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv,
		IsTerminal: isTerminal(os.Stdout), StdinIsTerminal: isTerminal(os.Stdin)}
}

// isTerminal reports whether f is a terminal: a character device, but not
// the null device, which is one too (apply </dev/null, as CI runs it,
// asked its question, read nothing and said "apply cancelled", where it
// says to pass --auto-approve).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// globals are the flags shared by every command.
type globals struct {
	env    Env
	files  []string
	vhosts []string
	output string
	conn   connFlags
	// rabbitmqVersion is --rabbitmq-version of the offline commands.
	rabbitmqVersion string
	// hidden are the values the files loaded took from the environment
	// (topology.Topology.Env): no error, note or plan mqctl prints shows
	// them (hideEnv).
	hidden   topology.EnvValues
	hiddenMu sync.Mutex // the engine's notes come from several goroutines
}

// loaded records the values t took from the environment, which no text
// mqctl prints about it shows (hideEnv).
func (g *globals) loaded(t *topology.Topology) {
	if t != nil {
		g.hideValues(t.Env)
	}
}

// hideValues adds hs to the values no text mqctl prints shows (a saved
// plan's, topology.Topology.Env's).
func (g *globals) hideValues(hs topology.EnvValues) {
	if len(hs) > 0 {
		g.hiddenMu.Lock()
		defer g.hiddenMu.Unlock()
		// The longest first, across loads, so that a value is hidden
		// whole before a shorter one within it (topology.NewEnvValues).
		g.hidden = topology.MergeEnv(g.hidden, hs)
	}
}

// envValues are the values the files loaded took from the environment
// (hideValues), for a plan to show what the files wrote in their place
// (plan.Plan.Env).
func (g *globals) envValues() topology.EnvValues {
	g.hiddenMu.Lock()
	defer g.hiddenMu.Unlock()
	return g.hidden
}

// hideEnv is s without the values the files took from the environment
// (topology.EnvValues.Hide).
func (g *globals) hideEnv(s string) string {
	g.hiddenMu.Lock()
	hidden := g.hidden
	g.hiddenMu.Unlock()
	return hidden.Hide(s)
}

// envHiddenError is an error whose text shows none of the values the files
// took from the environment.
type envHiddenError struct {
	err  error
	hide func(string) string
}

func (e *envHiddenError) Error() string { return e.hide(e.err.Error()) }
func (e *envHiddenError) Unwrap() error { return e.err }

// hideEnvError is err showing none of the values the files took from the
// environment (the loader's errors hid them already).
func (g *globals) hideEnvError(err error) error {
	var ec *ExitCodeError
	var he *envHiddenError
	switch {
	case err == nil, errors.As(err, &he):
		return err
	case errors.As(err, &ec) && ec.Err == nil:
		return err
	case errors.As(err, new(loader.ErrorList)):
		return err
	}
	return &envHiddenError{err: err, hide: g.hideEnv}
}

// hideEnvErrors makes every command's error show none of the values the
// files took from the environment: a refusal of the plan, an error of the
// broker, made after the file was read, may quote one.
func (g *globals) hideEnvErrors(cmd *cobra.Command) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error { return g.hideEnvError(run(c, args)) }
	}
	for _, c := range cmd.Commands() {
		g.hideEnvErrors(c)
	}
}

// NewRootCmd builds the whole command tree.
func NewRootCmd(env Env) *cobra.Command {
	if env.LookupEnv == nil {
		env.LookupEnv = func(string) (string, bool) { return "", false }
	}
	g := &globals{env: env}
	root := &cobra.Command{
		Use:   "mqctl",
		Short: "Keep a RabbitMQ broker's topology as code",
		Long: `mqctl keeps a RabbitMQ broker's topology — vhosts, exchanges, queues, bindings,
policies, dead-letter wiring, delay-retry tiers and length limits — in a YAML file.

  mqctl lint      find mistakes that make messaging fail silently
  mqctl plan      show what apply would change on the live broker
  mqctl apply     make the broker match the file, without losing a message`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	pf := root.PersistentFlags()
	pf.StringArrayVarP(&g.files, "file", "f", nil, "topology file, directory of *.yaml/*.yml, or - for stdin (repeatable; default topology.yaml)")
	pf.StringSliceVar(&g.vhosts, "vhost", nil, "restrict to these vhosts (repeatable or comma-separated)")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json (diff: also markdown)")
	g.conn.register(pf)

	addVersion(root)
	root.AddCommand(
		newValidateCmd(g),
		newLintCmd(g),
		newRouteCmd(g),
		newGraphCmd(g),
		newExportCmd(g),
		newPlanCmd(g),
		newDiffCmd(g),
		newApplyCmd(g),
		newTestCmd(g),
		newStatusCmd(g),
		newDLQCmd(g),
	)
	root.SetFlagErrorFunc(flagError)
	g.hideEnvErrors(root)
	return root
}

// unknownFlag is pflag's error for a flag a command does not take.
var unknownFlag = regexp.MustCompile(`^unknown flag: --([^\s=]+)`)

// flagError adds to an unknown flag the fix: the flag of cmd it is most
// likely a misspelling of (--auto-aprove: --auto-approve), or the commands
// that take it (plan --auto-approve: apply).
func flagError(cmd *cobra.Command, err error) error {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	if near := suggest.Closest(m[1], names); near != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, near)
	}
	// Another command's flag, or a misspelling of one.
	others := map[string][]string{}
	var all []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c != cmd {
			c.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden {
					others[f.Name] = append(others[f.Name], c.CommandPath())
					all = append(all, f.Name)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd.Root())
	name := m[1]
	if others[name] == nil {
		name = suggest.Closest(name, all)
	}
	if takers := others[name]; len(takers) > 0 {
		verb := "does"
		if len(takers) > 1 {
			verb = "do"
		}
		return fmt.Errorf("%w: %s takes no --%s; %s %s", err, cmd.CommandPath(), name, strings.Join(takers, " and "), verb)
	}
	return fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
}

// Main runs mqctl with args and returns the process exit code. Errors are
// printed to env.Stderr as one "mqctl: …" line each; never a stack trace.
func Main(ctx context.Context, args []string, env Env) int {
	return run(ctx, NewRootCmd(env), args, env)
}

// run executes root with args. A panic in the command's own goroutine (a
// bug in mqctl) is an error like any other, with a line that says so and
// where its stack trace went (a file, not the terminal or a CI log).
func run(ctx context.Context, root *cobra.Command, args []string, env Env) (code int) {
	defer func() {
		if r := recover(); r != nil {
			code = ExitError
			fmt.Fprintf(env.Stderr, "mqctl: internal error: %v\n", r)
			fmt.Fprintln(env.Stderr, "mqctl: this is a bug in mqctl, not in your file or broker: please report it with the command you ran"+crashReport(r))
		}
	}()
	root.SetArgs(terraformFlags(args))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code = ExitError
	var ec *ExitCodeError
	if errors.As(err, &ec) {
		code = ec.Code
		if ec.Err == nil {
			return code
		}
	}
	printError(env.Stderr, err)
	return code
}

// crashReport writes the stack trace of panic r to a file in the
// temporary directory and returns the words that name it ("" when it
// could not be written).
func crashReport(r any) string {
	f, err := os.CreateTemp("", "mqctl-crash-*.txt")
	if err != nil {
		return ""
	}
	fmt.Fprintf(f, "mqctl %s: internal error: %v\n\n%s", Version, r, debug.Stack())
	if f.Close() != nil {
		return ""
	}
	return " and the stack trace in " + f.Name()
}

// printError prints err; a loader error list prints one line per problem.
func printError(w io.Writer, err error) {
	var list loader.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(w, e.Error())
		}
		if len(list) > 1 {
			fmt.Fprintf(w, "mqctl: %d errors\n", len(list))
		}
		return
	}
	fmt.Fprintf(w, "mqctl: %v\n", err)
}

// loadTopology loads and expands the files named by -f (default topology.yaml).
func (g *globals) loadTopology() (*topology.Topology, error) {
	return g.loadTopologyScoped(nil)
}

// loadOffline is loadTopology for a command that talks to no broker, and
// so needs no secret: a variable that is not set in a secret field (a
// password, a URI that may hold credentials) is a warning on stderr, not
// an error (loader.Options.SecretsOptional).
func (g *globals) loadOffline() (*topology.Topology, error) {
	return g.load(g.offlineOptions())
}

// offlineOptions are the options of a load for a command that talks to no
// broker (loadOffline).
func (g *globals) offlineOptions() loader.Options {
	opts := g.loaderOptions()
	opts.SecretsOptional = true
	opts.Warn = func(w *loader.Error) {
		if g.env.Stderr != nil {
			fmt.Fprintf(g.env.Stderr, "mqctl: warning: %s\n", w)
		}
	}
	return opts
}

// loaderOptions are the options of every load: the environment and stdin.
func (g *globals) loaderOptions() loader.Options {
	return loader.Options{LookupEnv: g.env.LookupEnv, Stdin: g.env.Stdin}
}

// loadTopologyScoped is loadTopology that reports to scoped, before the
// objects are built, the vhosts the result will hold (--vhost applied).
func (g *globals) loadTopologyScoped(scoped func(vhosts []string)) (*topology.Topology, error) {
	opts := g.loaderOptions()
	if scoped != nil {
		opts.Declared = func(names []string) { scoped(g.inScope(names)) }
	}
	return g.load(opts)
}

// inScope keeps of names those --vhost names (all without it), sorted.
func (g *globals) inScope(names []string) []string {
	if len(g.vhosts) > 0 {
		names = slices.DeleteFunc(names, func(n string) bool { return !slices.Contains(g.vhosts, n) })
	}
	slices.Sort(names)
	return names
}

// topologyFiles are the files named by -f (default topology.yaml).
func (g *globals) topologyFiles() []string {
	if len(g.files) == 0 {
		return []string{loader.DefaultFile}
	}
	return g.files
}

// load loads the files named by -f (default topology.yaml) with opts, and
// keeps the vhosts --vhost names.
func (g *globals) load(opts loader.Options) (*topology.Topology, error) {
	files := g.topologyFiles()
	t, err := loader.Load(files, opts)
	if err != nil {
		return nil, err
	}
	g.loaded(t)
	if err := g.vhostsDeclared(t, fmt.Sprint(files)); err != nil {
		return nil, err
	}
	g.keepVhosts(t)
	return t, nil
}

// vhostsDeclared fails for a vhost --vhost names that t, loaded from
// files (as a message names them), does not declare.
func (g *globals) vhostsDeclared(t *topology.Topology, files string) error {
	for _, v := range g.vhosts {
		if _, ok := t.Vhosts[v]; !ok {
			return fmt.Errorf("vhost %q is not declared in %s (declared: %v)", v, files, t.VhostNames())
		}
	}
	return nil
}

// keepVhosts drops from t the vhosts --vhost does not name (none without
// it).
func (g *globals) keepVhosts(t *topology.Topology) {
	if len(g.vhosts) == 0 {
		return
	}
	for name := range t.Vhosts {
		if !slices.Contains(g.vhosts, name) {
			delete(t.Vhosts, name)
		}
	}
}

// checkOutput validates -o against the formats a command supports.
func (g *globals) checkOutput(allowed ...string) error {
	for _, a := range allowed {
		if g.output == a {
			return nil
		}
	}
	return fmt.Errorf("--output %q is not supported here; use one of %v", g.output, allowed)
}

// terraformFlags accepts the single-dash long flags users know from
// terraform (-out FILE, -detailed-exitcode, -auto-approve) as their
// double-dash forms.
func terraformFlags(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, f := range []string{"-out", "-detailed-exitcode", "-auto-approve"} {
			if a == f || strings.HasPrefix(a, f+"=") {
				a = "-" + a
				break
			}
		}
		out[i] = a
	}
	return out
}
