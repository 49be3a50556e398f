// Package certs makes the X.509 certificates of the secured test broker and of its clients:
// a certificate authority, and certificates it signs for a broker (server and client use:
// the broker talks TLS to itself between its listeners) or a client (mTLS). Keys are ECDSA
// P-256, written as unencrypted PKCS#8 PEM, which both Go's crypto/tls and Kafka's PEM key
// stores (ssl.keystore.type=PEM, KIP-651) read. Nothing made here is kept in the repository:
// scripts/kafka/kafka.sh makes the broker's set at every start, and tests make their client
// certificates as they run.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CA is a certificate authority that signs certificates.
type CA struct {
	// Cert is the CA's self-signed certificate.
	Cert *x509.Certificate
	// CertPEM is Cert, PEM encoded: what a trust store holds.
	CertPEM []byte
	key     crypto.Signer
}

// Validity of the certificates made here: from an hour ago (clock skew) to a day ahead;
// a test run is far shorter.
const (
	notBeforeSkew = time.Hour
	lifetime      = 24 * time.Hour
)

// NewCA makes a self-signed CA named CN=commonName.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-notBeforeSkew),
		NotAfter:              now.Add(lifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, CertPEM: pemBlock("CERTIFICATE", der), key: key}, nil
}

// LoadCA reads a CA from its PEM certificate and PEM (PKCS#8) private key, as written by
// [CA.KeyPEM]. Errors: malformed PEM, a key that does not match the certificate.
func LoadCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, errors.New("certs: no CERTIFICATE block in the CA certificate")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("certs: CA certificate: %w", err)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil || kb.Type != "PRIVATE KEY" {
		return nil, errors.New("certs: no PRIVATE KEY block in the CA key")
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("certs: CA key: %w", err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("certs: CA key of type %T cannot sign", k)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, fmt.Errorf("certs: CA key does not match its certificate: %w", err)
	}
	return &CA{Cert: cert, CertPEM: pemBlock("CERTIFICATE", cb.Bytes), key: signer}, nil
}

// KeyPEM returns the CA's private key as PKCS#8 PEM.
func (ca *CA) KeyPEM() ([]byte, error) { return keyPEM(ca.key) }

// Pool returns a certificate pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Issued is a certificate signed by a CA, with its private key.
type Issued struct {
	// CertPEM is the certificate chain in PEM: the certificate, then the CA's.
	CertPEM []byte
	// KeyPEM is the private key, unencrypted PKCS#8 PEM.
	KeyPEM []byte
}

// TLS returns the certificate for a tls.Config's Certificates.
func (i Issued) TLS() (tls.Certificate, error) { return tls.X509KeyPair(i.CertPEM, i.KeyPEM) }

// KeystorePEM returns the key followed by the chain: the single file of a Kafka PEM key store
// (ssl.keystore.type=PEM, ssl.keystore.location).
func (i Issued) KeystorePEM() []byte {
	return append(append([]byte{}, i.KeyPEM...), i.CertPEM...)
}

// Issue signs a certificate for subject CN=commonName, usable as a TLS server and client
// certificate, whose subject alternative names are hosts (IP addresses or DNS names; none for
// a client-only certificate). A broker's SSL principal for it is User:CN=commonName with
// Kafka's default ssl.principal.mapping.rules.
func (ca *CA) Issue(commonName string, hosts ...string) (Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Issued{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-notBeforeSkew),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return Issued{}, err
	}
	kp, err := keyPEM(key)
	if err != nil {
		return Issued{}, err
	}
	chain := append(pemBlock("CERTIFICATE", der), ca.CertPEM...)
	return Issued{CertPEM: chain, KeyPEM: kp}, nil
}

func keyPEM(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pemBlock("PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// serial returns a random 128-bit serial number (RFC 5280 allows up to 20 octets).
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
