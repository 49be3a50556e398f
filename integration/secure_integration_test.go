package integration_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/kafkatest/certs"
)

// The word count on a secured broker: SASL_SSL with SCRAM-SHA-512 and SSL with client
// certificates (mTLS), under exactly_once_v2, as a principal that holds only the ACLs Kafka
// Streams documents as needed; and the ways it must fail, fast and naming the cause, with
// nothing committed: a principal without the prefixed ACLs (or without the group's, or the
// transactional ids'), a wrong password, a client certificate the broker does not trust, a
// broker certificate the client does not trust. On the secured Apache Kafka node that
// `make test` starts (TestIntegrationSecure...) and on kfake with TLS, SASL and ACLs
// (TestEmbeddedSecure...; kfake does not map certificates to principals, so the mTLS word count
// runs on Kafka only).

// failWithin bounds how long a misconfigured application may take to fail.
const failWithin = 15 * time.Second

// streamsGrant says which of the ACLs a Kafka Streams principal needs it gets.
type streamsGrant struct {
	internalTopics, group, transactionalIDs, input, output bool
}

var fullGrant = streamsGrant{internalTopics: true, group: true, transactionalIDs: true, input: true, output: true}

// streamsACLs are the ACLs of a Kafka Streams application's principal, as Kafka Streams'
// security guide ("Required ACL setting for secure Kafka clusters",
// docs/streams/developer-guide/security.html) lists them: every internal topic and the
// consumer group are named after application.id, so they get ACLs on the prefixed resource
// pattern application.id (KIP-290), as do the transactional ids of exactly-once producers
// (<application.id>-<process id>-<thread>); the input topics need READ, the output topics
// WRITE. For the internal topics the guide suggests operation All; granted here are the ones
// Kafka Streams uses (CREATE them, READ, WRITE, DESCRIBE; DESCRIBE_CONFIGS to validate
// existing ones and DELETE to purge repartition records, which Java does and we do not yet), so
// that a Go instance runs with exactly the ACLs a Java one needs. The group needs READ
// (Join/Sync/Heartbeat, offset commits) and DESCRIBE (FindCoordinator, OffsetFetch), the
// transactional ids WRITE (InitProducerId, AddPartitionsToTxn, EndTxn) and DESCRIBE
// (FindCoordinator). No cluster ACL: since Kafka 3.0 WRITE on a topic allows an idempotent
// producer (KIP-679).
func streamsACLs(principal, appID, input, output string, g streamsGrant) []*sarama.ResourceAcls {
	acl := func(rt sarama.AclResourceType, name string, pt sarama.AclResourcePatternType, ops ...sarama.AclOperation) *sarama.ResourceAcls {
		ra := &sarama.ResourceAcls{Resource: sarama.Resource{ResourceType: rt, ResourceName: name, ResourcePatternType: pt}}
		for _, op := range ops {
			ra.Acls = append(ra.Acls, &sarama.Acl{Principal: principal, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow})
		}
		return ra
	}
	var out []*sarama.ResourceAcls
	if g.internalTopics {
		out = append(out, acl(sarama.AclResourceTopic, appID, sarama.AclPatternPrefixed, sarama.AclOperationCreate, sarama.AclOperationRead,
			sarama.AclOperationWrite, sarama.AclOperationDescribe, sarama.AclOperationDescribeConfigs, sarama.AclOperationDelete))
	}
	if g.group {
		out = append(out, acl(sarama.AclResourceGroup, appID, sarama.AclPatternPrefixed, sarama.AclOperationRead, sarama.AclOperationDescribe))
	}
	if g.transactionalIDs {
		out = append(out, acl(sarama.AclResourceTransactionalID, appID, sarama.AclPatternPrefixed, sarama.AclOperationWrite, sarama.AclOperationDescribe))
	}
	if g.input {
		out = append(out, acl(sarama.AclResourceTopic, input, sarama.AclPatternLiteral, sarama.AclOperationRead))
	}
	if g.output {
		out = append(out, acl(sarama.AclResourceTopic, output, sarama.AclPatternLiteral, sarama.AclOperationWrite))
	}
	return out
}

// secureEnv is a secured broker with the test's super-user client configuration.
type secureEnv struct {
	sb kafkatest.SecureBroker
	// admin is the super user's security configuration, as an application's: SASL_SSL, or on
	// a kfake that only has an mTLS listener (no ACLs), SSL with a certificate of the CA.
	admin kstreams.Config
	addrs []string
}

func newSecureEnv(t testing.TB, sb kafkatest.SecureBroker) *secureEnv {
	if len(sb.SASLSSL) == 0 {
		return &secureEnv{sb: sb, addrs: sb.SSL, admin: kstreams.Config{BootstrapServers: sb.SSL, SecurityProtocol: "SSL",
			TLS: sb.TrustingTLS(sb.ClientCert(t, "admin"))}}
	}
	return &secureEnv{sb: sb, addrs: sb.SASLSSL, admin: kstreams.Config{BootstrapServers: sb.SASLSSL, SecurityProtocol: "SASL_SSL",
		SASLMechanism: sb.Mechanism, SASLUsername: sb.AdminUser, SASLPassword: sb.AdminPassword, TLS: sb.TrustingTLS()}}
}

// adminSarama returns a test client configuration (kafkatest.SaramaConfig) that authenticates
// as the super user, with the security settings an application with e.admin would use.
func (e *secureEnv) adminSarama() *sarama.Config {
	sc := kafkatest.SaramaConfig()
	base := e.admin.SaramaConfig()
	sc.Net.TLS, sc.Net.SASL = base.Net.TLS, base.Net.SASL
	return sc
}

func (e *secureEnv) adminClient(t testing.TB) sarama.ClusterAdmin {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(e.addrs, e.adminSarama())
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin
}

// scramUser creates a SCRAM-SHA-512 user with a random password and returns the password once
// the broker authenticates the user.
func (e *secureEnv) scramUser(t testing.TB, admin sarama.ClusterAdmin, user string) string {
	t.Helper()
	pass := kafkatest.RandomPassword(t)
	res, err := admin.UpsertUserScramCredentials([]sarama.AlterUserScramCredentialsUpsert{{
		// A salt of our own: sarama sends a missing one as null, which Kafka refuses.
		Name: user, Mechanism: sarama.SCRAM_MECHANISM_SHA_512, Iterations: 4096, Salt: []byte(kafkatest.RandomPassword(t)), Password: []byte(pass)}})
	if err != nil {
		t.Fatalf("create SCRAM user %s: %v", user, err)
	}
	for _, r := range res {
		if r.ErrorCode != sarama.ErrNoError {
			t.Fatalf("create SCRAM user %s: %v", user, r.ErrorCode)
		}
	}
	// The credential reaches the broker's authenticator through the metadata log: wait until
	// a connection as the user authenticates.
	cfg := e.admin
	cfg.SASLUsername, cfg.SASLPassword = user, pass
	sc := cfg.SaramaConfig()
	sc.Metadata.Retry.Max = 0
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := sarama.NewClient(e.sb.SASLSSL, sc)
		if err == nil {
			c.Close()
			return pass
		}
		if time.Now().After(deadline) {
			t.Fatalf("SCRAM user %s does not authenticate: %v", user, err)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// grant creates the ACLs and waits until the broker lists them all.
func (e *secureEnv) grant(t testing.TB, admin sarama.ClusterAdmin, principal string, acls []*sarama.ResourceAcls) {
	t.Helper()
	if len(acls) == 0 {
		return
	}
	if err := admin.CreateACLs(acls); err != nil {
		t.Fatalf("create ACLs for %s: %v", principal, err)
	}
	want := 0
	for _, ra := range acls {
		want += len(ra.Acls)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := admin.ListAcls(sarama.AclFilter{Version: 1, ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternAny,
			Principal: &principal, Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny})
		n := 0
		for _, ra := range got {
			n += len(ra.Acls)
		}
		if err == nil && n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ACLs of %s: %d of %d listed (%v)", principal, n, want, err)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// secureApp is one application of a test: its names and its principal's client settings.
type secureApp struct {
	appID, input, output string
	// security is applied to the application's configuration.
	security func(*kstreams.Config)
}

func (e *secureEnv) newSecureApp(t *testing.T, prefix string) *secureApp {
	return &secureApp{appID: kafkatest.Name(t, prefix), input: kafkatest.Name(t, "sec-lines"), output: kafkatest.Name(t, "sec-counts")}
}

// scramPrincipal makes a SCRAM user for a (granted g) and has a authenticate as it with
// password (the user's own when password is "").
func (e *secureEnv) scramPrincipal(t *testing.T, admin sarama.ClusterAdmin, a *secureApp, g streamsGrant, password string) {
	user := kafkatest.Name(t, "user")
	pass := e.scramUser(t, admin, user)
	e.grant(t, admin, "User:"+user, streamsACLs("User:"+user, a.appID, a.input, a.output, g))
	if password == "" {
		password = pass
	}
	a.security = func(c *kstreams.Config) {
		c.BootstrapServers, c.SecurityProtocol, c.SASLMechanism = e.sb.SASLSSL, "SASL_SSL", e.sb.Mechanism
		c.SASLUsername, c.SASLPassword, c.TLS = user, password, e.sb.TrustingTLS()
	}
}

// certPrincipal issues a client certificate for a (granted g through admin, unless admin is nil)
// signed by issuer (the broker's CA when nil) and has a use it on the SSL listener.
func (e *secureEnv) certPrincipal(t *testing.T, admin sarama.ClusterAdmin, a *secureApp, g streamsGrant, issuer *certs.CA) {
	cn := kafkatest.Name(t, "cert")
	if admin != nil { // nil: a broker without ACLs
		e.grant(t, admin, "User:CN="+cn, streamsACLs("User:CN="+cn, a.appID, a.input, a.output, g))
	}
	var cert tls.Certificate
	if issuer == nil {
		cert = e.sb.ClientCert(t, cn)
	} else {
		is, err := issuer.Issue(cn)
		if err != nil {
			t.Fatal(err)
		}
		if cert, err = is.TLS(); err != nil {
			t.Fatal(err)
		}
	}
	a.security = func(c *kstreams.Config) {
		c.BootstrapServers, c.SecurityProtocol, c.TLS = e.sb.SSL, "SSL", e.sb.TrustingTLS(cert)
		if issuer != nil {
			// Present the certificate although the broker asks for its own CA's (crypto/tls
			// would send none, and the broker refuse the missing certificate instead).
			c.TLS.Certificates = nil
			c.TLS.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
		}
	}
}

// config is the application's configuration: the word count's settings of newApp plus the
// principal's security.
func (a *secureApp) config(t *testing.T, guarantee kstreams.ProcessingGuarantee) kstreams.Config {
	c := kstreams.Config{ApplicationID: a.appID, NumStreamThreads: 2, ProcessingGuarantee: guarantee,
		CommitInterval: 200 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer}
	a.security(&c)
	return c
}

// wordCount runs the word count of a's topics to exact counts under exactly_once_v2 with a's
// principal, reading the output read_committed as the super user.
func (e *secureEnv) wordCount(t *testing.T, a *secureApp) {
	createTopicsWith(t, e.addrs, e.adminSarama(), 3, a.input, a.output)
	want := produceLinesWith(t, e.addrs, e.adminSarama(), a.input, 1000, 18)
	app, err := kstreams.New(wordCountTopology(t, a.input, a.output), a.config(t, kstreams.ExactlyOnceV2))
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	out := readOutputWith(t, e.addrs, e.adminSarama(), a.output, sarama.ReadCommitted)
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	out.checkExactSequences(t, want)
	closeApp(t, app)
	if err := app.Err(); err != nil {
		t.Fatalf("application error: %v", err)
	}
}

// failure is how an application must fail: its error's text holds every one of words
// (case-insensitively), and errors.Is(err, is) when is is set.
type failure struct {
	words []string
	is    error
	// offsetsMayCommit: the failure comes after the first sub-topology may have committed
	// (its repartition records become readable only so, under exactly-once); the output must
	// still be empty.
	offsetsMayCommit bool
}

// expectFailure starts the word count of a (its topics created and filled by the super user)
// and checks that Start fails, or the instance moves to ERROR, within failWithin with the
// error f describes; then that nothing was committed: no offsets of the group, no output
// record (read_committed or not).
func (e *secureEnv) expectFailure(t *testing.T, a *secureApp, f failure) {
	createTopicsWith(t, e.addrs, e.adminSarama(), 3, a.input, a.output)
	produceLinesWith(t, e.addrs, e.adminSarama(), a.input, 100, 18)
	app, err := kstreams.New(wordCountTopology(t, a.input, a.output), a.config(t, kstreams.ExactlyOnceV2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // also after a failed Start: it releases the state directory
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = app.Close(ctx)
	})
	began := time.Now()
	err = app.Start(context.Background())
	if err == nil {
		select {
		case <-app.Done():
			err = app.Err()
		case <-time.After(failWithin):
			t.Fatalf("the application did not fail within %v (state %s)", failWithin, app.State())
		}
	}
	took := time.Since(began)
	if err == nil {
		t.Fatalf("the application stopped without an error (state %s)", app.State())
	}
	t.Logf("failed after %v: %v", took.Round(time.Millisecond), err)
	if took > failWithin {
		t.Errorf("failing took %v, more than %v", took, failWithin)
	}
	if st := app.State(); st != kstreams.StateError {
		t.Errorf("state %s, want ERROR", st)
	}
	msg := strings.ToLower(err.Error())
	for _, w := range f.words {
		if !strings.Contains(msg, strings.ToLower(w)) {
			t.Errorf("the error does not name %q: %v", w, err)
		}
	}
	if f.is != nil && !errors.Is(err, f.is) {
		t.Errorf("errors.Is(err, %v) is false: %v", f.is, err)
	}
	e.checkNothingCommitted(t, a, !f.offsetsMayCommit)
}

// checkNothingCommitted checks that a's output topic holds no record at all (so none is
// visible read_committed either) and, with offsets, that the group of a committed no offset.
func (e *secureEnv) checkNothingCommitted(t *testing.T, a *secureApp, offsets bool) {
	t.Helper()
	admin := e.adminClient(t)
	resp, err := admin.ListConsumerGroupOffsets(a.appID, map[string][]int32{a.input: {0, 1, 2}})
	switch {
	case !offsets:
	case errors.Is(err, sarama.ErrGroupIDNotFound) || err == nil && resp.Err == sarama.ErrGroupIDNotFound:
		// kfake: a group that never existed (Kafka answers offsets -1)
	case err != nil:
		t.Errorf("offsets of group %s: %v", a.appID, err)
	case resp.Err != sarama.ErrNoError:
		t.Errorf("offsets of group %s: %v", a.appID, resp.Err)
	default:
		for p, b := range resp.Blocks[a.input] {
			if b.Offset >= 0 {
				t.Errorf("group %s committed offset %d of %s-%d", a.appID, b.Offset, a.input, p)
			}
		}
	}
	client, err := sarama.NewClient(e.addrs, e.adminSarama())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for p := int32(0); p < 3; p++ {
		end, err := client.GetOffset(a.output, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatalf("end offset of %s-%d: %v", a.output, p, err)
		}
		if end != 0 {
			t.Errorf("output partition %s-%d holds records up to offset %d", a.output, p, end)
		}
	}
}

func TestIntegrationSecure(t *testing.T) { runSecure(t, kafkatest.Secure(t)) }

func TestEmbeddedSecure(t *testing.T) {
	t.Parallel()
	runSecure(t, kafkatest.EmbeddedSecure(t))
	t.Run("UntrustedClientCertificate", func(t *testing.T) {
		// kfake's TLS listener that requires client certificates of its CA (no SASL, no ACLs).
		e := newSecureEnv(t, kafkatest.EmbeddedMTLS(t))
		a := e.newSecureApp(t, "sec-untrusted-cert")
		other, err := certs.NewCA("untrusted-ca")
		if err != nil {
			t.Fatal(err)
		}
		e.certPrincipal(t, nil, a, fullGrant, other)
		e.expectFailure(t, a, failure{words: []string{"TLS authentication failed", "certificate"}})
	})
}

func runSecure(t *testing.T, sb kafkatest.SecureBroker) {
	e := newSecureEnv(t, sb)
	admin := e.adminClient(t)
	t.Run("WordCountSASLSSL", func(t *testing.T) {
		a := e.newSecureApp(t, "sec-wc")
		e.scramPrincipal(t, admin, a, fullGrant, "")
		e.wordCount(t, a)
	})
	if len(sb.SSL) > 0 {
		t.Run("WordCountMTLS", func(t *testing.T) {
			a := e.newSecureApp(t, "sec-wc-mtls")
			e.certPrincipal(t, admin, a, fullGrant, nil)
			e.wordCount(t, a)
		})
	}
	t.Run("NoPrefixedACLs", func(t *testing.T) {
		a := e.newSecureApp(t, "sec-noprefix")
		e.scramPrincipal(t, admin, a, streamsGrant{input: true, output: true}, "")
		e.expectFailure(t, a, failure{words: []string{"authoriz", a.appID + "-"}, is: sarama.ErrTopicAuthorizationFailed})
	})
	t.Run("NoGroupACL", func(t *testing.T) {
		a := e.newSecureApp(t, "sec-nogroup")
		g := fullGrant
		g.group = false
		e.scramPrincipal(t, admin, a, g, "")
		e.expectFailure(t, a, failure{words: []string{"authoriz", "group", a.appID}, is: sarama.ErrGroupAuthorizationFailed})
	})
	t.Run("NoTransactionalIDACL", func(t *testing.T) {
		a := e.newSecureApp(t, "sec-notxn")
		g := fullGrant
		g.transactionalIDs = false
		e.scramPrincipal(t, admin, a, g, "")
		e.expectFailure(t, a, failure{words: []string{"authoriz", "transactional", a.appID}, is: sarama.ErrTransactionalIDAuthorizationFailed})
	})
	t.Run("NoOutputWrite", func(t *testing.T) {
		a := e.newSecureApp(t, "sec-noout")
		g := fullGrant
		g.output = false
		e.scramPrincipal(t, admin, a, g, "")
		e.expectFailure(t, a, failure{words: []string{"authoriz", a.output}, is: sarama.ErrTopicAuthorizationFailed, offsetsMayCommit: true})
	})
	t.Run("NoInputRead", func(t *testing.T) {
		a := e.newSecureApp(t, "sec-noin")
		g := fullGrant
		g.input = false
		e.scramPrincipal(t, admin, a, g, "")
		e.expectFailure(t, a, failure{words: []string{"authoriz", a.input}, is: sarama.ErrTopicAuthorizationFailed})
	})
	t.Run("WrongPassword", func(t *testing.T) {
		a := e.newSecureApp(t, "sec-badpass")
		e.scramPrincipal(t, admin, a, fullGrant, "not-the-password")
		f := failure{words: []string{"authentication"}, is: sarama.ErrSASLAuthenticationFailed}
		if sb.Kind == kafkatest.Kfake {
			// kfake closes the connection instead of answering SASL_AUTHENTICATION_FAILED:
			// the client sees EOF, and cannot name the cause.
			f = failure{}
		}
		e.expectFailure(t, a, f)
	})
	if len(sb.SSL) > 0 {
		t.Run("UntrustedClientCertificate", func(t *testing.T) {
			a := e.newSecureApp(t, "sec-untrusted-cert")
			other, err := certs.NewCA("untrusted-ca")
			if err != nil {
				t.Fatal(err)
			}
			e.certPrincipal(t, admin, a, fullGrant, other)
			e.expectFailure(t, a, failure{words: []string{"TLS authentication failed", "certificate"}})
		})
	}
	t.Run("UntrustedBrokerCertificate", func(t *testing.T) {
		a := e.newSecureApp(t, "sec-untrusted-broker")
		e.scramPrincipal(t, admin, a, fullGrant, "")
		other, err := certs.NewCA("untrusted-ca")
		if err != nil {
			t.Fatal(err)
		}
		security := a.security
		a.security = func(c *kstreams.Config) {
			security(c)
			c.TLS = &tls.Config{RootCAs: other.Pool(), MinVersion: tls.VersionTLS12}
		}
		e.expectFailure(t, a, failure{words: []string{"TLS authentication failed", "certificate"}})
	})
}
