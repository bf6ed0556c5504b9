package kind

import (
	"strings"
	"testing"
)

// TestMaskURI: the password of every form of URI a file or a broker gives
// is masked, the user and the rest kept; a URI without a password is kept
// whole; what does not parse is masked from :// to its last @.
func TestMaskURI(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"host and port", "amqp://shovel:s3cr3t@dc2.example.com:5672/orders", "amqp://shovel:***@dc2.example.com:5672/orders"},
		{"no host", "amqp://bob:s3cr3t@/v", "amqp://bob:***@/v"},
		{"no host, vhost \"\"", "amqp://bob:s3cr3t@/", "amqp://bob:***@/"},
		{"no host, no path", "amqp://bob:s3cr3t@", "amqp://bob:***@"},
		{"amqps, no host", "amqps://bob:s3cr3t@/v", "amqps://bob:***@/v"},
		{"a user alone", "amqp://bob@/v", "amqp://bob@/v"},
		{"no credentials", "amqp:///orders", "amqp:///orders"},
		{"a password without its @host", "amqp://bob:s3cr3t", "amqp://bob:***"},
		{"a password without its @host, a vhost", "amqps://bob:s3cr3t/v?password=k", "amqps://bob:***/v?password=***"},
		{"a host and port", "amqp://h:5672/v", "amqp://h:5672/v"},
		{"an IPv6 host", "amqp://[::1]:5672/v", "amqp://[::1]:5672/v"},
		{"percent-encoded", "amqp://b%40b:s3%3Acr%2F3t@/v", "amqp://b%40b:***@/v"},
		{"an @ in the vhost", "amqp://bob:s3cr3t@h/a@b", "amqp://bob:***@h/a@b"},
		{"an @ in the query", "amqp://h/v?x=a@b", "amqp://h/v?x=a@b"},
		{"a raw @ in the password", "amqp://bob:s3c@r3t@/v", "amqp://bob:***@/v"},
		{"a raw / in the password", "amqp://bob:s3c/r3t@h/v", "amqp://bob:***@h/v"},
		{"a raw / in the password after a digit", "amqp://bob:1/s3cr3t@h/v", "amqp://bob:***@h/v"},
		{"a bad escape in the password", "amqp://bob:s3c%zzr3t@/v", "amqp://bob:***@/v"},
		{"a raw / in the user", "amqp://bo/b:s3cr3t@/v", "amqp://***@/v"},
		{"a TLS key's password in the query", "amqps://bob:s3cr3t@h/v?certfile=/c.pem&password=s3key&keyfile=/k.pem",
			"amqps://bob:***@h/v?certfile=/c.pem&password=***&keyfile=/k.pem"},
		{"the query's password alone", "amqps://h/v?password=s3key", "amqps://h/v?password=***"},
		{"the query's password, a user alone", "amqps://bob@h/v?password=s3key#f", "amqps://bob@h/v?password=***#f"},
		{"the query's password, a raw / in the password", "amqps://bob:s3c/r3t@h/v?password=s3key", "amqps://bob:***@h/v?password=***"},
		{"the query's passwords, each", "amqps://h/v?password=s3a&password=s3b", "amqps://h/v?password=***&password=***"},
		{"a password in the fragment is none", "amqp://h/v#?password=x", "amqp://h/v#?password=x"},
		{"no scheme", "s3cr3t", Mask},
		{"empty", "", Mask},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := MaskURI(c.in)
			if got != c.want {
				t.Errorf("MaskURI(%q) = %q, want %q", c.in, got, c.want)
			}
			if strings.Contains(got, "s3") {
				t.Errorf("MaskURI(%q) = %q shows the password", c.in, got)
			}
		})
	}
}
