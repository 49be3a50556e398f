package kafka_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest/certs"
)

// handshake runs a TLS handshake between a client and a server configured so, and then a
// read on the client (TLS 1.3 servers check the client's certificate after the client's side
// of the handshake is done: their verdict arrives with the first read). It returns the
// client's error.
func handshake(t *testing.T, client, server *tls.Config) error {
	t.Helper()
	cc, sc := net.Pipe()
	defer cc.Close()
	go func() {
		s := tls.Server(sc, server)
		if err := s.Handshake(); err == nil {
			_, _ = s.Write([]byte("ok"))
		}
		s.Close()
	}()
	c := tls.Client(cc, client)
	if err := c.Handshake(); err != nil {
		return err
	}
	_, err := io.ReadFull(c, make([]byte, 2))
	return err
}

func TestAuthErrorTLS(t *testing.T) {
	ca, err := certs.NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	issue := func(ca *certs.CA, cn string, hosts ...string) tls.Certificate {
		is, err := ca.Issue(cn, hosts...)
		if err != nil {
			t.Fatal(err)
		}
		kp, err := is.TLS()
		if err != nil {
			t.Fatal(err)
		}
		return kp
	}
	srvCert := issue(ca, "broker", "127.0.0.1")
	server := &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}
	good := issue(ca, "app")
	untrusted := issue(other, "app")
	// A client that presents its certificate whatever CAs the server asks for.
	present := func(c tls.Certificate) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c, nil }
	}
	cases := []struct {
		name   string
		client *tls.Config
		auth   bool
	}{
		{"trusted both ways", &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{good}}, false},
		{"broker certificate of an unknown CA", &tls.Config{RootCAs: other.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{good}}, true},
		{"broker certificate for another host", &tls.Config{RootCAs: ca.Pool(), ServerName: "kafka.example", Certificates: []tls.Certificate{good}}, true},
		{"client certificate of an unknown CA", &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", GetClientCertificate: present(untrusted)}, true},
		{"no client certificate", &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}, true},
	}
	for _, c := range cases {
		err := handshake(t, c.client, server)
		if (err != nil) != c.auth {
			t.Errorf("%s: handshake error %v", c.name, err)
			continue
		}
		wrapped := fmt.Errorf("connect to broker 1 (127.0.0.1:9093): %w", sarama.Wrap(sarama.ErrOutOfBrokers, err))
		if got := kafka.AuthError(wrapped); got != c.auth {
			t.Errorf("%s: AuthError(%v) = %v, want %v", c.name, err, got, c.auth)
		}
		if c.auth && kafka.Retriable(wrapped) {
			t.Errorf("%s: Retriable(%v) = true", c.name, err)
		}
		if err == nil {
			continue
		}
		if ce := kafka.ConnectError([]string{"127.0.0.1:9093"}, err); !strings.Contains(ce.Error(), "TLS authentication failed") ||
			!errors.Is(ce, err) {
			t.Errorf("%s: ConnectError: %v", c.name, ce)
		}
	}
}

func TestAuthErrorCodesAndTransport(t *testing.T) {
	for _, k := range []sarama.KError{sarama.ErrTopicAuthorizationFailed, sarama.ErrGroupAuthorizationFailed,
		sarama.ErrTransactionalIDAuthorizationFailed, sarama.ErrClusterAuthorizationFailed, sarama.ErrSASLAuthenticationFailed} {
		err := fmt.Errorf("group %q: %w", "g", k)
		if !kafka.AuthError(err) || kafka.Retriable(err) {
			t.Errorf("%v: AuthError %v, Retriable %v", k, kafka.AuthError(err), kafka.Retriable(err))
		}
	}
	for _, err := range []error{io.EOF, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		&net.OpError{Op: "remote error", Err: errors.New("tls: internal error")}, sarama.ErrNotLeaderForPartition} {
		if kafka.AuthError(err) || !kafka.Retriable(err) {
			t.Errorf("%v: AuthError %v, Retriable %v", err, kafka.AuthError(err), kafka.Retriable(err))
		}
	}
	if kafka.AuthError(nil) {
		t.Error("AuthError(nil)")
	}
}
