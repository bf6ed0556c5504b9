// Package ci_test runs the CI examples of examples/ci the way GitHub
// Actions and GitLab CI would, on a fixture repository and without the
// network: it reads the jobs' steps from github/mqctl.yml and
// gitlab/.gitlab-ci.yml, runs each one with bash against an mqctl built from
// this tree, and checks what a reviewer would see: lint's annotations, the
// diff's exit code and pull-request comment, and whether the check passes.
//
// The steps that need the network are the only ones not run: on GitHub those
// that use an action, and on both those that call go install, git fetch,
// gh, curl or apk add (networkCommand). A skipped step's outputs are empty,
// as on GitHub when a step is skipped, unless the test stubs them (the
// count of approving reviews).
//
// The jobs of a push to main run against the test broker (testbroker.New:
// MQCTL_TEST_SERVER, by default the node of scripts/broker), in a vhost of
// their own deleted at the end; without a broker they are skipped, and in
// CI (CI or MQCTL_REQUIRE_BROKER=1) they fail.
package ci_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// binDir holds the mqctl TestMain builds; it comes first on the jobs' PATH.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mqctl-ci-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "mqctl"), "./cmd/mqctl")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/mqctl: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// networkCommand finds the commands that need the network in a step's
// script: the test skips such a step (GitHub) or script line (GitLab).
var networkCommand = regexp.MustCompile(`\b(go install|git fetch|gh|curl|apk add)\b`)

// mqctlCommand finds the mqctl commands under test; no skipped step may
// hold one.
var mqctlCommand = regexp.MustCompile(`(?m)(^|[;&|()])\s*mqctl\s+(lint|diff|plan|apply)\b`)

// The fixture: on main, a topic exchange "orders" feeding "shipping"
// (order.shipped) and "audit" (order.*), and "billing", whose dead letters
// reach billing.dlq through billing.dlx with the key "billing".
const topology = `# The orders service's topology, kept as code.
version: 1
vhosts:
  VHOST:
    description: order events and billing
    exchanges:
      orders: { type: topic }        # order.created, order.paid, order.shipped
      orders.dlx: { type: direct }   # shipping's and audit's dead letters
      billing.dlx: { type: direct }  # billing's dead letters
    queues:
      shipping:
        bindings:
          - { exchange: orders, routing_key: order.shipped }
        dead_letter:
          exchange: orders.dlx
          queue: { name: shipping.dlq, limits: { message_ttl: 7d } }
        limits: { max_length: 10000, overflow: reject-publish }
      audit:
        bindings:
          - { exchange: orders, routing_key: order.* }
        dead_letter:
          exchange: orders.dlx
          queue: { name: audit.dlq, limits: { message_ttl: 7d } }
        limits: { max_length: 10000, overflow: reject-publish }
      billing:
        dead_letter: { exchange: billing.dlx, routing_key: billing }
        limits: { max_length: 10000, overflow: reject-publish }
      billing.dlq:
        bindings:
          - { exchange: billing.dlx, routing_key: billing }
        limits: { message_ttl: 7d }
`

// losesMessages narrows audit's binding to order.created (order.paid and
// every other order.* key but order.shipped now reach no queue; order.shipped
// no longer reaches audit) and misspells billing's dead-letter key, which
// billing.dlx has no binding for.
var losesMessages = []edit{
	{"routing_key: order.* }", "routing_key: order.created }"},
	{"dead_letter: { exchange: billing.dlx, routing_key: billing }", "dead_letter: { exchange: billing.dlx, routing_key: biling }"},
}

// describes changes only the vhost's description.
var describes = []edit{
	{"description: order events and billing", "description: order events, billing and billing's dead letters"},
}

type edit struct{ old, new string }

// fixture is a git repository holding topology.yaml on main, with
// origin/main where a CI checkout would have it.
type fixture struct {
	t   *testing.T
	dir string
	env []string // PATH with the built mqctl first, a HOME of its own
}

func newFixture(t *testing.T, vhost string) *fixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: mqctl diff --base reads the base branch with it")
	}
	home := t.TempDir()
	f := &fixture{t: t, dir: t.TempDir(), env: []string{
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=mqctl test", "GIT_AUTHOR_EMAIL=test@mqctl.invalid",
		"GIT_COMMITTER_NAME=mqctl test", "GIT_COMMITTER_EMAIL=test@mqctl.invalid",
	}}
	f.git("init", "-q", "-b", "main")
	f.write(strings.Replace(topology, "VHOST", vhost, 1))
	f.git("add", "topology.yaml")
	f.git("commit", "-q", "-m", "orders, shipping, audit and billing")
	// What actions/checkout with fetch-depth: 0 (or the GitLab job's git
	// fetch) leaves: the base branch as a remote-tracking ref.
	f.git("update-ref", "refs/remotes/origin/main", "HEAD")
	return f
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = f.dir, f.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (f *fixture) write(content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, "topology.yaml"), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(name string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// branch checks out a new branch from main with edits to topology.yaml,
// committed.
func (f *fixture) branch(name string, edits []edit) {
	f.t.Helper()
	f.git("checkout", "-q", "-b", name, "main")
	content := f.read("topology.yaml")
	for _, e := range edits {
		if n := strings.Count(content, e.old); n != 1 {
			f.t.Fatalf("the fixture holds %q %d times, want once", e.old, n)
		}
		content = strings.Replace(content, e.old, e.new, 1)
	}
	f.write(content)
	f.git("commit", "-q", "-a", "-m", name)
}

// step is what running one step (or GitLab job) gave.
type step struct {
	name    string
	skipped string // why it did not run; "" when it ran
	code    int
	out     string // stdout and stderr
}

// job is what running a job gave.
type job struct {
	steps   []step
	failed  bool
	outputs map[string]map[string]string // GitHub: step id → outputs
	summary string                       // GitHub: $GITHUB_STEP_SUMMARY
}

func (j *job) step(t *testing.T, name string) step {
	t.Helper()
	for _, s := range j.steps {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no step %q in %v", name, j.steps)
	return step{}
}

// ran returns the step named name, failing the test when it did not run.
func (j *job) ran(t *testing.T, name string) step {
	t.Helper()
	s := j.step(t, name)
	if s.skipped != "" {
		t.Fatalf("step %q did not run: %s", name, s.skipped)
	}
	return s
}

func runBash(t *testing.T, dir string, env []string, script string) (int, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "step.sh")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	// GitHub's shell: bash; GitLab's bash runs the lines under set -eo pipefail.
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", file)
	var out bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("bash: %v", err)
	return 0, ""
}

// ---------------------------------------------------------------- GitHub

type ghWorkflow struct {
	Name        string
	On          map[string]*struct{ Types, Branches []string } `yaml:"on"`
	Env         map[string]string
	Defaults    struct{ Run struct{ Shell string } }
	Permissions map[string]string
	Jobs        map[string]*ghJob
}

type ghJob struct {
	If          string
	RunsOn      string `yaml:"runs-on"`
	Permissions map[string]string
	Environment string
	Concurrency struct {
		Group            string
		CancelInProgress bool `yaml:"cancel-in-progress"`
	}
	Env   map[string]string
	Steps []ghStep
}

type ghStep struct {
	ID, Name, Uses, Run, If string
	With                    map[string]any
	Env                     map[string]string
	ContinueOnError         bool `yaml:"continue-on-error"`
}

func (s ghStep) title() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Uses
}

func decodeStrict(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true) // a key the test does not know of is a key it would not honour
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func loadGitHub(t *testing.T) *ghWorkflow {
	t.Helper()
	var wf ghWorkflow
	decodeStrict(t, filepath.Join("github", "mqctl.yml"), &wf)
	if _, ok := wf.On["pull_request"]; !ok {
		t.Error("the workflow does not run on pull_request")
	}
	if p := wf.On["push"]; p == nil || !slices.Equal(p.Branches, []string{"main"}) {
		t.Error("the workflow does not run on a push to main")
	}
	if wf.Defaults.Run.Shell != "bash" {
		t.Errorf("defaults.run.shell = %q, want bash: the test runs the steps as shell: bash does", wf.Defaults.Run.Shell)
	}
	for _, name := range []string{"lint", "messages", "apply"} {
		if wf.Jobs[name] == nil {
			t.Fatalf("no job %q", name)
		}
	}
	msgs := wf.Jobs["messages"]
	if msgs.Permissions["pull-requests"] != "write" {
		t.Error("job messages cannot comment: it needs permissions: pull-requests: write")
	}
	if fd := msgs.Steps[0].With["fetch-depth"]; msgs.Steps[0].Uses == "" || !strings.HasPrefix(msgs.Steps[0].Uses, "actions/checkout@") || fd != 0 {
		t.Errorf("job messages starts with %s (fetch-depth %v), want actions/checkout with fetch-depth: 0: diff reads the base branch from git", msgs.Steps[0].Uses, fd)
	}
	apply := wf.Jobs["apply"]
	if apply.Environment == "" {
		t.Error("job apply has no environment: the broker's secrets belong to a protected one")
	}
	for _, v := range []string{"MQCTL_SERVER", "MQCTL_USERNAME", "MQCTL_PASSWORD"} {
		if want := "${{ secrets." + v + " }}"; apply.Env[v] != want {
			t.Errorf("job apply: %s = %q, want %q", v, apply.Env[v], want)
		}
	}
	return &wf
}

// jobsFor are the jobs whose if: names event, sorted.
func (wf *ghWorkflow) jobsFor(event string) []string {
	var out []string
	for name, j := range wf.Jobs {
		if strings.Contains(j.If, "github.event_name == '"+event+"'") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// runGitHub runs job name of wf in f's working tree the way a runner would:
// steps in order, each step's env over the job's over the workflow's,
// ${{ }} expressions replaced from vars and the earlier steps' outputs,
// $GITHUB_OUTPUT read after each step, and no step after a failed one.
// stubs are the outputs of skipped steps, by id.
func runGitHub(t *testing.T, f *fixture, wf *ghWorkflow, name string, vars map[string]string, stubs map[string]map[string]string) *job {
	t.Helper()
	j := &job{outputs: map[string]map[string]string{}}
	tmp := t.TempDir()
	summary := filepath.Join(tmp, "summary.md")
	expand := func(s string) string {
		return ghExpr.ReplaceAllStringFunc(s, func(m string) string {
			expr := ghExpr.FindStringSubmatch(m)[1]
			if parts := strings.Split(expr, "."); len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs" {
				return j.outputs[parts[1]][parts[3]]
			}
			v, ok := vars[expr]
			if !ok {
				t.Fatalf("job %s: the test has no value for ${{ %s }}", name, expr)
			}
			return v
		})
	}
	gj := wf.Jobs[name]
	for i, s := range gj.Steps {
		r := step{name: s.title()}
		switch {
		case s.If != "":
			t.Fatalf("job %s, step %q: if: %s: the test does not evaluate conditions; decide in the script", name, r.name, s.If)
		case j.failed:
			r.skipped = "an earlier step failed"
		case s.Uses != "":
			r.skipped = "uses an action"
		case networkCommand.MatchString(s.Run):
			r.skipped = "needs the network: " + networkCommand.FindString(s.Run)
		}
		if networkCommand.MatchString(s.Run) && mqctlCommand.MatchString(s.Run) {
			t.Errorf("job %s, step %q needs the network and runs an mqctl command the test must run: split it", name, r.name)
		}
		if r.skipped != "" {
			if s.ID != "" && stubs[s.ID] != nil {
				j.outputs[s.ID] = stubs[s.ID]
			}
			j.steps = append(j.steps, r)
			continue
		}
		output := filepath.Join(tmp, fmt.Sprintf("output-%d", i))
		env := append(slices.Clone(f.env), "CI=true", "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+f.dir,
			"GITHUB_OUTPUT="+output, "GITHUB_STEP_SUMMARY="+summary, "RUNNER_TEMP="+tmp)
		for _, m := range []map[string]string{wf.Env, gj.Env, s.Env} {
			for k, v := range m {
				env = append(env, k+"="+expand(v))
			}
		}
		r.code, r.out = runBash(t, f.dir, env, expand(s.Run))
		t.Logf("job %s, step %q: exit %d\n%s", name, r.name, r.code, r.out)
		j.steps = append(j.steps, r)
		if r.code != 0 && !s.ContinueOnError {
			j.failed = true
		}
		if s.ID != "" {
			j.outputs[s.ID] = readOutputs(t, output)
		}
	}
	if b, err := os.ReadFile(summary); err == nil {
		j.summary = string(b)
	}
	return j
}

// readOutputs reads a $GITHUB_OUTPUT file of name=value lines.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.Contains(k, "<<") {
			t.Fatalf("$GITHUB_OUTPUT line %q: the test reads name=value lines only", line)
		}
		out[k] = v
	}
	return out
}

var ghPullRequest = map[string]string{
	"github.base_ref":                    "main",
	"github.event.pull_request.base.ref": "main",
}

func TestGitHubPullRequestLosingMessages(t *testing.T) {
	wf := loadGitHub(t)
	if got, want := wf.jobsFor("pull_request"), []string{"lint", "messages"}; !slices.Equal(got, want) {
		t.Fatalf("jobs of a pull request = %v, want %v", got, want)
	}
	f := newFixture(t, "orders")
	f.branch("narrow-audit", losesMessages)

	lint := runGitHub(t, f, wf, "lint", ghPullRequest, nil)
	checkSkipped(t, lint, "actions/checkout@v6", "actions/setup-go@v6", "Install mqctl")
	s := lint.ran(t, "Lint")
	if s.code != 1 || !lint.failed {
		t.Errorf("lint exited %d, want 1: billing's dead letters reach no queue (MQ103, an error)", s.code)
	}
	if !regexp.MustCompile(`(?m)^::error file=topology\.yaml,line=\d+.*MQ103.*"billing".*"biling"`).MatchString(s.out) {
		t.Errorf("lint printed no error annotation on topology.yaml for billing's dead-letter key:\n%s", s.out)
	}

	msgs := runGitHub(t, f, wf, "messages", ghPullRequest, nil)
	checkSkipped(t, msgs, "actions/checkout@v6", "actions/setup-go@v6", "Install mqctl", "Comment on the pull request", "Count approving reviews")
	if d := msgs.ran(t, "Diff against the base branch"); d.code != 0 {
		t.Fatalf("the diff step failed (exit %d): diff's exit code 3 is an answer, not an error", d.code)
	}
	if code := msgs.outputs["diff"]["code"]; code != "3" {
		t.Errorf("mqctl diff --detailed-exitcode exited %s, want 3: the change loses messages", code)
	}
	md := f.read("mqctl-diff.md")
	checkLosingComment(t, md)
	if msgs.summary != md {
		t.Error("the job summary is not the comment")
	}
	v := msgs.ran(t, "Require a second review for a change that loses messages")
	if v.code != 1 || !strings.Contains(v.out, "::error title=mqctl::This change loses messages") || !strings.Contains(v.out, "it needs 2 approving reviews, it has 0") {
		t.Errorf("the check passed (exit %d) a change that loses messages without approvals:\n%s", v.code, v.out)
	}

	// A second approval: the review event runs the job again, and the count
	// of approving reviews (a network step) says 2.
	again := runGitHub(t, f, wf, "messages", ghPullRequest, map[string]map[string]string{"approvals": {"count": "2"}})
	v = again.ran(t, "Require a second review for a change that loses messages")
	if v.code != 0 || again.failed || !strings.Contains(v.out, "This change loses messages; 2 approving reviews accept it.") {
		t.Errorf("with 2 approving reviews the check exited %d:\n%s", v.code, v.out)
	}
}

func TestGitHubPullRequestKeepingMessages(t *testing.T) {
	wf := loadGitHub(t)
	f := newFixture(t, "orders")
	f.branch("describe", describes)

	lint := runGitHub(t, f, wf, "lint", ghPullRequest, nil)
	if s := lint.ran(t, "Lint"); s.code != 0 || strings.Contains(s.out, "::") {
		t.Errorf("lint of a clean file exited %d with annotations:\n%s", s.code, s.out)
	}
	msgs := runGitHub(t, f, wf, "messages", ghPullRequest, nil)
	if code := msgs.outputs["diff"]["code"]; code != "0" && code != "2" {
		t.Errorf("mqctl diff --detailed-exitcode exited %s, want 0 or 2: a description loses no message", code)
	}
	md := f.read("mqctl-diff.md")
	checkKeepingComment(t, md)
	if v := msgs.ran(t, "Require a second review for a change that loses messages"); v.code != 0 || msgs.failed {
		t.Errorf("the check failed (exit %d) a change that loses no messages:\n%s", v.code, v.out)
	}
}

func TestGitHubPushToMain(t *testing.T) {
	wf := loadGitHub(t)
	if got, want := wf.jobsFor("push"), []string{"apply"}; !slices.Equal(got, want) {
		t.Fatalf("jobs of a push = %v, want %v", got, want)
	}
	if !strings.Contains(wf.Jobs["apply"].If, "github.ref == 'refs/heads/main'") {
		t.Errorf("job apply runs on a push to any branch: if: %s", wf.Jobs["apply"].If)
	}
	b, vhost := liveVhost(t)
	f := newFixture(t, vhost)
	secrets := map[string]string{
		"secrets.MQCTL_SERVER":   b.URL,
		"secrets.MQCTL_USERNAME": b.Username,
		"secrets.MQCTL_PASSWORD": b.Password,
	}
	apply := runGitHub(t, f, wf, "apply", secrets, nil)
	checkSkipped(t, apply, "actions/checkout@v6", "actions/setup-go@v6", "Install mqctl")
	if apply.failed || apply.outputs["plan"]["changes"] != "true" {
		t.Fatalf("the first run: failed %v, plan's changes %q, want a plan with changes, applied", apply.failed, apply.outputs["plan"]["changes"])
	}
	checkApplied(t, b, vhost)
	again := runGitHub(t, f, wf, "apply", secrets, nil)
	if s := again.ran(t, "Apply"); again.failed || again.outputs["plan"]["changes"] != "false" || !strings.Contains(s.out, "the broker already matches topology.yaml") {
		t.Errorf("the second run: failed %v, plan's changes %q, want no changes and no apply:\n%s", again.failed, again.outputs["plan"]["changes"], s.out)
	}
}

// liveVhost returns the test broker and the name of a vhost the broker
// lacks, which the job's apply creates, as on a first deployment, and which
// is deleted when the test ends. Without a broker it skips the test (fails
// it in CI).
func liveVhost(t *testing.T) (*testbroker.Broker, string) {
	t.Helper()
	t.Log("the jobs of a push to main run plan and apply against the test broker (testbroker.New: MQCTL_TEST_SERVER, default the node of scripts/broker)")
	b := testbroker.New(t)
	vhost := b.Vhost(t) // its cleanup deletes the vhost apply makes
	status, body, err := b.API(http.MethodDelete, "vhosts/"+url.PathEscape(vhost), nil)
	if err != nil || status != http.StatusNoContent {
		t.Fatalf("delete vhost %s for apply to create: %d %v %s", vhost, status, err, body)
	}
	return b, vhost
}

// checkSkipped checks that exactly the steps named were skipped.
func checkSkipped(t *testing.T, j *job, names ...string) {
	t.Helper()
	var got []string
	for _, s := range j.steps {
		if s.skipped != "" && s.skipped != "an earlier step failed" {
			got = append(got, s.name)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("steps skipped for the network: %q, want %q", got, names)
	}
}

// ---------------------------------------------------------------- GitLab

type glJob struct {
	Extends      string
	Image        string
	Stage        string
	Rules        []struct{ If string }
	Needs        []string
	Variables    map[string]string
	BeforeScript []string `yaml:"before_script"`
	Script       []string
	Artifacts    struct {
		When     string
		ExposeAs string `yaml:"expose_as"`
		Paths    []string
		Reports  struct{ Dotenv string }
	}
	Environment   struct{ Name string }
	ResourceGroup string `yaml:"resource_group"`
}

type glPipeline struct {
	Variables map[string]string
	Jobs      map[string]*glJob
}

var glReserved = []string{"workflow", "stages", "variables", "default", "include"}

func loadGitLab(t *testing.T) *glPipeline {
	t.Helper()
	var top map[string]yaml.Node
	path := filepath.Join("gitlab", ".gitlab-ci.yml")
	decodeStrict(t, path, &top)
	p := &glPipeline{Jobs: map[string]*glJob{}}
	hidden := map[string]*glJob{}
	for key, node := range top {
		switch {
		case key == "variables":
			if err := node.Decode(&p.Variables); err != nil {
				t.Fatal(err)
			}
		case slices.Contains(glReserved, key):
		default:
			var j glJob
			raw, err := yaml.Marshal(&node)
			if err != nil {
				t.Fatal(err)
			}
			dec := yaml.NewDecoder(bytes.NewReader(raw))
			dec.KnownFields(true)
			if err := dec.Decode(&j); err != nil {
				t.Fatalf("%s: job %s: %v", path, key, err)
			}
			if strings.HasPrefix(key, ".") {
				hidden[key] = &j
			} else {
				p.Jobs[key] = &j
			}
		}
	}
	// extends: what the job leaves out comes from the hidden job.
	for name, j := range p.Jobs {
		if j.Extends == "" {
			continue
		}
		base := hidden[j.Extends]
		if base == nil {
			t.Fatalf("job %s extends %s, which the file does not define", name, j.Extends)
		}
		if j.Image == "" {
			j.Image = base.Image
		}
		if j.BeforeScript == nil {
			j.BeforeScript = base.BeforeScript
		}
	}
	for _, name := range []string{"mqctl-lint", "mqctl-diff", "mqctl-review", "mqctl-apply"} {
		if p.Jobs[name] == nil {
			t.Fatalf("no job %s", name)
		}
	}
	diff := p.Jobs["mqctl-diff"]
	if diff.Variables["GIT_DEPTH"] != "0" {
		t.Error("job mqctl-diff clones shallow: the merge base may be missing (GIT_DEPTH: \"0\")")
	}
	if !slices.Contains(diff.Artifacts.Paths, "mqctl-diff.md") || diff.Artifacts.Reports.Dotenv == "" {
		t.Error("job mqctl-diff keeps neither mqctl-diff.md as an artifact nor its exit code as a dotenv report")
	}
	if !slices.Equal(p.Jobs["mqctl-review"].Needs, []string{"mqctl-diff"}) {
		t.Error("job mqctl-review does not need mqctl-diff")
	}
	if p.Jobs["mqctl-apply"].Environment.Name == "" {
		t.Error("job mqctl-apply has no environment: the broker's variables belong to a protected one")
	}
	return p
}

// jobsFor are the jobs whose rules name source, sorted.
func (p *glPipeline) jobsFor(source string) []string {
	var out []string
	for name, j := range p.Jobs {
		for _, r := range j.Rules {
			if strings.Contains(r.If, `$CI_PIPELINE_SOURCE == "`+source+`"`) {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// runGitLab runs job name as a GitLab runner's bash would: before_script
// and script in one shell under set -eo pipefail, the pipeline's variables,
// the job's, vars (the predefined ones) and dotenv (the reports of the
// jobs it needs) in the environment. It returns one step per script line,
// the lines that need the network marked skipped, and the run as a whole
// as the last step.
func runGitLab(t *testing.T, f *fixture, p *glPipeline, name string, vars, dotenv map[string]string) *job {
	t.Helper()
	gj := p.Jobs[name]
	j := &job{}
	var script []string
	for _, line := range append(slices.Clone(gj.BeforeScript), gj.Script...) {
		if m := networkCommand.FindString(line); m != "" {
			j.steps = append(j.steps, step{name: line, skipped: "needs the network: " + m})
			if mqctlCommand.MatchString(line) {
				t.Errorf("job %s: the line %q needs the network and runs an mqctl command the test must run: split it", name, line)
			}
			continue
		}
		script = append(script, line)
	}
	env := append(slices.Clone(f.env), "CI=true", "GITLAB_CI=true", "CI_PROJECT_DIR="+f.dir)
	for _, m := range []map[string]string{p.Variables, gj.Variables, vars, dotenv} {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	r := step{name: name}
	r.code, r.out = runBash(t, f.dir, env, strings.Join(script, "\n")+"\n")
	t.Logf("job %s: exit %d\n%s", name, r.code, r.out)
	j.steps = append(j.steps, r)
	j.failed = r.code != 0
	return j
}

// dotenv reads a job's dotenv report.
func dotenv(t *testing.T, f *fixture, j *glJob) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(f.read(j.Artifacts.Reports.Dotenv)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("dotenv line %q", line)
		}
		out[k] = v
	}
	return out
}

var glMergeRequest = map[string]string{
	"CI_PIPELINE_SOURCE":                  "merge_request_event",
	"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
	"CI_MERGE_REQUEST_IID":                "1",
	"CI_PROJECT_ID":                       "1",
	"CI_API_V4_URL":                       "https://gitlab.invalid/api/v4",
	"CI_DEFAULT_BRANCH":                   "main",
}

// skippedLines are the script lines of j skipped for the network, each cut
// at its first line.
func skippedLines(j *job) []string {
	var out []string
	for _, s := range j.steps {
		if s.skipped != "" {
			first, _, _ := strings.Cut(s.name, "\n")
			out = append(out, first)
		}
	}
	return out
}

func TestGitLabMergeRequestLosingMessages(t *testing.T) {
	p := loadGitLab(t)
	if got, want := p.jobsFor("merge_request_event"), []string{"mqctl-diff", "mqctl-lint", "mqctl-review"}; !slices.Equal(got, want) {
		t.Fatalf("jobs of a merge request = %v, want %v", got, want)
	}
	f := newFixture(t, "orders")
	f.branch("narrow-audit", losesMessages)

	lint := runGitLab(t, f, p, "mqctl-lint", glMergeRequest, nil)
	if got := skippedLines(lint); len(got) != 1 || !strings.HasPrefix(got[0], "go install ") {
		t.Errorf("lines skipped for the network: %q, want the go install", got)
	}
	s := lint.ran(t, "mqctl-lint")
	if s.code != 1 || !regexp.MustCompile(`(?m)^topology\.yaml:\d+:\d+: error MQ103 .*"billing".*"biling"`).MatchString(s.out) {
		t.Errorf("lint exited %d, want 1 and an error on billing's dead-letter key:\n%s", s.code, s.out)
	}

	diff := runGitLab(t, f, p, "mqctl-diff", glMergeRequest, nil)
	if got := skippedLines(diff); len(got) != 2 || !strings.HasPrefix(got[0], "go install ") || !strings.HasPrefix(got[1], "git fetch ") {
		t.Errorf("lines skipped for the network: %q, want the go install and the git fetch", got)
	}
	if d := diff.ran(t, "mqctl-diff"); d.code != 0 {
		t.Fatalf("job mqctl-diff failed (exit %d): diff's exit code 3 is an answer, not an error", d.code)
	}
	report := dotenv(t, f, p.Jobs["mqctl-diff"])
	if report["MQCTL_DIFF_CODE"] != "3" {
		t.Errorf("mqctl diff --detailed-exitcode exited %s, want 3: the change loses messages", report["MQCTL_DIFF_CODE"])
	}
	checkLosingComment(t, f.read("mqctl-diff.md"))

	review := runGitLab(t, f, p, "mqctl-review", glMergeRequest, report)
	if got := skippedLines(review); len(got) != 3 {
		t.Errorf("lines skipped for the network: %q, want apk add, the note and the approvals", got)
	}
	v := review.ran(t, "mqctl-review")
	if v.code != 1 || !strings.Contains(v.out, "it needs 2 approvals, it has 0") {
		t.Errorf("job mqctl-review passed (exit %d) a change that loses messages without approvals:\n%s", v.code, v.out)
	}
	// Retried after a second approval: the approvals line (network) found 2.
	approved := map[string]string{"MQCTL_APPROVALS": "2"}
	for k, val := range report {
		approved[k] = val
	}
	if v := runGitLab(t, f, p, "mqctl-review", glMergeRequest, approved).ran(t, "mqctl-review"); v.code != 0 || !strings.Contains(v.out, "2 approvals accept it") {
		t.Errorf("with 2 approvals job mqctl-review exited %d:\n%s", v.code, v.out)
	}
}

func TestGitLabMergeRequestKeepingMessages(t *testing.T) {
	p := loadGitLab(t)
	f := newFixture(t, "orders")
	f.branch("describe", describes)

	if s := runGitLab(t, f, p, "mqctl-lint", glMergeRequest, nil).ran(t, "mqctl-lint"); s.code != 0 || strings.TrimSpace(s.out) != "no findings" {
		t.Errorf("lint of a clean file exited %d:\n%s", s.code, s.out)
	}
	runGitLab(t, f, p, "mqctl-diff", glMergeRequest, nil)
	report := dotenv(t, f, p.Jobs["mqctl-diff"])
	if code := report["MQCTL_DIFF_CODE"]; code != "0" && code != "2" {
		t.Errorf("mqctl diff --detailed-exitcode exited %s, want 0 or 2: a description loses no message", code)
	}
	checkKeepingComment(t, f.read("mqctl-diff.md"))
	if v := runGitLab(t, f, p, "mqctl-review", glMergeRequest, report).ran(t, "mqctl-review"); v.code != 0 {
		t.Errorf("job mqctl-review failed (exit %d) a change that loses no messages:\n%s", v.code, v.out)
	}
}

func TestGitLabPushToMain(t *testing.T) {
	p := loadGitLab(t)
	if got, want := p.jobsFor("push"), []string{"mqctl-apply"}; !slices.Equal(got, want) {
		t.Fatalf("jobs of a push = %v, want %v", got, want)
	}
	if r := p.Jobs["mqctl-apply"].Rules; len(r) != 1 || !strings.Contains(r[0].If, "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH") {
		t.Errorf("job mqctl-apply runs on a push to any branch: rules %v", r)
	}
	b, vhost := liveVhost(t)
	f := newFixture(t, vhost)
	vars := map[string]string{
		"CI_PIPELINE_SOURCE": "push",
		"CI_COMMIT_BRANCH":   "main",
		"CI_DEFAULT_BRANCH":  "main",
		// CI/CD variables of the production environment.
		"MQCTL_SERVER":   b.URL,
		"MQCTL_USERNAME": b.Username,
		"MQCTL_PASSWORD": b.Password,
	}
	if s := runGitLab(t, f, p, "mqctl-apply", vars, nil).ran(t, "mqctl-apply"); s.code != 0 {
		t.Fatalf("job mqctl-apply failed (exit %d)", s.code)
	}
	checkApplied(t, b, vhost)
	if s := runGitLab(t, f, p, "mqctl-apply", vars, nil).ran(t, "mqctl-apply"); s.code != 0 || !strings.Contains(s.out, "the broker already matches topology.yaml") {
		t.Errorf("the second run exited %d, want no changes and no apply:\n%s", s.code, s.out)
	}
}

// ---------------------------------------------------------------- checks

// rows are the rows of the flows tables whose first cell is mark.
func rows(md, mark string) []string {
	var out []string
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| "+mark+" |") {
			out = append(out, line)
		}
	}
	return out
}

func anyContains(lines []string, subs ...string) bool {
	for _, l := range lines {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			return true
		}
	}
	return false
}

// checkLosingComment: the comment on the narrowed binding and the
// misspelled dead-letter key says first that the change loses messages,
// flags each loss with :x: and names what is lost.
func checkLosingComment(t *testing.T, md string) {
	t.Helper()
	if !strings.HasPrefix(md, "### mqctl diff: ") {
		t.Errorf("the comment does not start with its heading:\n%s", md)
	}
	if !strings.Contains(md, ":warning: **This change loses messages.**") {
		t.Errorf("the comment's summary does not say the change loses messages:\n%s", md)
	}
	lost := rows(md, ":x:")
	if !anyContains(lost, `"billing"`, "biling") {
		t.Errorf("no :x: row for billing's dead letters, which billing.dlx has no binding for (key \"biling\"):\n%s", md)
	}
	if !anyContains(lost, `exchange "orders"`, `order.\*`) { // * escaped: Markdown would read it as emphasis
		t.Errorf("no :x: row for the order.* keys audit no longer gets and no queue gets instead:\n%s", md)
	}
	if !anyContains(rows(md, ":arrow_right:"), "order.shipped", "audit") {
		t.Errorf("no row for order.shipped, which now reaches shipping but no longer audit:\n%s", md)
	}
	if !strings.Contains(md, "<details><summary>Object changes") {
		t.Errorf("the object changes are not folded in <details>:\n%s", md)
	}
}

// checkKeepingComment: a change of a description flags nothing.
func checkKeepingComment(t *testing.T, md string) {
	t.Helper()
	if !strings.HasPrefix(md, "### mqctl diff: ") {
		t.Errorf("the comment does not start with its heading:\n%s", md)
	}
	if strings.Contains(md, ":x:") || strings.Contains(md, "loses messages") {
		t.Errorf("the comment on a description's change flags lost messages:\n%s", md)
	}
}

// checkApplied: the broker holds the fixture's queues in vhost.
func checkApplied(t *testing.T, b *testbroker.Broker, vhost string) {
	t.Helper()
	var queues []struct{ Name string }
	if err := json.Unmarshal(b.GetAPI(t, "queues/"+url.PathEscape(vhost)+"?columns=name"), &queues); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range queues {
		got = append(got, q.Name)
	}
	slices.Sort(got)
	if want := []string{"audit", "audit.dlq", "billing", "billing.dlq", "shipping", "shipping.dlq"}; !slices.Equal(got, want) {
		t.Errorf("vhost %s holds queues %v, want %v", vhost, got, want)
	}
}
