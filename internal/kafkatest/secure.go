package kafkatest

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kstreams-go/kstreams/internal/kafkatest/certs"
)

// EnvSecure names the environment variable that holds the path of the secured broker's
// description (secure.json, written by `scripts/kafka/kafka.sh up secure`). `make test` sets
// it after starting that broker.
const EnvSecure = "KAFKA_SECURE_CONFIG"

// SecureBroker is a broker whose clients authenticate and are authorized by ACLs: the secured
// Apache Kafka node that `make test` starts beside the plain one ([Secure]), or a kfake
// cluster with TLS, SASL and ACLs ([EmbeddedSecure]).
type SecureBroker struct {
	// Kind says whether this is Apache Kafka or kfake.
	Kind Kind
	// SASLSSL are the bootstrap addresses of the SASL_SSL listener (mechanism Mechanism).
	SASLSSL []string
	// SSL are the bootstrap addresses of the SSL listener that requires client certificates
	// signed by CA (principal User:CN=<common name>); empty on kfake, which does not map
	// certificates to principals.
	SSL []string
	// OAuthBearer are the bootstrap addresses of the SASL_SSL listener with mechanism
	// OAUTHBEARER, validated by Kafka's unsecured-JWS validator (an unsigned token whose "sub"
	// claim is the principal; see [UnsecuredToken]); its sessions end when their token
	// expires, so clients must re-authenticate (connections.max.reauth.ms). Empty on kfake,
	// and on a broker started by an older kafka.sh.
	OAuthBearer []string
	// Mechanism is the SASL mechanism of the SASL_SSL listener: SCRAM-SHA-512.
	Mechanism string
	// AdminUser and AdminPassword are a super user's SCRAM credentials, for the test's own
	// admin work (creating topics, users and ACLs, producing input, reading output).
	AdminUser, AdminPassword string
	// CA signed the broker's certificate and is the only one the broker trusts for client
	// certificates; tests issue client certificates with it.
	CA *certs.CA
	// Cluster is the kfake cluster when Kind is Kfake, else nil.
	Cluster *kfake.Cluster

	refuse *atomic.Bool // EmbeddedMTLS: refuse every client certificate
}

// secureFile is the JSON that `kafka.sh up secure` writes.
type secureFile struct {
	SASLSSL       string `json:"sasl_ssl"`
	SSL           string `json:"ssl"`
	OAuthBearer   string `json:"sasl_oauthbearer"`
	Mechanism     string `json:"sasl_mechanism"`
	AdminUser     string `json:"admin_user"`
	AdminPassword string `json:"admin_password"`
	CACert        string `json:"ca_cert"`
	CAKey         string `json:"ca_key"`
}

// Secure returns the secured Apache Kafka broker described by the file KAFKA_SECURE_CONFIG
// names. When the variable is unset or empty it skips the test, saying how to run it; an
// unreadable description fails it.
func Secure(t testing.TB) SecureBroker {
	t.Helper()
	path := strings.TrimSpace(os.Getenv(EnvSecure))
	if path == "" {
		t.Skipf("integration test: %s is not set; run `make test` (it starts the secured Apache Kafka node too), "+
			"or export %s=$(scripts/kafka/kafka.sh up secure)", EnvSecure, EnvSecure)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("kafkatest: %s: %v", EnvSecure, err)
	}
	var f secureFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("kafkatest: %s (%s): %v", EnvSecure, path, err)
	}
	certPEM, err := os.ReadFile(f.CACert)
	if err != nil {
		t.Fatalf("kafkatest: CA certificate: %v", err)
	}
	keyPEM, err := os.ReadFile(f.CAKey)
	if err != nil {
		t.Fatalf("kafkatest: CA key: %v", err)
	}
	ca, err := certs.LoadCA(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	sb := SecureBroker{Kind: ApacheKafka, SASLSSL: []string{f.SASLSSL}, SSL: []string{f.SSL}, Mechanism: f.Mechanism,
		AdminUser: f.AdminUser, AdminPassword: f.AdminPassword, CA: ca}
	if f.OAuthBearer != "" {
		sb.OAuthBearer = []string{f.OAuthBearer}
	}
	return sb
}

// EmbeddedSecure starts a kfake cluster (one broker, as [Embedded]) that listens with TLS (a
// certificate for 127.0.0.1 from a fresh CA), authenticates with SASL (SCRAM-SHA-512 super
// user "admin" with a random password) and checks ACLs; opts come after these. It is closed
// when the test ends.
func EmbeddedSecure(t testing.TB, opts ...kfake.Opt) SecureBroker {
	t.Helper()
	ca, err := certs.NewCA("kfake-test-ca")
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	srv, err := ca.Issue("kfake", "127.0.0.1", "localhost")
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	kp, err := srv.TLS()
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	pass := RandomPassword(t)
	all := append([]kfake.Opt{
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{kp}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "admin", pass),
		kfake.EnableACLs(),
	}, opts...)
	b := Embedded(t, all...)
	return SecureBroker{Kind: Kfake, SASLSSL: b.Addrs, Mechanism: "SCRAM-SHA-512", AdminUser: "admin", AdminPassword: pass,
		CA: ca, Cluster: b.Cluster}
}

// TrustingTLS returns a client TLS configuration that trusts only the broker's CA, with the
// client certificates certs (none for SASL_SSL).
func (s SecureBroker) TrustingTLS(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: s.CA.Pool(), Certificates: certs, MinVersion: tls.VersionTLS12}
}

// ClientCert issues a client certificate for subject CN=commonName signed by the broker's CA:
// the SSL listener's principal User:CN=commonName.
func (s SecureBroker) ClientCert(t testing.TB, commonName string) tls.Certificate {
	t.Helper()
	is, err := s.CA.Issue(commonName)
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	kp, err := is.TLS()
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	return kp
}

// RandomPassword returns 24 random URL-safe characters.
func RandomPassword(t testing.TB) string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// EmbeddedMTLS starts a kfake cluster (one broker) whose TLS listener requires client
// certificates signed by a fresh CA (no SASL, no ACLs: kfake does not map certificates to
// principals). The result's SSL holds its addresses; [SecureBroker.RefuseClientCertificates]
// makes it refuse every client certificate from then on. It is closed when the test ends.
func EmbeddedMTLS(t testing.TB, opts ...kfake.Opt) SecureBroker {
	t.Helper()
	ca, err := certs.NewCA("kfake-test-ca")
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	srv, err := ca.Issue("kfake", "127.0.0.1", "localhost")
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	kp, err := srv.TLS()
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	refuse := new(atomic.Bool)
	all := append([]kfake.Opt{kfake.TLS(&tls.Config{Certificates: []tls.Certificate{kp}, MinVersion: tls.VersionTLS12,
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(),
		VerifyConnection: func(tls.ConnectionState) error {
			if refuse.Load() {
				return errors.New("kafkatest: client certificates refused") // the client gets alert bad_certificate
			}
			return nil
		}})}, opts...)
	b := Embedded(t, all...)
	return SecureBroker{Kind: Kfake, SSL: b.Addrs, CA: ca, Cluster: b.Cluster, refuse: refuse}
}

// RefuseClientCertificates makes a broker of [EmbeddedMTLS] refuse the client certificate of
// every TLS handshake from now on (alert bad_certificate), as a broker that no longer trusts
// the client's CA; connections made before stay open. It fails the test on other brokers.
func (s SecureBroker) RefuseClientCertificates(t testing.TB) {
	t.Helper()
	if s.refuse == nil {
		t.Fatal("kafkatest: RefuseClientCertificates needs a broker of EmbeddedMTLS")
	}
	s.refuse.Store(true)
}

// MTLSSaramaConfig returns [SaramaConfig] with TLS on, trusting only the broker's CA and
// presenting a client certificate for CN=commonName signed by it: a client of the SSL listener.
func (s SecureBroker) MTLSSaramaConfig(t testing.TB, commonName string) *sarama.Config {
	t.Helper()
	sc := SaramaConfig()
	sc.Net.TLS.Enable, sc.Net.TLS.Config = true, s.TrustingTLS(s.ClientCert(t, commonName))
	return sc
}

// UnsecuredToken returns an unsigned JWS ({"alg":"none"}) for principal sub, issued now and
// expiring after lifetime, as Kafka's unsecured login makes them: what the OAuthBearer
// listener accepts.
func UnsecuredToken(t testing.TB, sub string, lifetime time.Duration) (string, time.Time) {
	t.Helper()
	now := time.Now()
	exp := now.Add(lifetime)
	payload, err := json.Marshal(map[string]any{"sub": sub, "iat": float64(now.UnixMilli()) / 1000, "exp": float64(exp.UnixMilli()) / 1000})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(payload) + ".", time.UnixMilli(exp.UnixMilli())
}
