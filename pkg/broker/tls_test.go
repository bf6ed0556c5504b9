package broker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/lock"
)

// Tests in this file use the TLS listeners of scripts/broker: the management
// API over HTTPS and AMQPS, with the throwaway CA and client certificate the
// script made.

// TestServerCertificateCoversLocalNames: the server certificate verifies
// against the CA for both localhost and 127.0.0.1, on both listeners.
func TestServerCertificateCoversLocalNames(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	x := b.TLS(t)
	pool := caPool(t, x.CACert)
	port := strings.TrimPrefix(x.ManagementURL, "https://localhost:")
	for _, host := range []string{"localhost", "127.0.0.1"} {
		for _, p := range []string{port, strconv.Itoa(x.AMQPSPort)} {
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(host, p),
				&tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12})
			if err != nil {
				t.Errorf("TLS to %s:%s with the CA: %v", host, p, err)
				continue
			}
			conn.Close()
		}
	}
}

// TestConnectOverTLS: the management API over HTTPS with --ca-cert, with a
// client certificate, with --insecure-skip-verify; the AMQP URL that goes
// with it is amqps on the broker's TLS listener, and the apply lock opens
// there, presenting the client certificate when one is configured.
func TestConnectOverTLS(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	x := b.TLS(t)

	tests := []struct {
		name        string
		cfg         broker.Config
		wantSubject string // peer_cert_subject of the AMQPS connection
	}{
		{"CA only", broker.Config{Server: x.ManagementURL, CACert: x.CACert}, ""},
		{"CA and client certificate", broker.Config{Server: x.ManagementURL, CACert: x.CACert, ClientCert: x.ClientCert, ClientKey: x.ClientKey}, testbroker.ClientCertSubject},
		{"127.0.0.1 as host", broker.Config{Server: strings.Replace(x.ManagementURL, "localhost", "127.0.0.1", 1), CACert: x.CACert}, ""},
		{"insecure-skip-verify", broker.Config{Server: x.ManagementURL, InsecureSkipVerify: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each waits for the broker to list its connection
			vh := b.Vhost(t)
			ctx := t.Context()
			tt.cfg.Username, tt.cfg.Password = b.Username, b.Password
			c, err := broker.Connect(ctx, tt.cfg)
			if err != nil {
				t.Fatalf("Connect over HTTPS: %v", err)
			}
			if c.Version() == "" {
				t.Error("no broker version read over HTTPS")
			}
			names, err := c.VhostNames(ctx)
			if err != nil || !contains(names, vh) {
				t.Errorf("VhostNames over HTTPS = %v, %v; want it to list %s", names, err, vh)
			}
			amqpURL, err := c.AMQPURL(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(amqpURL)
			if u.Scheme != "amqps" || u.Port() != strconv.Itoa(x.AMQPSPort) {
				t.Fatalf("AMQPURL = %s, want amqps on port %d", broker.MaskURL(amqpURL), x.AMQPSPort)
			}
			name := "mqctl tls test " + testbroker.Name(t, "conn")
			lk, err := lock.Acquire(ctx, vh, lock.Options{URL: amqpURL, TLS: c.TLSConfig(), Name: name})
			if err != nil {
				t.Fatalf("apply lock over AMQPS: %v", err)
			}
			defer lk.Release()
			conn := b.WaitConnection(t, name)
			if !conn.UsesTLS {
				t.Errorf("the lock's connection %s is not TLS", conn.Name)
			}
			if conn.PeerCertSubject != tt.wantSubject {
				t.Errorf("the lock's connection presented client certificate %q, want %q", conn.PeerCertSubject, tt.wantSubject)
			}
		})
	}
}

// TestTLSFailures: a server certificate from another CA, https to the plain
// listener, and http to the TLS listener each give one line naming the
// server and the fix, never the password.
func TestTLSFailures(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	x := b.TLS(t)
	otherCA := testbroker.WriteOtherCA(t)
	const pw = "Tls-Secret-Pw-9"
	plainHTTPS := strings.Replace(b.URL, "http://", "https://", 1)
	tests := []struct {
		name string
		cfg  broker.Config
		is   error
		want []string
	}{
		{"wrong CA", broker.Config{Server: x.ManagementURL, CACert: otherCA}, broker.ErrTLS,
			[]string{"TLS handshake with " + x.ManagementURL + " failed", "certificate", "--ca-cert"}},
		{"no CA (system pool)", broker.Config{Server: x.ManagementURL}, broker.ErrTLS,
			[]string{"TLS handshake with " + x.ManagementURL + " failed", "certificate signed by unknown authority", "--ca-cert"}},
		{"https to the plain listener", broker.Config{Server: plainHTTPS, CACert: x.CACert}, broker.ErrTLS,
			[]string{"TLS handshake with " + plainHTTPS + " failed", "does not speak TLS", "use http://"}},
		{"password in the URL, wrong CA", broker.Config{Server: strings.Replace(x.ManagementURL, "https://", "https://guest:"+pw+"@", 1), CACert: otherCA}, broker.ErrTLS,
			[]string{"TLS handshake with " + x.ManagementURL + " failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.Username == "" && !strings.Contains(tt.cfg.Server, "@") {
				tt.cfg.Username, tt.cfg.Password = b.Username, pw
			}
			_, err := broker.Connect(t.Context(), tt.cfg)
			if !errors.Is(err, tt.is) {
				t.Fatalf("error = %v, want one wrapping %v", err, tt.is)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n  %s\ndoes not contain %q", msg, w)
				}
			}
			if strings.ContainsAny(msg, "\r\n") || strings.Contains(msg, pw) {
				t.Errorf("error is not one line without the password: %q", msg)
			}
		})
	}
}

func caPool(t *testing.T, file string) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		t.Fatalf("%s holds no certificate", file)
	}
	return pool
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
