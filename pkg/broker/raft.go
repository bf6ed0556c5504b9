package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mqctl/mqctl/internal/parallel"
	"github.com/mqctl/mqctl/internal/shell"
)

// RaftMember is one member of a quorum queue as the broker reports its
// Raft server (GET /api/queues/quorum/{vhost}/{name}/status, 4.0+).
type RaftMember struct {
	Node string
	// State is the member's "Raft State": leader, follower, …; "noproc"
	// when no Raft server runs there.
	State string
	// Log is true when the member has a Raft log: its "Last Log Index" is
	// a number ("" when it never had a server, or its data is gone).
	Log bool
	// Term is the member's Raft term (nil where it reports none): 0 for a
	// server that never took part in an election.
	Term *int64
}

// raftMemberJSON is a member of the status endpoint's answer.
type raftMemberJSON struct {
	Node     string          `json:"Node Name"`
	State    string          `json:"Raft State"`
	LastLog  json.RawMessage `json:"Last Log Index"`
	LogIndex json.RawMessage `json:"Log Index"` // the name before 3.13
	Term     json.RawMessage `json:"Term"`
}

// QuorumStatus reads the Raft servers of quorum queue name of vhost, one
// entry per member. The error wraps ErrNotFound when the queue does not
// exist, or the broker has no such endpoint (3.10); it is an *APIError of
// status 500 where RabbitMQ 4.0.5 fails to report a member that has no
// Raft server registered (rabbitmq-server's rabbit_quorum_queue:status/2
// at v4.0.5 has no clause for it), which is not asked again.
func (c *Client) QuorumStatus(ctx context.Context, vhost, name string) ([]RaftMember, error) {
	var rows []raftMemberJSON
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", "quorum", vhost, name, "status"),
		op: fmt.Sprintf("read the Raft status of quorum queue %q in vhost %q", name, vhost), vhost: vhost, answers500: true}, &rows); err != nil {
		return nil, err
	}
	out := make([]RaftMember, len(rows))
	for i, r := range rows {
		idx := r.LastLog
		if idx == nil {
			idx = r.LogIndex
		}
		var n json.Number
		out[i] = RaftMember{Node: r.Node, State: r.State, Log: json.Unmarshal(idx, &n) == nil}
		var term int64
		if json.Unmarshal(r.Term, &term) == nil {
			out[i].Term = &term
		}
	}
	return out, nil
}

// leaderless lists the quorum queues of vhost whose leader does not run,
// from the broker's health check (4.1+, rmqversion LeaderHealthCheck): one
// request for the whole vhost.
func (c *Client) leaderless(ctx context.Context, vhost string) (map[string]bool, error) {
	var answer struct {
		Status string `json:"status"`
		Queues []struct {
			Name string `json:"name"`
		} `json:"queues"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("health", "checks", "quorum-queues-without-elected-leaders", "vhost", vhost) + "/",
		op: fmt.Sprintf("check the leaders of the quorum queues of vhost %q", vhost), vhost: vhost, out503: &answer}, &answer); err != nil {
		return nil, err
	}
	if answer.Status != "ok" && answer.Status != "failed" {
		return nil, fmt.Errorf("check the leaders of the quorum queues of vhost %q: the broker answered status %q, neither ok nor failed", vhost, answer.Status)
	}
	out := map[string]bool{}
	for _, q := range answer.Queues {
		out[q.Name] = true
	}
	return out, nil
}

// RaftLog is what mqctl knows of a stopped quorum queue's Raft log.
type RaftLog int

const (
	// LogUnknown: the broker does not say (3.10 has no status endpoint).
	LogUnknown RaftLog = iota
	// LogNone: no member has a Raft log: the queue holds nothing.
	LogNone
	// LogKept: a member has its Raft log on disk, which holds what the
	// queue held when its server stopped.
	LogKept
)

// Stopped is a quorum queue no Raft server runs for: it answers a passive
// declare, refuses (nacks) every message published to it, answers
// basic.get "noproc" and delivers nothing, and no listing says so: 4.0.5
// and 4.3.6 list it as running, with its leader and every member online,
// and the statistics it counted last (none, when it never ran). RabbitMQ
// leaves a quorum queue so when its declaration is cut off between the
// queue's record and its servers' start (an apply killed mid-way: 1-2 of
// 40 queues, 4.3.6), or when its servers stop for good. No apply repairs
// it: the queue is there, as the file says.
type Stopped struct {
	Log RaftLog
	// Unelected is true when its Raft servers run but never elected a
	// leader (every member a follower at term 0: a declaration cut off
	// between the servers' start and the election RabbitMQ triggers
	// then; 4.0.5 and 3.10.8 also leave a server they start anew on
	// recovery so). Such a queue has committed nothing; a publish waits
	// for its confirm, and a basic.get for its answer, until a leader is
	// elected or the client gives up.
	Unelected bool
	// How is how the broker told it.
	How string
}

// StoppedQuorumQueues finds which of the quorum queues names of vhost no
// Raft server runs for, given the vhost's listing rows (ListQueueActivity,
// for their types and, on 3.10, their leaders): on 4.1+ the vhost's
// leader health check, then the Raft status of each queue it names; on
// 4.0 the Raft status of each quorum queue; on 3.10, the listing's leader
// (null when no server runs where the record says the leader is) and its
// members with a server (stoppedByListing). A queue with a member on a
// node that is down is left to the caller (it is without a majority, or
// has a member down, as the listing says; rows' Online are the members
// whose node runs on every version, ListQueueActivity).
func (c *Client) StoppedQuorumQueues(ctx context.Context, vhost string, rows []QueueActivity, names []string) (map[string]Stopped, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	byName := map[string]QueueActivity{}
	var cands []string
	for _, r := range rows {
		if want[r.Name] && r.Type == "quorum" && len((Placement{Members: r.Members, Online: r.Online}).Offline()) == 0 {
			byName[r.Name] = r
			cands = append(cands, r.Name)
		}
	}
	slices.Sort(cands)
	out := map[string]Stopped{}
	if len(cands) == 0 {
		return out, nil
	}
	v := c.RabbitMQVersion()
	if !v.QuorumStatusEndpoint() {
		if v.ListsLiveLeader() {
			for _, n := range cands {
				if s, ok := stoppedByListing(byName[n]); ok {
					out[n] = s
				}
			}
		}
		return out, nil
	}
	if v.LeaderHealthCheck() {
		flagged, err := c.leaderless(ctx, vhost)
		if err != nil {
			return nil, err
		}
		cands = slices.DeleteFunc(cands, func(n string) bool { return !flagged[n] })
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	g := parallel.New(8)
	for _, n := range cands {
		g.Go(func() {
			s, stopped, err := c.stoppedByStatus(ctx, vhost, n, byName[n].Known)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case stopped:
				out[n] = s
			}
		})
	}
	g.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return out, nil
}

// stoppedByListing tells from its listing row whether no Raft server
// runs for quorum queue r, on a version without the status endpoint
// (3.10.8), whose listing names a leader only where its server runs
// (rmqversion ListsLiveLeader) and gives the members with a server online
// (ListsServersOnline: r.NoServer are the others whose node runs). Every
// member's node runs (the caller's candidates). Its log, the listing does
// not tell: a queue that never reported statistics never had a server
// tick, and holds nothing (as 4.0's answer tells, stoppedByStatus).
func stoppedByListing(r QueueActivity) (Stopped, bool) {
	none := len(r.Members) > 0 && len(r.NoServer) == len(r.Members)
	if !r.NoLeader && !none {
		return Stopped{}, false
	}
	how := "the broker lists no leader for it: no Raft server runs on the node its record names as leader"
	if none {
		how = "the broker lists none of its members online, though their nodes run: none has a Raft server"
	}
	if !r.Known {
		return Stopped{Log: LogNone, How: how + ", and it never reported statistics"}, true
	}
	return Stopped{Log: LogUnknown, How: how}, true
}

// stoppedByStatus reads the Raft status of quorum queue name and tells
// whether no server runs for it; known says whether the queue ever
// reported statistics (each comes from a running server's tick).
func (c *Client) stoppedByStatus(ctx context.Context, vhost, name string, known bool) (Stopped, bool, error) {
	members, err := c.QuorumStatus(ctx, vhost, name)
	var ae *APIError
	switch {
	case errors.Is(err, ErrNotFound):
		return Stopped{}, false, nil // gone since the listing
	case errors.As(err, &ae) && ae.Status == http.StatusInternalServerError && !known:
		// RabbitMQ 4.0.5 fails so for a member with no server registered;
		// a queue that never counted its messages never had one running.
		return Stopped{Log: LogNone, How: "the broker fails to report its Raft status (500), as RabbitMQ 4.0 does for a member with no Raft server, and it never reported statistics"}, true, nil
	case errors.As(err, &ae) && ae.Status == http.StatusInternalServerError:
		// It ran once: whether its log is still there, the broker does
		// not say.
		return Stopped{Log: LogUnknown, How: "the broker fails to report its Raft status (500), as RabbitMQ 4.0 does for a member with no Raft server"}, true, nil
	case err != nil:
		return Stopped{}, false, err
	}
	if len(members) == 0 {
		return Stopped{}, false, nil
	}
	unelected := true
	for _, m := range members {
		if m.State == "noproc" || m.State == "leader" || m.Term == nil || *m.Term != 0 {
			unelected = false
		}
	}
	if unelected {
		return Stopped{Log: LogNone, Unelected: true, How: "every member reports a Raft term of 0 and none is leader"}, true, nil
	}
	log := LogNone
	for _, m := range members {
		if m.State != "noproc" {
			return Stopped{}, false, nil
		}
		if m.Log {
			log = LogKept
		}
	}
	how := "every member reports Raft State noproc"
	if log == LogNone {
		how = "every member reports Raft State noproc and no Raft log"
	}
	return Stopped{Log: log, How: how}, true, nil
}

// Advice says what a stopped quorum queue does to messages, how to check
// it and the fix that loses nothing, for queue name of vhost; messages is
// what its statistics counted last (nil: none). No apply repairs such a
// queue: it declares nothing for a queue the broker has.
func (s Stopped) Advice(vhost, name string, messages *int64) string {
	del := fmt.Sprintf("rabbitmqctl delete_queue --vhost %s %s", shell.Quote(vhost), shell.Quote(name))
	restart := RestartServersCommand(vhost, name)
	const effect = "it refuses (nacks) every message published to it, so publishers lose what they do not publish again, and delivers none"
	check := fmt.Sprintf("rabbitmq-queues quorum_status --vhost %s %s", shell.Quote(vhost), shell.Quote(name))
	if s.Unelected {
		elect := "rabbitmqctl eval " + shell.Quote(fmt.Sprintf(
			"{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(%s,queue,%s)), [ra:trigger_election({element(1,amqqueue:get_pid(Q)),Node}) || Node <- rabbit_amqqueue:get_quorum_nodes(Q)].",
			erlangBinary(vhost), erlangBinary(name)))
		return fmt.Sprintf("no leader was ever elected for it (%s; check: %s): it takes no message and delivers none (a publish waits for its confirm, a basic.get for its answer, until the client gives up), and holds nothing. mqctl apply does not repair it: start an election, which loses nothing (%s: [ok] for each member)",
			s.How, check, elect)
	}
	switch s.Log {
	case LogNone:
		return fmt.Sprintf("no Raft server runs for it (%s; check: %s): %s; with no Raft log it holds nothing (RabbitMQ leaves a quorum queue so when its declaration is cut off, as by an apply killed mid-way). mqctl apply does not repair it (the queue exists, as the file says): delete it (%s) and run mqctl apply to declare it again; the bindings the file gives it come back, one made outside the file does not",
			s.How, check, effect, del)
	case LogKept:
		held := "the messages it held"
		if messages != nil {
			held = fmt.Sprintf("the messages it held (%s when it last counted)", plural(*messages, "message"))
		}
		return fmt.Sprintf("no Raft server runs for it (%s; check: %s): %s; its Raft log on disk keeps %s. Do not delete it, which loses them, and mqctl apply does not repair it: start its Raft servers again, which keeps them (%s: [ok] for each member)",
			s.How, check, effect, held, restart)
	}
	return fmt.Sprintf("no Raft server runs for it (%s; check: %s): %s. mqctl apply does not repair it: start its Raft servers again, which keeps what its log holds (%s: [ok] for each member); where that answers {error,name_not_registered} for every member, it never had a server and holds nothing: delete it (%s) and run mqctl apply to declare it again",
		s.How, check, effect, restart, del)
}

// RestartServersCommand is the rabbitmqctl command that starts again the
// Raft server of each member of quorum queue name of vhost
// (rabbit_quorum_queue:restart_server/1, at v3.10.8, v4.0.5 and v4.3.5),
// which keeps what its log holds; it prints ok for each member it starts.
func RestartServersCommand(vhost, name string) string {
	return "rabbitmqctl eval " + shell.Quote(fmt.Sprintf(
		"{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(%s,queue,%s)), [rabbit_quorum_queue:restart_server({element(1,amqqueue:get_pid(Q)),Node}) || Node <- rabbit_amqqueue:get_quorum_nodes(Q)].",
		erlangBinary(vhost), erlangBinary(name)))
}

// erlangBinary writes s as an Erlang UTF-8 binary literal.
func erlangBinary(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `<<"` + r.Replace(s) + `"/utf8>>`
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
