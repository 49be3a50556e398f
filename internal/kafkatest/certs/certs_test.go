package certs

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
)

func TestIssueVerifiesAgainstItsCAOnly(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCA("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Issue("broker", "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := srv.TLS()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(kp.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Subject.String() != "CN=broker" || len(kp.Certificate) != 2 {
		t.Fatalf("subject %q, chain of %d", leaf.Subject, len(kp.Certificate))
	}
	if !leaf.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) || leaf.DNSNames[0] != "localhost" {
		t.Fatalf("SANs %v %v", leaf.IPAddresses, leaf.DNSNames)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("verify for %v: %v", usage, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: other.Pool()}); err == nil {
		t.Error("verified against another CA")
	}

	// The CA survives a round trip through its PEM files and still signs.
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadCA(ca.CertPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := back.Issue("client")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(cl.CertPEM, cl.KeyPEM); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCA(other.CertPEM, keyPEM); err == nil {
		t.Error("LoadCA accepted a key of another CA")
	}
	if ks := srv.KeystorePEM(); len(ks) != len(srv.KeyPEM)+len(srv.CertPEM) {
		t.Errorf("key store PEM of %d bytes", len(ks))
	}
}
