package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

type exportFlags struct {
	from           string
	out            string
	noSugar        bool
	passwordHashes bool
}

func newExportCmd(g *globals) *cobra.Command {
	f := &exportFlags{}
	cmd := &cobra.Command{
		Use:   "export [--from definitions.json]",
		Short: "Write the live broker's topology (or a definitions JSON export) as an mqctl YAML file",
		Long: `export reads the live broker through the management API (every vhost the
user sees, or those named by --vhost) — or, with --from, a RabbitMQ definitions
file: what GET /api/definitions,
GET /api/definitions/{vhost} or rabbitmqctl export_definitions produce — and
writes its vhosts, exchanges, queues, bindings and policies as an mqctl
topology file. Dead-letter queue pairs and delay tiers are written as
dead_letter.queue and retry.delays where that reproduces them exactly, and
from a RabbitMQ 4.3 or later broker (or definitions file) a quorum queue's
delayed retry as retry.backoff (--no-sugar writes every queue plainly).

Users (with their tags, limits, permissions and topic permissions), vhost
limits, shovels and federation upstreams and sets are written too. No
secret is: a password or a URI with credentials is written as a ${VAR}
placeholder, and export lists on stderr the variables to set before the
file is applied. What it still skips (other runtime parameters, global
parameters) it says on stderr.

--vhost restricts the output to some vhosts, and its users to those with
permissions or topic permissions in them (with their permissions there, and
their limits), besides the users mqctl manages, which a plan of the export
would otherwise delete: export says on stderr which users it left out (an
export without --vhost keeps every user). For a single-vhost export, one
--vhost names the vhost its objects belong to.`,
		Example: `  mqctl export --server http://rabbit:15672 --vhost orders > topology.yaml
  mqctl export --from definitions.json > topology.yaml
  mqctl export --from definitions.json --vhost orders --out orders.yaml
  curl -su guest:guest localhost:15672/api/definitions | mqctl export --from -`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runExport(cmd, g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.from, "from", "", "definitions JSON file to read (- for stdin)")
	fl.StringVar(&f.out, "out", "", "write the YAML to this file instead of stdout")
	fl.BoolVar(&f.noSugar, "no-sugar", false, "write dead-letter queues and delay tiers as plain queues, and delayed retry as arguments")
	fl.BoolVar(&f.passwordHashes, "password-hashes", false, "write a user the broker holds by its password hash as password_hash: ${USER_PASSWORD_HASH} rather than password: ${USER_PASSWORD}, so that the export plans as no change once each variable holds the hash the broker stores, without knowing the passwords (the hash is never written)")
	return cmd
}

func runExport(cmd *cobra.Command, g *globals, f *exportFlags) error {
	if err := g.checkOutput("text"); err != nil {
		return fmt.Errorf("%w (export always writes YAML)", err)
	}
	if f.from == "" {
		return exportLive(cmd, g, f)
	}
	data, source, err := readExportSource(f.from, g.env.Stdin)
	if err != nil {
		return err
	}
	if loader.IsTopology(data) {
		// Read as JSON, it would be "not valid JSON … fix the JSON syntax".
		return fmt.Errorf("%s is an mqctl topology file, not a RabbitMQ definitions file: export --from turns a definitions export (GET /api/definitions, rabbitmqctl export_definitions) into one; use this file as it is (mqctl validate -f %s, mqctl plan -f %s)", source, source, source)
	}
	opts := definitions.ReadOptions{}
	if len(g.vhosts) == 1 {
		opts.DefaultVhost = g.vhosts[0]
	}
	t, report, err := definitions.ReadWithOptions(source, data, opts)
	if err != nil {
		var list definitions.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintf(g.env.Stderr, "mqctl: %s\n", e.Error())
			}
			if len(list) > 1 {
				fmt.Fprintf(g.env.Stderr, "mqctl: %d errors in %s\n", len(list), source)
			}
			return &ExitCodeError{Code: ExitError}
		}
		return err
	}
	if err := restrictVhosts(t, g.vhosts, source); err != nil {
		return err
	}
	if len(g.vhosts) > 0 {
		noteUsersLeftOut(g.env.Stderr, scopeUsers(t, nil), nil)
	}
	for _, line := range report.Lines() {
		fmt.Fprintf(g.env.Stderr, "mqctl: %s\n", line)
	}

	return writeExport(cmd, t, f, source, definitionsDelayedRetry(data))
}

// definitionsDelayedRetry reports whether the broker that wrote a
// definitions file has delayed retry (4.3+), by the version the file
// names; false when it names none.
func definitionsDelayedRetry(data []byte) bool {
	var doc struct {
		RabbitVersion   string `json:"rabbit_version"`
		RabbitMQVersion string `json:"rabbitmq_version"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return false
	}
	for _, s := range []string{doc.RabbitMQVersion, doc.RabbitVersion} {
		if v, err := rmqversion.Parse(s); err == nil {
			return v.DelayedRetry()
		}
	}
	return false
}

// exportLive exports the live broker (every vhost the user sees, or those
// named by --vhost); mqctl's own ownership records are left out.
func exportLive(cmd *cobra.Command, g *globals, f *exportFlags) error {
	ctx := cmd.Context()
	c, err := g.connectAPI(ctx)
	if err != nil {
		return err
	}
	have, err := c.VhostNames(ctx)
	if err != nil {
		return err
	}
	scope := g.vhosts
	if len(scope) == 0 {
		scope = have
	}
	for _, v := range g.vhosts {
		if slices.Contains(have, v) {
			continue
		}
		// Never the list of vhosts: other teams' names are theirs. A near
		// miss among those the user sees, at most (a user who is not an
		// administrator sees only those it has permissions on).
		hint := ""
		if near := suggest.Closest(v, have); near != "" {
			hint = fmt.Sprintf("; did you mean %q?", near)
		}
		if !c.IsAdmin() {
			// RabbitMQ lists such a user only the vhosts it has
			// permissions on: it cannot tell one it may not see from
			// one that does not exist (it said "does not exist").
			return fmt.Errorf("vhost %q: %s%s", v, c.UnseenVhost(v), hint)
		}
		return fmt.Errorf("vhost %q does not exist on %s%s", v, c.Server(), hint)
	}
	// The engine's read: every kind mqctl manages, its records split off.
	l, err := engine.New(c, engine.Options{}).ReadLive(ctx, scope)
	if err != nil {
		return err
	}
	t := l.State()
	// The broker's own kinds (users, their limits) are read under vhost
	// "": a user who may not read them gets an export without a users
	// section, which a plan then leaves the users alone for.
	for _, u := range l.Unread()[""] {
		fmt.Fprintf(g.env.Stderr, "mqctl: note: %s not exported: %s\n", u.Kind.Plural(), u.Reason)
	}
	for _, vh := range t.VhostNames() {
		for _, u := range l.Unread()[vh] {
			fmt.Fprintf(g.env.Stderr, "mqctl: note: %s of vhost %q not exported: %s\n", u.Kind.Plural(), vh, u.Reason)
		}
		// The read leaves clients' exclusive queues out, with their
		// bindings: say which, so that the file's silence is explained.
		if names, err := c.ExclusiveQueueNames(ctx, vh); err == nil && len(names) > 0 {
			n := len(names)
			q := make([]string, 0, 5)
			for _, name := range names[:min(n, 4)] {
				q = append(q, strconv.Quote(name))
			}
			if n > 4 {
				q = append(q, fmt.Sprintf("and %d more", n-4))
			}
			fmt.Fprintf(g.env.Stderr, "mqctl: note: vhost %q: %d exclusive %s not exported, nor %s bindings: %s (a client connection's own, which only it may declare or bind, and which goes with it)\n",
				vh, n, pluralize("queue", n), map[bool]string{true: "its", false: "their"}[n == 1], strings.Join(q, ", "))
		}
	}
	if len(g.vhosts) > 0 {
		managed := l.ManagedUsers()
		left := scopeUsers(t, managed)
		noteUsersLeftOut(g.env.Stderr, left, keptManaged(t, managed))
	}
	return writeExport(cmd, t, f, c.Server(), c.RabbitMQVersion().DelayedRetry())
}

// writeExport writes t; delayedRetry says its broker has delayed retry, so
// that quorum queues' delayed retry may be written as retry.backoff.
func writeExport(cmd *cobra.Command, t *topology.Topology, f *exportFlags, source string, delayedRetry bool) error {
	var buf bytes.Buffer
	opts := export.Options{Sugar: !f.noSugar, Source: source, DelayedRetry: delayedRetry, PasswordHashes: f.passwordHashes}
	if err := export.WriteYAML(&buf, t, opts); err != nil {
		return err
	}
	noteAutoDelete(cmd.ErrOrStderr(), t)
	if vars := export.VariablesFor(t, opts); len(vars) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "mqctl: note: the export holds no secret; set these variables before applying it:\n")
		for _, v := range vars {
			fmt.Fprintf(cmd.ErrOrStderr(), "  %s: %s\n", v.Name, v.What)
		}
	}
	if f.out == "" {
		_, err := cmd.OutOrStdout().Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(f.out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the topology: %w", err)
	}
	return nil
}

// noteAutoDelete says which queues of t are auto-delete, per vhost: most
// are a client's own (a reply or a subscription queue it declares when it
// connects), which the broker deletes when its last consumer goes. The
// export writes them, as it writes what the broker holds, but a file that
// keeps one has plan declare it again once it is gone, where it gathers
// the messages its bindings match with no consumer until one comes and
// goes: the note says so, and to leave a client's queue out.
func noteAutoDelete(w io.Writer, t *topology.Topology) {
	for _, vh := range t.VhostNames() {
		v := t.Vhosts[vh]
		var names []string
		for _, n := range slices.Sorted(maps.Keys(v.Queues)) {
			if q := v.Queues[n]; q != nil && q.AutoDelete {
				names = append(names, strconv.Quote(n))
			}
		}
		n := len(names)
		if n == 0 {
			continue
		}
		if n > 5 {
			names = append(names[:4:4], fmt.Sprintf("and %d more", len(names)-4))
		}
		fmt.Fprintf(w, "mqctl: note: vhost %q: exported auto-delete %s %s: the broker deletes such a queue when its last consumer goes, and a plan of the export then declares it again, where it gathers the messages its bindings match until a consumer comes and goes; if a client declares it (its own reply or subscription queue), leave it out of the file\n",
			vh, pluralize("queue", n), strings.Join(names, ", "))
	}
}

// scopeUsers leaves out of t, an export of some vhosts (--vhost), the
// users that have neither permissions nor topic permissions in them, and
// their limits: a plan of the export would need every user's password,
// and its apply would adopt them all (other teams' users, guest). A user
// of keep stays: mqctl's record lists it as managed, and a plan of a file
// with a users section that leaves it out would delete it. It returns the
// users left out, sorted.
func scopeUsers(t *topology.Topology, keep map[string]bool) []string {
	access := usersWithAccess(t)
	var left []string
	for _, name := range t.Items.Names(kind.User) {
		if access[name] || keep[name] {
			continue
		}
		left = append(left, name)
		t.Items.Delete(kind.User, name)
		t.Items.Delete(kind.UserLimits, name)
	}
	return left
}

// usersWithAccess are the users with permissions or topic permissions
// in t's vhosts.
func usersWithAccess(t *topology.Topology) map[string]bool {
	access := map[string]bool{}
	for _, v := range t.Vhosts {
		for _, k := range []kind.Kind{kind.Permission, kind.TopicPermission} {
			for _, name := range v.Items.Names(k) {
				access[name] = true
			}
		}
	}
	return access
}

// keptManaged are the users of t that scopeUsers kept only because
// mqctl manages them.
func keptManaged(t *topology.Topology, managed map[string]bool) []string {
	access := usersWithAccess(t)
	var kept []string
	for _, name := range t.Items.Names(kind.User) {
		if managed[name] && !access[name] {
			kept = append(kept, name)
		}
	}
	return kept
}

// noteUsersLeftOut says on w which users an export of some vhosts left
// out, and which it kept without access there.
func noteUsersLeftOut(w io.Writer, left, kept []string) {
	if len(left) > 0 {
		noun := "users have"
		if len(left) == 1 {
			noun = "user has"
		}
		fmt.Fprintf(w, "mqctl: note: %d %s no permissions or topic permissions in the exported vhosts and %s left out (with their limits): %s. Export without --vhost to include every user of the broker\n",
			len(left), noun, map[bool]string{true: "is", false: "are"}[len(left) == 1], quotedList(left))
	}
	if len(kept) > 0 {
		fmt.Fprintf(w, "mqctl: note: kept, without permissions in the exported vhosts, as mqctl manages them (a plan of the export would otherwise delete them): %s\n", quotedList(kept))
	}
}

// quotedList is names quoted, comma-separated.
func quotedList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(parts, ", ")
}

// readExportSource reads the definitions file (or stdin for "-") and says
// how to name it in messages and in the output's header.
func readExportSource(path string, stdin io.Reader) ([]byte, string, error) {
	if path == "-" {
		if stdin == nil {
			return nil, "", errors.New("--from -: no standard input to read")
		}
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, "", fmt.Errorf("reading definitions from stdin: %w", err)
		}
		return data, "stdin", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("definitions file %s does not exist; export one with: curl -u USER:PASS http://HOST:15672/api/definitions > definitions.json", path)
		}
		return nil, "", fmt.Errorf("reading definitions file: %w", err)
	}
	return data, filepath.ToSlash(path), nil
}

// restrictVhosts keeps only the vhosts named by --vhost.
func restrictVhosts(t *topology.Topology, vhosts []string, source string) error {
	if len(vhosts) == 0 {
		return nil
	}
	keep := map[string]bool{}
	for _, v := range vhosts {
		if _, ok := t.Vhosts[v]; !ok {
			return fmt.Errorf("vhost %q is not in %s (it has: %v)", v, source, t.VhostNames())
		}
		keep[v] = true
	}
	for name := range t.Vhosts {
		if !keep[name] {
			delete(t.Vhosts, name)
		}
	}
	return nil
}
