package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/pkg/plan"
)

// A user without the administrator tag cannot list users or permissions
// (401 on both 3.10.8 and 4.0.5): its plan of a file with a users section
// says which kinds it could not read and plans nothing for them, while it
// still plans the vhost's queues.
func TestUsersUnreadWithoutAdministrator(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	user, _, asUser := leastPrivilegeUser(t, h.b)
	setPermissions(t, h.b, h.vhost, user, rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"})
	f := h.write("users.yaml", `version: 1
vhosts:
  ${VHOST}:
    queues:
      work: {}
users:
  ${VHOST}-svc:
    password: "${SVC_PASSWORD}"
    tags: [management]
    permissions:
      ${VHOST}: { configure: "^$", write: "^$", read: "^work$" }
`)
	env := map[string]string{"VHOST": h.vhost, "SVC_PASSWORD": "pw-unread-7f3a"}
	r := asUser(env, "plan", "-f", f, "-o", "json")
	if r.code != 0 {
		t.Fatalf("plan as %s:\n%s", user, r)
	}
	var doc struct {
		Changes []plan.Change `json:"changes"`
		Unread  []plan.Unread `json:"unread"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range doc.Changes {
		got = append(got, string(c.Action)+" "+string(c.Kind)+" "+c.Name)
	}
	if len(got) != 1 || got[0] != "create queue work" {
		t.Errorf("changes = %v, want only the queue (users and permissions unknown)", got)
	}
	unread := map[string]plan.Unread{}
	for _, u := range doc.Unread {
		unread[string(u.Kind)+"@"+u.Vhost] = u
	}
	for _, want := range []string{"user@", "permission@" + h.vhost} {
		u, ok := unread[want]
		if !ok {
			t.Errorf("unread lacks %s: %+v", want, doc.Unread)
			continue
		}
		if u.Declared != 1 || !strings.Contains(u.Reason, user) {
			t.Errorf("unread %s = %+v, want 1 declared and the broker's refusal naming %s", want, u, user)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "pw-unread-7f3a") {
		t.Errorf("the plan shows the password:\n%s", r)
	}
	text := asUser(env, "plan", "-f", f)
	if !strings.Contains(text.stdout, "Not read, so not planned:") || !strings.Contains(text.stdout, "users on the broker (1 in the file left out)") {
		t.Errorf("the text plan does not say users were not read:\n%s", text)
	}
}
