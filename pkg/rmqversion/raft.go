package rmqversion

// How the management API tells whether a quorum queue's Raft servers run.
// A quorum queue can exist without one: RabbitMQ writes its record before
// it starts its servers (rabbit_quorum_queue:start_cluster/1 at v3.10.8,
// v4.0.5 and v4.3.5), in the declaring request's process, so a declaration
// cut off between the two (an apply killed mid-way) leaves a queue that
// every listing shows as running and that nacks every publish; a server
// stopped for good (ra:stop_server, or crashing past its supervisor's
// restart intensity) does the same, its log on disk.

// QuorumStatusEndpoint: GET /api/queues/quorum/{vhost}/{name}/status
// answers, per member, its "Raft State" (noproc: no server runs) and its
// "Last Log Index" ("" where the member has no Raft log at all)
// (rabbit_mgmt_wm_quorum_queue_status, rabbit_quorum_queue:status/2, 4.0+;
// 3.10.8 has no such endpoint: 404). RabbitMQ 4.0.5 answers 500 where a
// member has no server registered (a case_clause in status/2, measured),
// 4.3.6 the member with its fields "".
func (v Version) QuorumStatusEndpoint() bool { return v.AtLeast(4, 0) }

// LeaderHealthCheck: GET /api/health/checks/quorum-queues-without-elected-leaders/vhost/{vhost}/
// answers 200 {"status":"ok"}, or 503 with the quorum queues of the vhost
// whose leader does not run (rabbit_quorum_queue:leader_health_check/2,
// 4.1+; absent from 4.0.5).
func (v Version) LeaderHealthCheck() bool { return v.AtLeast(4, 1) }

// ListsLiveLeader: a queue listing's "leader" of a quorum queue is null
// when no server runs on the node its record names as leader
// (rabbit_quorum_queue:leader/1 checks the process at v3.10.8); 4.0.5 and
// 4.3.6 list the node of the record whether or not a server runs there.
func (v Version) ListsLiveLeader() bool { return !v.AtLeast(4, 0) }

// ListsServersOnline: a queue listing's "online" of a quorum queue are the
// members where a Raft server of the queue is registered, not the members
// whose node runs (rabbit_quorum_queue:online/1 at v3.10.8 asks each
// member's node for the server's registered name; from 4.0 format/2 lists
// the members whose node runs). A quorum queue with no Raft server on a
// node that runs (its declaration cut off, its server stopped for good) is
// listed by 3.10.8 with that member offline, as if its node were down. The
// listing's own statistics repeat the key with what the queue's last tick
// saw (3.10.8 answers "online" twice then).
func (v Version) ListsServersOnline() bool { return !v.AtLeast(4, 0) }
