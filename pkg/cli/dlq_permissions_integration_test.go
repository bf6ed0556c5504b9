package cli_test

import (
	"fmt"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// TestDlqNamesTheMissingPermission: dlq peek and replay as a user whose
// permissions on the vhost do not cover them. Without read on the DLQ,
// both are refused before a message is read, naming the permission, the
// queue and the fix (before: the broker's ACCESS_REFUSED at the first
// basic.get; and from 4.3.1, where the user has no permission on the
// queue at all, the refusal of the passive declare, which names
// configure). Without write on the exchange a dead letter goes back to,
// replay fails each such message before publishing it, naming write on
// that exchange and the fix, and they stay in the DLQ (before: 4.3.6
// stopped at a passive declare's refusal naming configure, which the
// replay does not need; 4.0.5 and 3.10.8 at the publish's refusal, which
// closed the channel and counted a delivery of the message in flight).
// With read on the DLQ and write on the exchange, the replay passes.
func TestDlqNamesTheMissingPermission(t *testing.T) {
	t.Parallel()
	h, _, ch := dlqHarness(t, "m1", "m2")
	user, _, asUser := leastPrivilegeUser(t, h.b)
	fix := fmt.Sprintf("an administrator extends it: rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ", h.vhost, user)
	for _, tc := range []struct {
		name        string
		write, read string
		args        []string
		code        int
		want        string // in stderr, or stdout for replay's per-message failures
	}{
		{"peek without read on the DLQ", ".*", "^$", []string{"dlq", "peek", "orders.shipping.dlq"}, 1,
			fmt.Sprintf(`dlq peek: nothing was read: user %q lacks read permission on queue "orders.shipping.dlq" in vhost %q: its read regexp does not match "orders.shipping.dlq" (reading dead letters takes read on their queue); %s`, user, h.vhost, fix)},
		{"replay without read on the DLQ", ".*", "^$", []string{"dlq", "replay", "orders.shipping.dlq"}, 1,
			fmt.Sprintf(`dlq replay: nothing was read: user %q lacks read permission on queue "orders.shipping.dlq"`, user)},
		{"replay without write on the destination", "^$", `^orders\.shipping\.dlq$`, []string{"dlq", "replay", "orders.shipping.dlq"}, 1,
			fmt.Sprintf(`failed #1 (message id "m1"): user %q lacks write permission on exchange "orders" in vhost %q: its write regexp does not match "orders" (replaying a dead letter publishes it to its destination exchange); %s`, user, h.vhost, fix)},
		{"replay with both", "^orders$", `^orders\.shipping\.dlq$`, []string{"dlq", "replay", "orders.shipping.dlq"}, 0,
			"replayed 2, skipped 0, failed 0"},
	} {
		setPermissions(t, h.b, h.vhost, user, rabbithole.Permissions{Configure: "^$", Write: tc.write, Read: tc.read})
		r := asUser(h.env, append(tc.args, "--vhost", h.vhost)...)
		if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
			t.Errorf("%s: %s\nwant exit %d and\n  %s", tc.name, r, tc.code, tc.want)
		}
		if strings.Contains(r.stdout+r.stderr, "configure access") {
			t.Errorf("%s: names configure, which dlq does not need: %s", tc.name, r)
		}
		want := 2
		if tc.code == 0 {
			want = 0
		}
		waitReady(t, ch, "orders.shipping.dlq", want)
	}
}
