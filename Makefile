# mqctl — make targets. The two that matter on a fresh machine:
#   make demo   start a local RabbitMQ (installing it if needed) and apply topology.yaml
#   make test   start the broker if none runs, then run every test
SHELL     := /bin/bash
GO        ?= go
BIN       ?= bin/mqctl
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/mqctl/mqctl/pkg/cli.Version=$(VERSION)
# The short fuzz runs of make test are counted in executions, not seconds:
# with a duration, Go 1.26's fuzz coordinator can report the end of the
# time itself as a failure, "context deadline exceeded" with no failing
# input (golang/go#75804, fixed in Go 1.27); it did so in a CI run here.
# 10,000 executions take 1-26 s per target on two cores.
FUZZTIME  ?= 10000x
BENCH_SIZES ?= 1000,10000,50000
export MQCTL_CORPUS ?= $(abspath ../shared/corpus)

.PHONY: build test unit vet fuzz fuzz-long bench bench-offline bench-live broker-start broker-stop demo clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mqctl

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# The whole suite: a short fuzz run of every fuzz target, then, for each
# RabbitMQ version of RABBITMQ_VERSIONS (4.3, 4.0 and 3.10), every test against
# that version: the offline unit tests and CLI scripts, the broker
# integration tests (each in its own vhost) on the version's node of
# scripts/broker, and the cluster tests on its three nodes of scripts/cluster
# (see cluster-test). One version's cluster is stopped before the next one
# starts (two cores). The fuzz runs come before any cluster starts: three
# booting Erlang nodes on two cores would slow them down. Most tests wait
# on the broker rather than compute, so three packages run at once and up
# to six parallel tests in each (TEST_FLAGS); every broker test has its
# own vhost and users, so they may. (Four and eight took the whole run to
# 12.6 min, but loaded two cores enough to stretch timings past what some
# tests allow.)
TEST_FLAGS ?= -p 3 -parallel 6
RABBITMQ_VERSIONS ?= 4.3 4.0 3.10
test: vet
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME)
	@mkdir -p bin && rm -f bin/test-summary.txt
	@set -e; for v in $(RABBITMQ_VERSIONS); do \
	  echo "=== the whole suite against RabbitMQ $$v"; start=$$SECONDS; \
	  MQCTL_RABBITMQ_VERSION=$$v ./scripts/broker start; \
	  MQCTL_RABBITMQ_VERSION=$$v ./scripts/cluster start; \
	  rc=0; ( eval "$$(MQCTL_RABBITMQ_VERSION=$$v ./scripts/broker env)" && \
	    eval "$$(MQCTL_RABBITMQ_VERSION=$$v ./scripts/cluster env)" && \
	    { set -o pipefail; $(GO) test -count=1 $(TEST_FLAGS) -json ./... 2>&1 | \
	      $(GO) run ./cmd/testsum -label "rabbitmq-$$v" -append bin/test-summary.txt; } ) || rc=$$?; \
	  MQCTL_RABBITMQ_VERSION=$$v ./scripts/cluster stop >/dev/null; \
	  if [ $$rc != 0 ]; then echo "=== FAILED against RabbitMQ $$v"; exit $$rc; fi; \
	  echo "=== passed against RabbitMQ $$v in $$((SECONDS - start)) s (broker, cluster and tests)"; \
	done
	@awk '{p += $$2; f += $$4; s += $$6} END {printf "total: %d passed, %d failed, %d skipped\n", p, f, s}' bin/test-summary.txt

# Offline tests only (no broker needed; broker tests skip outside CI).
unit:
	$(GO) test ./...

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

fuzz-long:
	$(MAKE) fuzz FUZZTIME=5m

# Generated topologies of 1,000, 10,000 and 50,000 objects: apply vs the
# broker's definitions import, no-op plan vs one definitions read, and
# validate/lint/route/graph offline on one core, with peak memory. Writes
# bench/results.md, bench/results.json and bench/results.svg.
# Against the RabbitMQ version scripts/broker runs (MQCTL_RABBITMQ_VERSION, default 4.3), into bench/<version>/.
BENCH_OUT ?= bench/$(or $(MQCTL_RABBITMQ_VERSION),4.3)
bench: broker-start build
	eval "$$(./scripts/broker env)" && $(GO) run ./cmd/benchrun -bin $(BIN) -out $(BENCH_OUT) -sizes $(BENCH_SIZES) -server "$$MQCTL_SERVER"

bench-offline: build
	$(GO) run ./cmd/benchrun -bin $(BIN) -out bench/offline -offline -sizes $(BENCH_SIZES)

# Against the local broker: fresh apply vs POST /api/definitions, no-op plan
# vs GET /api/definitions, for 5,000 queues + 5,000 DLQs + 10,000 bindings
# (MQCTL_BENCH_QUEUES=N changes the number of working queues).
bench-live: broker-start
	eval "$$(./scripts/broker env)" && $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./bench/

# The routing simulator against the local broker, longer than the CI run
# (60 topologies x 40 messages): SEEDS random topologies from seed SEED,
# MESSAGES messages each. Prints every disagreement and a summary.
SEEDS ?= 1000
MESSAGES ?= 50
SEED ?= 1
.PHONY: difftest
difftest: broker-start
	@out=$$(mktemp); eval "$$(./scripts/broker env)"; $(GO) test -v -run 'TestDifferential|TestKnownCases|TestDeadLetterLoopForever' -count=1 -timeout 3h ./internal/difftest/ \
	  -args -seeds $(SEEDS) -messages $(MESSAGES) -seed $(SEED) >$$out 2>&1; rc=$$?; grep -v -e '^=== ' -e '--- PASS' $$out; rm -f $$out; exit $$rc

# The three-node cluster tests alone (internal/testcluster; `make test` runs
# them too) on the cluster of scripts/cluster: nodes mqctl-c1..c3@localhost,
# management APIs on 15681-15683, AMQP on 5681-5683, data in .cluster/. Starts
# the cluster when it is not running (about 45 s the first time, 20 s after)
# and leaves it running (make cluster-stop). The tests stop and restart one
# node at a time.
.PHONY: cluster-test cluster-start cluster-stop
cluster-test: cluster-start
	eval "$$(./scripts/broker env)" && eval "$$(./scripts/cluster env)" && $(GO) test -count=1 -timeout 15m ./internal/testcluster/

cluster-start:
	./scripts/cluster start

cluster-stop:
	./scripts/cluster stop

# The fault tests alone: the management API answering 5xx and timing out,
# connections cut by a proxy mid-apply and mid dlq replay, failover between
# endpoints, Ctrl-C during apply (the real binary), and the one `make test`
# skips: the broker stopped in the middle of an apply, on a node of its own
# that scripts/broker starts on free ports and stops again (about 40 s).
FAULTS_RUN := ^Test(HTTPFaults|HTTPCutAfterAndHeal|TCPCutAndStall|ReadsAreRetried|ReadsGiveUp|WritesWithUnknownOutcomeAreNotRetried|Failover|AllEndpointsDown|RetryHonoursContext|DeclarationAnswered404|ServersList|UnknownOutcome.*|ReplayThroughFaultyNetwork|ReplayInterrupted|ManagementAPIFaultsCLI|ApplyCutMidway|DLQReplayCutByProxy|FailoverCLI|BrokerStoppedMidApply|InterruptApply)$$
.PHONY: faults
faults: broker-start
	eval "$$(./scripts/broker env)" && MQCTL_BROKER_FAULTS=1 $(GO) test -count=1 -timeout 10m -run '$(FAULTS_RUN)' \
	  ./internal/faultproxy/ ./pkg/broker/ ./pkg/apply/ ./pkg/dlq/ ./pkg/cli/ ./cmd/mqctl/

broker-start:
	./scripts/broker start

broker-stop:
	./scripts/broker stop

# The main job: lint the file, apply it to the local broker, then show that
# a second plan has nothing left to do (exit code 0 = no changes).
demo: broker-start build
	export MQCTL_SERVER="$$(./scripts/broker env | sed -n 's/^export MQCTL_SERVER=//p')" && \
	  ./$(BIN) lint -f topology.yaml && \
	  ./$(BIN) apply -f topology.yaml --auto-approve && \
	  ./$(BIN) plan -f topology.yaml --detailed-exitcode

clean:
	rm -rf bin bench/tmp
