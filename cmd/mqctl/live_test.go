package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mqctl/mqctl/internal/brokerstate"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestLiveScripts runs the CLI scenarios of testdata/live against the
// broker of scripts/broker (testbroker.New: MQCTL_TEST_SERVER, …; without
// one it skips, and fails in CI). Each script gets a fresh vhost of its
// own, $VHOST, deleted when it ends, and the environment that points mqctl
// at the broker as its administrator (MQCTL_SERVER, MQCTL_USERNAME,
// MQCTL_PASSWORD, MQCTL_AMQP_URL), NO_COLOR=1 and $REPO.
//
// Conditions name the broker's version, so that a script states each
// version's answer where they differ: [rabbitmq:4.3] (its line),
// [rabbitmq>=4.0].
//
// Commands besides testscript's own:
//
//	rmq get PATH          GET /api/PATH as the administrator: the answer as JSON,
//	                      keys sorted; a list one element a line, lists of objects
//	                      sorted. ! rmq get: the answer is not 200 (its status is printed).
//	rmq put PATH [JSON]   PUT /api/PATH (JSON: default {}); a vhost or user made so
//	                      is deleted when the script ends.
//	rmq delete PATH       DELETE /api/PATH.
//	                      ! rmq put, ! rmq delete: the broker refuses it (its status
//	                      and its words are printed).
//	rmq users             the script's files have a users section: it waits for
//	                      every other test with one on this broker
//	                      (testbroker.Broker.UsersSection) and deletes the users
//	                      named after $VHOST when it ends.
//	rmq gone FILE REGEXP  FILE (or stdout, stderr) names a vhost, REGEXP's first
//	                      group, and the broker no longer has it (a throwaway
//	                      vhost a command made and deleted).
//	rmq publish [-id ID] [-expiration MS] EXCHANGE KEY BODY [N]
//	                      publish the message (N times: default 1; with message id
//	                      ID; with per-message TTL MS) to $VHOST over AMQP on one
//	                      channel, each confirmed before the next.
//	rmq reject QUEUE N    get N messages from QUEUE of $VHOST and reject each
//	                      without requeueing it: dead-lettered, as a consumer's
//	                      rejection does in production.
//	rmq requeue QUEUE N   get N messages from QUEUE of $VHOST and reject each with
//	                      requeue: a failed delivery, which a 4.3 quorum queue with
//	                      delayed retry holds back.
//	rmq wait QUEUE N      wait (at most 30 s) until QUEUE of $VHOST holds N ready
//	                      messages (a passive declare).
//	rmq stats QUEUE=N...  wait (at most 15 s) until the management API's statistics,
//	                      which lag, count N messages in each QUEUE of $VHOST: what
//	                      status reads then is settled. QUEUE:FIELD=N waits for
//	                      the queue's FIELD (messages_delayed, …) instead.
//	rmq drain [-expiration] QUEUE
//	                      take every message from QUEUE of $VHOST (acknowledged)
//	                      and print each one's message id, a line each, in order;
//	                      with -expiration, followed by its expiration property
//	                      ("-" when it has none).
//	rmq purge QUEUE       purge QUEUE of $VHOST.
//	rmq consume QUEUE...  a consumer on each QUEUE of $VHOST (prefetch 10, no acks),
//	                      connected until the script ends; returns once the broker
//	                      reports each (3.10 tells a stream's only in its statistics).
//	rmq depth QUEUE       the number of ready messages in QUEUE of $VHOST (a passive
//	                      declare: exact, where the management API's statistics lag).
//	rmq declare FILE      declare the objects of FILE's vhost $VHOST straight through
//	                      the management API, as someone else would: mqctl does not
//	                      record them (testbroker.Declare).
//	rmq holds FILE [UNMANAGED]
//	                      $VHOST holds exactly the objects of FILE's vhost $VHOST,
//	                      plus those of UNMANAGED's, which mqctl does not manage, and
//	                      mqctl's record lists exactly FILE's objects.
//	rmq managed           the objects mqctl's record of $VHOST lists, one a line:
//	                      kind, name and the print of the object mqctl wrote.
//	rmq state             $VHOST as a script compares it before and after a command
//	                      (cp stdout, then cmp): its definitions, its operator
//	                      policies (not among them) and rmq managed.
//	rmq vhost VAR         a second vhost of the script's own (testbroker.Vhost:
//	                      the administrator has every permission on it), its
//	                      name in $VAR, deleted when the script ends.
//	rmq user VAR [TAG...] a user of the script's own with TAGs and a password of
//	                      its own, deleted when the script ends: its name in $VAR
//	                      (mqctl-test-<var>-<script>-<random>, so that such users
//	                      sort by VAR and their names hold no vhost's), its password
//	                      in $VAR_PASSWORD and in the variable an export names for
//	                      it (kind.PasswordVariable), which a plan of the export
//	                      then finds.
//	rmq pwvar USER VAR    $VAR names the variable an export writes for USER's
//	                      password (kind.PasswordVariable): env $VAR=... sets it.
//	rmq hash USER VAR     $VAR holds the password hash the broker stores for USER,
//	                      for ! stdout ${VAR@R}.
//	rmq exclusive QUEUE EXCHANGE KEY
//	                      a client's exclusive queue QUEUE in $VHOST, bound to
//	                      EXCHANGE with KEY, on a connection of the script's own,
//	                      open until rmq disconnect or the script ends.
//	rmq disconnect        closes that connection, and waits (at most 10 s) until
//	                      the broker deleted the queue, as it does a moment later.
//	rmq applysaved FILE PLAN
//	                      mqctl plan -f FILE --out PLAN, then mqctl apply PLAN
//	                      --auto-approve, both again (up to 10 times, a moment
//	                      apart) while apply refuses the saved plan as stale: the
//	                      saved plan of a file with a users section is stale once
//	                      any user on the broker changed, and the tests beside the
//	                      script make and delete theirs. Fails unless the last
//	                      apply succeeds; stdout and stderr are those of every
//	                      plan and apply it ran, in order, so that ! stdout
//	                      checks them all.
//	redact FILE           prints FILE (or stdout, stderr) with $VHOST, $WORK and
//	                      $MQCTL_SERVER for the script's vhost, work directory and
//	                      the broker's management API, $VAR for the name of each
//	                      vhost and user rmq vhost VAR and rmq user VAR made (and
//	                      VAR for a user's name spelled as in an environment
//	                      variable, kind.VariableName: an export's ${VAR_PASSWORD}),
//	                      $MS for the durations of apply -o json's steps and $PREFLIGHT_VHOST
//	                      for the name of a preflight's throwaway vhost, for cmp;
//	                      without the notes of a sweep of other tests' leftovers
//	                      (othersLeftovers).
//
// exits N mqctl ARGS... (main_test.go) checks mqctl's exit code N.
//
// With -update, a cmp against a file of the script rewrites that file.
func TestLiveScripts(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	c, err := broker.Connect(context.Background(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatalf("connect to the test broker: %v", err)
	}
	version := b.Version()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/live",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			tb, ok := e.T().(testing.TB)
			if !ok {
				return fmt.Errorf("testscript's T is not a testing.TB")
			}
			vhost := b.Vhost(tb)
			e.Values[liveKey{}] = &live{b: b, c: c, tb: tb, vhost: vhost}
			e.Setenv("VHOST", vhost)
			e.Setenv("MQCTL_SERVER", b.URL)
			e.Setenv("MQCTL_USERNAME", b.Username)
			e.Setenv("MQCTL_PASSWORD", b.Password)
			e.Setenv("MQCTL_AMQP_URL", strings.TrimSuffix(b.AMQPURL(""), "/"))
			e.Setenv("AMQP_PORT", strconv.Itoa(b.AMQPPort))
			e.Setenv("NO_COLOR", "1")
			e.Setenv("REPO", repo)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			return versionCondition(version, cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"rmq":    cmdRmq,
			"redact": cmdRedact,
		},
	})
}

var versionCond = regexp.MustCompile(`^rabbitmq(:|>=)(\d+)\.(\d+)$`)

// versionCondition answers [rabbitmq:X.Y] (the broker's line is X.Y) and
// [rabbitmq>=X.Y].
func versionCondition(v rmqversion.Version, cond string) (bool, error) {
	m := versionCond.FindStringSubmatch(cond)
	if m == nil {
		return false, fmt.Errorf("unknown condition %q (the broker's are rabbitmq:X.Y and rabbitmq>=X.Y)", cond)
	}
	if m[1] == ":" {
		return v.Line() == m[2]+"."+m[3], nil
	}
	major, _ := strconv.Atoi(m[2]) // digits, by the pattern
	minor, _ := strconv.Atoi(m[3])
	return v.AtLeast(major, minor), nil
}

type liveKey struct{}

// live is what the commands of one script use.
type live struct {
	b     *testbroker.Broker
	c     *broker.Client
	tb    testing.TB
	vhost string
	// made are the names of the vhosts and users rmq vhost and rmq user
	// made, and what redact writes for each.
	made []madeName
	// client is the connection of rmq exclusive, and exclusive its queue.
	client    *amqp.Connection
	exclusive string
}

type madeName struct{ name, as string }

func liveOf(ts *testscript.TestScript) *live { return ts.Value(liveKey{}).(*live) }

func cmdRmq(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: rmq get|put|delete|users|gone|publish|reject|requeue|wait|stats|drain|purge|consume|depth|declare|holds|managed|state|vhost|user|pwvar|hash|exclusive|disconnect|applysaved ...")
	}
	l := liveOf(ts)
	switch verb, args := args[0], args[1:]; verb {
	case "get":
		if len(args) != 1 {
			ts.Fatalf("usage: rmq get PATH")
		}
		status, body, err := l.b.API(http.MethodGet, args[0], nil)
		ts.Check(err)
		if status != http.StatusOK {
			if !neg {
				ts.Fatalf("GET /api/%s: %d %s: %s", args[0], status, http.StatusText(status), body)
			}
			fmt.Fprintf(ts.Stdout(), "%d %s\n", status, http.StatusText(status))
			return
		}
		if neg {
			ts.Fatalf("GET /api/%s: 200, want another answer", args[0])
		}
		out, err := canonicalJSON(body)
		if err != nil {
			ts.Fatalf("GET /api/%s: %v", args[0], err)
		}
		ts.Stdout().Write(out)
	case "gone":
		noNeg(ts, neg, "rmq gone")
		if len(args) != 2 {
			ts.Fatalf("usage: rmq gone FILE REGEXP")
		}
		re, err := regexp.Compile(args[1])
		ts.Check(err)
		m := re.FindStringSubmatch(ts.ReadFile(args[0]))
		if len(m) < 2 || m[1] == "" {
			ts.Fatalf("%s names no vhost matching %s", args[0], args[1])
		}
		status, body, err := l.b.API(http.MethodGet, "vhosts/"+url.PathEscape(m[1]), nil)
		ts.Check(err)
		if status != http.StatusNotFound {
			ts.Fatalf("vhost %s is still on the broker (GET: %d %s)", m[1], status, body)
		}
	case "put", "delete":
		method, body := http.MethodDelete, []byte(nil)
		if verb == "put" {
			if len(args) < 1 || len(args) > 2 {
				ts.Fatalf("usage: rmq put PATH [JSON]")
			}
			method, body = http.MethodPut, []byte("{}")
			if len(args) == 2 {
				body = []byte(args[1])
			}
		} else if len(args) != 1 {
			ts.Fatalf("usage: rmq delete PATH")
		}
		status, answer, err := l.b.API(method, args[0], body)
		ts.Check(err)
		if refused(ts, neg, method, args[0], status, answer) {
			return
		}
		if verb == "put" {
			l.deleteAtEnd(ts, args[0], status)
		}
	case "publish":
		// ! rmq publish: the broker must not confirm the publish (a
		// basic.nack), as a queue that refuses every message answers.
		id, expiration := "", ""
		for len(args) > 2 && (args[0] == "-id" || args[0] == "-expiration") {
			if args[0] == "-id" {
				id = args[1]
			} else {
				expiration = args[1]
			}
			args = args[2:]
		}
		n := 1
		if len(args) == 4 {
			var err error
			n, err = strconv.Atoi(args[3])
			ts.Check(err)
		} else if len(args) != 3 {
			ts.Fatalf("usage: rmq publish [-id ID] [-expiration MS] EXCHANGE KEY BODY [N]")
		}
		err := l.publish(args[0], args[1], amqp.Publishing{MessageId: id, Expiration: expiration, Body: []byte(args[2])}, n)
		switch {
		case neg && err == nil:
			ts.Fatalf("publish to exchange %q with key %q confirmed, want a basic.nack", args[0], args[1])
		case neg:
			fmt.Fprintln(ts.Stdout(), err)
		default:
			ts.Check(err)
		}
	case "reject", "requeue", "wait":
		noNeg(ts, neg, "rmq "+verb)
		if len(args) != 2 {
			ts.Fatalf("usage: rmq %s QUEUE N", verb)
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		if verb == "wait" {
			ts.Check(l.wait(args[0], n))
		} else {
			ts.Check(l.reject(args[0], n, verb == "requeue"))
		}
	case "stats":
		noNeg(ts, neg, "rmq stats")
		if len(args) == 0 {
			ts.Fatalf("usage: rmq stats QUEUE=N...")
		}
		ts.Check(l.stats(args))
	case "drain", "purge":
		noNeg(ts, neg, "rmq "+verb)
		withExpiration := verb == "drain" && len(args) == 2 && args[0] == "-expiration"
		if withExpiration {
			args = args[1:]
		}
		if len(args) != 1 {
			ts.Fatalf("usage: rmq drain [-expiration] QUEUE, rmq purge QUEUE")
		}
		msgs, err := l.drain(args[0], verb == "purge")
		ts.Check(err)
		out := ts.Stdout() // empty, not the last command's, when there are none
		for _, d := range msgs {
			switch {
			case !withExpiration:
				fmt.Fprintln(out, d.MessageId)
			case d.Expiration == "":
				fmt.Fprintln(out, d.MessageId, "-")
			default:
				fmt.Fprintln(out, d.MessageId, d.Expiration)
			}
		}
	case "consume":
		noNeg(ts, neg, "rmq consume")
		if len(args) == 0 {
			ts.Fatalf("usage: rmq consume QUEUE...")
		}
		ts.Check(l.consume(args))
	case "depth":
		noNeg(ts, neg, "rmq depth")
		if len(args) != 1 {
			ts.Fatalf("usage: rmq depth QUEUE")
		}
		n, err := l.depth(args[0])
		ts.Check(err)
		fmt.Fprintln(ts.Stdout(), n)
	case "declare":
		noNeg(ts, neg, "rmq declare")
		if len(args) != 1 {
			ts.Fatalf("usage: rmq declare FILE")
		}
		ts.Check(testbroker.DeclareAll(context.Background(), l.c, l.vhost, l.loadVhost(ts, args[0])))
	case "holds":
		noNeg(ts, neg, "rmq holds")
		if len(args) < 1 || len(args) > 2 {
			ts.Fatalf("usage: rmq holds FILE [UNMANAGED]")
		}
		want := l.loadVhost(ts, args[0])
		var unmanaged *topology.Vhost
		if len(args) == 2 {
			unmanaged = l.loadVhost(ts, args[1])
		}
		ts.Check(brokerstate.Holds(context.Background(), l.c, l.vhost, want, unmanaged))
	case "managed":
		noNeg(ts, neg, "rmq managed")
		fmt.Fprint(ts.Stdout(), l.managed(ts))
	case "users":
		noNeg(ts, neg, "rmq users")
		l.b.UsersSection(l.tb)
		l.tb.Cleanup(l.deleteUsers)
	case "vhost":
		noNeg(ts, neg, "rmq vhost")
		if len(args) != 1 {
			ts.Fatalf("usage: rmq vhost VAR")
		}
		name := l.b.Vhost(l.tb)
		ts.Setenv(args[0], name)
		l.made = append(l.made, madeName{name, "$" + args[0]})
	case "user":
		noNeg(ts, neg, "rmq user")
		if len(args) < 1 {
			ts.Fatalf("usage: rmq user VAR [TAG...]")
		}
		name, password := l.user(ts, args[0], args[1:])
		ts.Setenv(args[0], name)
		ts.Setenv(args[0]+"_PASSWORD", password)
		ts.Setenv(kind.PasswordVariable(name), password)
		l.made = append(l.made, madeName{name, "$" + args[0]}, madeName{kind.VariableName(name), args[0]})
	case "pwvar":
		noNeg(ts, neg, "rmq pwvar")
		if len(args) != 2 {
			ts.Fatalf("usage: rmq pwvar USER VAR")
		}
		ts.Setenv(args[1], kind.PasswordVariable(args[0]))
	case "hash":
		noNeg(ts, neg, "rmq hash")
		if len(args) != 2 {
			ts.Fatalf("usage: rmq hash USER VAR")
		}
		ts.Setenv(args[1], l.passwordHash(ts, args[0]))
	case "exclusive":
		noNeg(ts, neg, "rmq exclusive")
		if len(args) != 3 {
			ts.Fatalf("usage: rmq exclusive QUEUE EXCHANGE KEY")
		}
		ts.Check(l.declareExclusive(args[0], args[1], args[2]))
	case "disconnect":
		noNeg(ts, neg, "rmq disconnect")
		if len(args) != 0 || l.client == nil {
			ts.Fatalf("usage: rmq disconnect, after rmq exclusive")
		}
		ts.Check(l.disconnect())
	case "applysaved":
		noNeg(ts, neg, "rmq applysaved")
		if len(args) != 2 {
			ts.Fatalf("usage: rmq applysaved FILE PLAN")
		}
		applySaved(ts, args[0], args[1])
	case "state":
		noNeg(ts, neg, "rmq state")
		for _, path := range []string{"definitions/" + l.vhost, "operator-policies/" + l.vhost} {
			status, body, err := l.b.API(http.MethodGet, path, nil)
			ts.Check(err)
			if status != http.StatusOK {
				ts.Fatalf("GET /api/%s: %d %s: %s", path, status, http.StatusText(status), body)
			}
			out, err := canonicalJSON(body)
			if err != nil {
				ts.Fatalf("GET /api/%s: %v", path, err)
			}
			fmt.Fprintf(ts.Stdout(), "# %s\n%s", path, out)
		}
		fmt.Fprintf(ts.Stdout(), "# managed\n%s", l.managed(ts))
	default:
		ts.Fatalf("unknown rmq command %q (get, put, delete, users, gone, publish, reject, requeue, wait, stats, drain, purge, consume, depth, declare, holds, managed, state, vhost, user, pwvar, hash, exclusive, disconnect, applysaved)", verb)
	}
}

// user makes a user of the script's own, named after varName, with tags
// and a password of its own, deleted when the script ends.
func (l *live) user(ts *testscript.TestScript, varName string, tags []string) (name, password string) {
	name = testbroker.Name(l.tb, "mqctl-test-"+strings.ToLower(varName))
	password = fmt.Sprintf("pw-%016x", rand.Uint64())
	body, err := json.Marshal(map[string]string{"password": password, "tags": strings.Join(tags, ",")})
	ts.Check(err)
	path := "users/" + url.PathEscape(name)
	status, answer, err := l.b.API(http.MethodPut, path, body)
	ts.Check(err)
	refused(ts, false, http.MethodPut, path, status, answer)
	l.tb.Cleanup(func() {
		if err := l.b.DeleteUser(name); err != nil {
			l.tb.Errorf("delete the script's user: %v", err)
		}
	})
	return name, password
}

// passwordHash is the password hash the broker stores for user.
func (l *live) passwordHash(ts *testscript.TestScript, user string) string {
	status, body, err := l.b.API(http.MethodGet, "users/"+url.PathEscape(user), nil)
	ts.Check(err)
	if status != http.StatusOK {
		ts.Fatalf("GET /api/users/%s: %d %s: %s", user, status, http.StatusText(status), body)
	}
	var u struct {
		Hash string `json:"password_hash"`
	}
	ts.Check(json.Unmarshal(body, &u))
	if u.Hash == "" {
		ts.Fatalf("the broker reports no password hash for user %s", user)
	}
	return u.Hash
}

// applySaved is rmq applysaved: a saved plan of file, applied, made
// again while the apply finds it stale.
func applySaved(ts *testscript.TestScript, file, plan string) {
	var stdout, stderr strings.Builder
	defer func() {
		fmt.Fprint(ts.Stdout(), stdout.String())
		fmt.Fprint(ts.Stderr(), stderr.String())
	}()
	run := func(args ...string) error {
		err := ts.Exec("mqctl", args...)
		stdout.WriteString(ts.ReadFile("stdout"))
		stderr.WriteString(ts.ReadFile("stderr"))
		return err
	}
	for try := 1; ; try++ {
		if try > 1 {
			time.Sleep(time.Duration(try) * 100 * time.Millisecond)
		}
		if err := run("plan", "-f", file, "--out", plan); err != nil {
			ts.Fatalf("mqctl plan -f %s --out %s: %v", file, plan, err)
		}
		err := run("apply", plan, "--auto-approve")
		if err != nil && strings.Contains(ts.ReadFile("stderr"), "saved plan is stale") && try < 10 {
			continue
		}
		if err != nil {
			ts.Fatalf("mqctl apply %s --auto-approve (try %d): %v", plan, try, err)
		}
		return
	}
}

// managed renders mqctl's record of the script's vhost: a line per
// object, sorted.
func (l *live) managed(ts *testscript.TestScript) string {
	_, rec, err := brokerstate.Read(context.Background(), l.c, l.vhost)
	ts.Check(err)
	var lines []string
	if rec != nil {
		for ref, p := range rec.Managed {
			lines = append(lines, fmt.Sprintf("%s %s %08x\n", ref.Kind, ref.Name, uint32(p)))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

func noNeg(ts *testscript.TestScript, neg bool, what string) {
	if neg {
		ts.Fatalf("unsupported: ! %s", what)
	}
}

// deleteAtEnd deletes a vhost or user the script made (201 Created) when
// the script ends.
// refused checks the answer of a PUT or DELETE: a refusal (not 2xx) when
// the command is negated, printed (its status and the broker's words),
// else a success.
func refused(ts *testscript.TestScript, neg bool, method, path string, status int, answer []byte) bool {
	ok := status/100 == 2
	switch {
	case !ok && !neg:
		ts.Fatalf("%s /api/%s: %d %s: %s", method, path, status, http.StatusText(status), answer)
	case ok && neg:
		ts.Fatalf("%s /api/%s: %d %s, want a refusal", method, path, status, http.StatusText(status))
	case !ok:
		fmt.Fprintf(ts.Stdout(), "%d %s: %s\n", status, http.StatusText(status), answer)
	}
	return !ok
}

func (l *live) deleteAtEnd(ts *testscript.TestScript, path string, status int) {
	parts := strings.Split(path, "/")
	if status != http.StatusCreated || len(parts) != 2 || (parts[0] != "vhosts" && parts[0] != "users") {
		return
	}
	l.tb.Cleanup(func() {
		status, answer, err := l.b.API(http.MethodDelete, path, nil)
		if err == nil && status/100 != 2 && status != http.StatusNotFound {
			err = fmt.Errorf("%d %s: %s", status, http.StatusText(status), answer)
		}
		if err != nil {
			l.tb.Errorf("delete /api/%s the script made: %v", path, err)
		}
	})
}

// loadVhost loads a topology file of the script as mqctl does, with the
// script's environment, and returns its vhost $VHOST (empty if it names
// none).
func (l *live) loadVhost(ts *testscript.TestScript, file string) *topology.Vhost {
	data, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	top, err := loader.LoadBytes(file, data, loader.Options{LookupEnv: func(k string) (string, bool) {
		v := ts.Getenv(k)
		return v, v != ""
	}})
	ts.Check(err)
	if v := top.Vhosts[l.vhost]; v != nil {
		return v
	}
	return topology.NewVhost(l.vhost)
}

// publish publishes body n times to exchange with key in the script's
// vhost, waiting for the broker's confirm of each.
func (l *live) publish(exchange, key string, msg amqp.Publishing, n int) error {
	ch, done, err := l.channel()
	if err != nil {
		return err
	}
	defer done()
	if err := ch.Confirm(false); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range n {
		conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, msg)
		if err != nil {
			return err
		}
		if ok, err := conf.WaitContext(ctx); err != nil || !ok {
			return fmt.Errorf("publish to exchange %q with key %q not confirmed: %v", exchange, key, err)
		}
	}
	return nil
}

// consume starts a consumer on each of queues in the script's vhost, on
// one channel whose connection closes when the script ends, and waits
// until the broker reports each.
func (l *live) consume(queues []string) error {
	ch, done, err := l.channel()
	if err != nil {
		return err
	}
	l.tb.Cleanup(done)
	if err := ch.Qos(10, 0, false); err != nil { // streams want a prefetch
		return err
	}
	for _, q := range queues {
		if _, err := ch.Consume(q, "test-consumer-"+q, false, false, false, false, amqp.Table{}); err != nil {
			return fmt.Errorf("consume from %s: %w", q, err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, q := range queues {
		for {
			st, err := l.c.QueueStatsNow(context.Background(), l.vhost, q)
			if err != nil {
				return err
			}
			if st.Consumers > 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the broker reports no consumer on %s after 15 s", q)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// channel opens an AMQP channel on the script's vhost, and its
// connection's closer.
func (l *live) channel() (*amqp.Channel, func(), error) {
	conn, err := amqp.Dial(l.b.AMQPURL(l.vhost))
	if err != nil {
		return nil, nil, fmt.Errorf("AMQP dial: %s", broker.MaskURL(err.Error()))
	}
	ch, err := conn.Channel()
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return ch, func() { conn.Close() }, nil
}

// reject gets n messages from queue and rejects each without requeueing.
func (l *live) reject(queue string, n int, requeue bool) error {
	ch, done, err := l.channel()
	if err != nil {
		return err
	}
	defer done()
	for i := range n {
		d, ok, err := ch.Get(queue, false)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s holds %d messages, want %d to reject", queue, i, n)
		}
		if err := d.Reject(requeue); err != nil {
			return err
		}
	}
	return nil
}

// declareExclusive declares the exclusive queue of rmq exclusive on a
// connection of the script's own (closed when the script ends).
func (l *live) declareExclusive(queue, exchange, key string) error {
	if l.client != nil {
		return fmt.Errorf("rmq exclusive: the script has one already")
	}
	conn, err := amqp.Dial(l.b.AMQPURL(l.vhost))
	if err != nil {
		return fmt.Errorf("AMQP dial: %s", broker.MaskURL(err.Error()))
	}
	l.client, l.exclusive = conn, queue
	l.tb.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(queue, false, false, true, false, nil); err != nil {
		return err
	}
	return ch.QueueBind(queue, key, exchange, false, nil)
}

// disconnect closes the connection of rmq exclusive and waits until the
// broker deleted its queue.
func (l *live) disconnect() error {
	if err := l.client.Close(); err != nil {
		return err
	}
	path := "queues/" + url.PathEscape(l.vhost) + "/" + url.PathEscape(l.exclusive)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status, _, err := l.b.API(http.MethodGet, path, nil)
		if err != nil || status == http.StatusNotFound {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still there 10 s after its connection closed", l.exclusive)
		}
	}
}

// wait waits until queue holds n ready messages.
func (l *live) wait(queue string, n int) error {
	// 30 s: long enough for a message TTL of 20 s, which a script on a
	// loaded machine needs to act within it (apply_ttl_policy_removed).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got, err := l.depth(queue)
		if err != nil || got == n {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s holds %d messages after 30 s, want %d", queue, got, n)
		}
	}
}

// stats waits until the management API counts, for each QUEUE=N of want,
// N messages in QUEUE.
func (l *live) stats(want []string) error {
	deadline := time.Now().Add(15 * time.Second)
	for _, w := range want {
		queue, n, ok := strings.Cut(w, "=")
		if !ok {
			return fmt.Errorf("%q: want QUEUE=N or QUEUE:FIELD=N", w)
		}
		field := "messages"
		if q, f, ok := strings.Cut(queue, ":"); ok {
			queue, field = q, f
		}
		for path := "queues/" + url.PathEscape(l.vhost) + "/" + url.PathEscape(queue); ; time.Sleep(100 * time.Millisecond) {
			status, body, err := l.b.API(http.MethodGet, path, nil)
			if err != nil {
				return err
			}
			var q map[string]json.RawMessage
			if status == http.StatusOK {
				if err := json.Unmarshal(body, &q); err != nil {
					return fmt.Errorf("GET /api/%s: %w", path, err)
				}
				if string(q[field]) == n {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the statistics of %s never counted %s %s in 15 s (GET: %d %s)", queue, n, field, status, body)
			}
		}
	}
	return nil
}

// drain takes every message from queue and returns them; with purge, it
// purges the queue instead.
func (l *live) drain(queue string, purge bool) ([]amqp.Delivery, error) {
	ch, done, err := l.channel()
	if err != nil {
		return nil, err
	}
	defer done()
	if purge {
		_, err := ch.QueuePurge(queue, false)
		return nil, err
	}
	var msgs []amqp.Delivery
	for {
		d, ok, err := ch.Get(queue, true)
		if err != nil || !ok {
			return msgs, err
		}
		msgs = append(msgs, d)
	}
}

// depth returns the number of ready messages in queue of the script's
// vhost.
func (l *live) depth(queue string) (int, error) {
	ch, done, err := l.channel()
	if err != nil {
		return 0, err
	}
	defer done()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		return 0, fmt.Errorf("inspect queue %q: %v", queue, err)
	}
	return q.Messages, nil
}

// canonicalJSON renders a management API answer for scripts to check:
// keys sorted, numbers as the broker wrote them, no HTML escaping; a list
// one element a line (compact), anything else indented; a list of objects
// (queues, bindings, …: an order the broker does not promise) sorted.
func canonicalJSON(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %v", err)
	}
	v = sortObjectLists(v)
	var out bytes.Buffer
	if list, ok := v.([]any); ok {
		for _, e := range list {
			out.Write(encodeJSON(e, ""))
		}
		return out.Bytes(), nil
	}
	return encodeJSON(v, "  "), nil
}

func encodeJSON(v any, indent string) []byte {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		panic(err) // decoded JSON always encodes
	}
	return out.Bytes()
}

func sortObjectLists(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = sortObjectLists(e)
		}
	case []any:
		objects := true
		for i, e := range x {
			x[i] = sortObjectLists(e)
			_, isObject := e.(map[string]any)
			objects = objects && isObject
		}
		if objects {
			sort.SliceStable(x, func(i, j int) bool {
				return string(encodeJSON(x[i], "")) < string(encodeJSON(x[j], ""))
			})
		}
	}
	return v
}

// What redact writes as $MS and $PREFLIGHT_VHOST.
var (
	durationMS     = regexp.MustCompile(`"duration_ms":\d+`)
	throwawayVhost = regexp.MustCompile(regexp.QuoteMeta(broker.ThrowawayPrefix) + `\d+-[0-9a-f]+`)
)

// cmdRedact prints a file (or stdout, stderr) with the script's vhost
// name as $VHOST, its work directory as $WORK, the broker's management
// API as $MQCTL_SERVER (each version's broker has its own), the names of
// the vhosts and users rmq vhost and rmq user made as $VAR, the durations
// of apply -o json's steps as $MS and the name of a preflight's throwaway
// vhost as $PREFLIGHT_VHOST, so that cmp compares (and -update writes)
// what does not change from run to run.
func cmdRedact(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "redact")
	if len(args) != 1 {
		ts.Fatalf("usage: redact FILE|stdout|stderr")
	}
	text := ts.ReadFile(args[0])
	text = strings.ReplaceAll(text, ts.Getenv("WORK"), "$WORK")
	text = strings.ReplaceAll(text, liveOf(ts).b.URL, "$MQCTL_SERVER")
	for _, m := range liveOf(ts).made {
		text = strings.ReplaceAll(text, m.name, m.as)
	}
	text = strings.ReplaceAll(text, liveOf(ts).vhost, "$VHOST")
	text = durationMS.ReplaceAllString(text, `"duration_ms":$$MS`)
	text = throwawayVhost.ReplaceAllString(text, "$$PREFLIGHT_VHOST")
	// What the preflight's sweep found of other tests' leftovers (the
	// notes below, and the JSON plan's preflight.swept and sweep_error)
	// depends on what ran before: met in a CI run, a swept vhost.
	text = sweptMember.ReplaceAllString(text, "")
	fmt.Fprint(ts.Stdout(), dropLeftoverNotes(text))
}

// othersLeftovers are the notes of an apply (or plan --preflight) that
// swept throwaway vhosts killed applies left behind. The scripts share
// their broker with tests that kill applies (TestPreflightStopped), and
// whichever apply runs next sweeps what those leave, so that a script's
// command may or may not say so; TestPreflightStopped checks the note.
var (
	othersLeftovers = []string{
		"deleted the throwaway vhosts that killed mqctl applies left behind: ",
		"a throwaway vhost that a killed mqctl apply left behind could not be deleted",
	}
	// leftoverElement is one of those notes as a JSON string.
	leftoverElement   = regexp.MustCompile(`"(?:note: )?(?:` + regexp.QuoteMeta(othersLeftovers[0]) + `|` + regexp.QuoteMeta(othersLeftovers[1]) + `)(?:[^"\\]|\\.)*"`)
	emptyIndentedList = regexp.MustCompile(`\[\n\s*\]`)
	// sweptMember is a JSON plan's preflight.swept or sweep_error member,
	// with the comma before it.
	sweptMember = regexp.MustCompile(`,\s*"(?:swept":\s*\[[^\]]*\]|sweep_error":\s*"(?:[^"\\]|\\.)*")`)
)

// dropLeftoverNotes drops othersLeftovers' notes from text in each form
// mqctl writes them: a line of apply -o json's stream, a line of stderr,
// and an element of a JSON plan's notes (compact or indented), so that
// the JSON around it stays as mqctl writes it without the note.
func dropLeftoverNotes(text string) string {
	isLeftover := func(s string) bool {
		for _, n := range othersLeftovers {
			if strings.Contains(s, n) {
				return true
			}
		}
		return false
	}
	if !isLeftover(text) {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case !isLeftover(l):
		case strings.HasPrefix(t, `{"type":"note"`), strings.HasPrefix(t, "mqctl: note: "), strings.HasPrefix(t, "note: "):
			continue // a line of its own
		case strings.HasPrefix(t, `"`) && (t[len(t)-1] == '"' || t[len(t)-1] == ','):
			// An element of an indented list: the element before it
			// (or the list's opening) and the one after it close up.
			if !strings.HasSuffix(t, ",") && len(out) > 0 {
				prev := out[len(out)-1]
				if p := strings.TrimRight(prev, "\n"); strings.HasSuffix(p, ",") {
					out[len(out)-1] = strings.TrimSuffix(p, ",") + prev[len(p):]
				}
			}
			continue
		default:
			// Elements of a compact list, within the line.
			l = leftoverElement.ReplaceAllString(l, "")
			l = strings.NewReplacer("[,", "[", ",]", "]", ",,", ",").Replace(l)
		}
		out = append(out, l)
	}
	// An indented list that held only the note.
	return emptyIndentedList.ReplaceAllString(strings.Join(out, ""), "[]")
}

// deleteUsers deletes the broker's users whose names hold the script's
// vhost: those its files made.
func (l *live) deleteUsers() {
	status, body, err := l.b.API(http.MethodGet, "users?columns=name", nil)
	if err != nil || status != http.StatusOK {
		l.tb.Errorf("list users to delete the script's: %v %d %s", err, status, body)
		return
	}
	var users []struct{ Name string }
	if err := json.Unmarshal(body, &users); err != nil {
		l.tb.Errorf("list users: %v", err)
		return
	}
	for _, u := range users {
		if strings.Contains(u.Name, l.vhost) {
			if status, body, err := l.b.API(http.MethodDelete, "users/"+url.PathEscape(u.Name), nil); err != nil || status/100 != 2 {
				l.tb.Errorf("delete user %s: %v %d %s", u.Name, err, status, body)
			}
		}
	}
}
