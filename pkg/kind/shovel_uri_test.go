package kind

import "testing"

// TestURIVhost: a URI's host and vhost as RabbitMQ's amqp_uri reads them:
// the default vhost only without a path, the path's rest (unescaped)
// otherwise, so amqp:/// is vhost "" (refused by every broker, see
// rmqversion's TestRefusedSettingsAgainstBroker).
func TestURIVhost(t *testing.T) {
	for _, c := range []struct {
		uri, vhost, host string
		ok               bool
	}{
		{"amqp://", "/", "", true},
		{"amqp:///", "", "", true},
		{"amqp:///orders", "orders", "", true},
		{"amqp:///%2F", "/", "", true},
		{"amqp:///team%20a?heartbeat=5", "team a", "", true},
		{"amqp://h", "/", "h", true},
		{"amqp://u:pw@h:5672/v", "v", "h:5672", true},
		{"amqp://u:p@ss@h/", "", "h", true},
		{"amqps://h/v", "v", "h", true},
		{"amqp:///a/b", "", "", false},
		{"http://h/v", "", "", false},
	} {
		vhost, host, ok := URIVhost(c.uri)
		if vhost != c.vhost || host != c.host || ok != c.ok {
			t.Errorf("URIVhost(%q) = %q, %q, %v; want %q, %q, %v", c.uri, vhost, host, ok, c.vhost, c.host, c.ok)
		}
	}
}
