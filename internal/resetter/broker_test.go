package resetter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// setup creates the input topic <app>-in (2 partitions, 10 records each), a changelog and a
// repartition topic of app and a user topic named like a changelog of another application,
// and commits offset 10 on both input partitions for group app.
func setup(t *testing.T, addrs []string, cfg *sarama.Config, app string) {
	t.Helper()
	kafkatest.CreateTopicsWith(t, addrs, cfg, 2, nil, app+"-in", app+"-store-changelog", app+"-KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition", "x"+app+"-store-changelog")
	admin, err := sarama.NewClusterAdmin(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	pcfg := *cfg
	pcfg.Producer.Return.Successes = true
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(addrs, kafkatest.Idempotent(&pcfg))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*sarama.ProducerMessage
	for i := range 20 {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: app + "-in", Partition: int32(i % 2), Value: sarama.StringEncoder(fmt.Sprint(i))})
	}
	err = p.SendMessages(msgs)
	p.Close()
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	if _, err := admin.AlterConsumerGroupOffsets(app, map[string]map[int32]sarama.OffsetAndMetadata{
		app + "-in": {0: {Offset: 10, LeaderEpoch: -1}, 1: {Offset: 10, LeaderEpoch: -1}}}, nil); err != nil {
		t.Fatal(err)
	}
}

// joinMember joins group app as a consumer with a session timeout of a minute and then stays
// silent: the member a stopped instance leaves behind until its session times out.
func joinMember(t *testing.T, addrs []string, cfg *sarama.Config, app string) string {
	t.Helper()
	c, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	coord, err := c.Coordinator(app)
	if err != nil {
		t.Fatal(err)
	}
	req := &sarama.JoinGroupRequest{Version: 5, GroupId: app, SessionTimeout: 60_000, RebalanceTimeout: 60_000, ProtocolType: "consumer"}
	if err := req.AddGroupProtocolMetadata("range", &sarama.ConsumerGroupMemberMetadata{Topics: []string{app + "-in"}}); err != nil {
		t.Fatal(err)
	}
	resp, err := coord.JoinGroup(req)
	if err == nil && errors.Is(resp.Err, sarama.ErrMemberIdRequired) {
		req.MemberId = resp.MemberId
		resp, err = coord.JoinGroup(req)
	}
	if err != nil || resp.Err != sarama.ErrNoError {
		t.Fatalf("join group %s: %v %v", app, err, resp.Err)
	}
	return resp.MemberId
}

// runReset runs the command and returns its exit code and output.
func runReset(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func checkReset(t *testing.T, addrs []string, cfg *sarama.Config, app string) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	resp, err := admin.ListConsumerGroupOffsets(app, map[string][]int32{app + "-in": {0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		if b := resp.GetBlock(app+"-in", p); b == nil || b.Offset != 0 {
			t.Errorf("committed offset of %s-in-%d after the reset: %+v, want 0", app, p, b)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ts, err := admin.ListTopics()
		if err != nil {
			t.Fatal(err)
		}
		_, a := ts[app+"-store-changelog"]
		_, b := ts[app+"-KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition"]
		_, in := ts[app+"-in"]
		_, other := ts["x"+app+"-store-changelog"]
		if !in || !other {
			t.Fatalf("the reset deleted a user topic (input kept %v, other application's kept %v)", in, other)
		}
		if !a && !b {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("internal topics still listed 30 s after the reset (changelog %v, repartition %v)", a, b)
		}
		time.Sleep(100 * time.Millisecond) // topic deletion is asynchronous; bounded by the deadline
	}
}

// A member left behind by a stopped instance: the reset refuses, naming it; --force removes it
// (KIP-571) and resets.
func testForce(t *testing.T, b kafkatest.Broker) {
	cfg := kafkatest.SaramaConfig()
	app := kafkatest.Name(t, "rf")
	setup(t, b.Addrs, cfg, app)
	member := joinMember(t, b.Addrs, cfg, app)
	args := []string{"--bootstrap-server", strings.Join(b.Addrs, ","), "--application-id", app, "--input-topics", app + "-in"}
	code, out, errs := runReset(args...)
	if code != ExitError || !strings.Contains(errs, "ERROR: Consumer group '"+app+
		"' is still active and has following members: [(memberId="+member+", groupInstanceId=null, clientId=kstreams-test, host=") {
		t.Fatalf("reset with a member: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runReset(append(args, "--force")...)
	if code != ExitSuccess || !strings.HasPrefix(out, "Force deleting all active members in the group: "+app+"\n") {
		t.Fatalf("reset --force: exit %d\n%s%s", code, out, errs)
	}
	admin, err := sarama.NewClusterAdmin(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ds, err := admin.DescribeConsumerGroups([]string{app})
	if err != nil || len(ds) != 1 || len(ds[0].Members) != 0 {
		t.Fatalf("group after --force: %v, %+v", err, ds)
	}
	checkReset(t, b.Addrs, cfg, app)
}

func TestIntegrationResetForce(t *testing.T) { testForce(t, kafkatest.Real(t)) }
func TestEmbeddedResetForce(t *testing.T) {
	t.Parallel()
	testForce(t, kafkatest.Embedded(t))
}

// The tool connects as --command-config says: SASL_SSL with SCRAM-SHA-512, trusting the
// broker's CA from a PEM file, the JAAS configuration over two lines.
func testSecure(t *testing.T, sb kafkatest.SecureBroker) {
	cfg := kafkatest.SaramaConfig()
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = sb.TrustingTLS()
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
	cfg.Net.SASL.User, cfg.Net.SASL.Password = sb.AdminUser, sb.AdminPassword
	cfg.Net.SASL.SCRAMClientGeneratorFunc = kafka.SCRAMSHA512
	app := kafkatest.Name(t, "rs")
	setup(t, sb.SASLSSL, cfg, app)

	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, sb.CA.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	props := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(props, []byte(fmt.Sprintf("bootstrap.servers=%s\nsecurity.protocol=SASL_SSL\nsasl.mechanism=%s\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"%s\" password=\"%s\";\n"+
		"ssl.truststore.type=PEM\nssl.truststore.location=%s\n", strings.Join(sb.SASLSSL, ","), sb.Mechanism, sb.AdminUser, sb.AdminPassword, ca)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runReset("--command-config", props, "--application-id", app, "--input-topics", app+"-in")
	if code != ExitSuccess {
		t.Fatalf("reset over SASL_SSL: exit %d\n%s%s", code, out, errs)
	}
	checkReset(t, sb.SASLSSL, cfg, app)
}

func TestIntegrationResetSecure(t *testing.T) { testSecure(t, kafkatest.Secure(t)) }
func TestEmbeddedResetSecure(t *testing.T) {
	t.Parallel()
	testSecure(t, kafkatest.EmbeddedSecure(t))
}

// An application of group.protocol=streams (KIP-1071): the classic DescribeGroups shows its
// group as Dead without members, so the tool asks the group's type first and refuses, saying
// which tool resets streams groups, instead of resetting under a running instance.
func TestIntegrationResetStreamsGroup(t *testing.T) {
	b := kafkatest.Real(t)
	cfg := kafkatest.SaramaConfig()
	app := kafkatest.Name(t, "rsg")
	setup(t, b.Addrs, cfg, app)
	client, err := sarama.NewClient(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	coord, err := client.Coordinator(app)
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := streamsgroup.ConfigFromSarama(cfg, "kstreams-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := streamsgroup.Dial(ctx, coord.Addr(), scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pid := "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	req := &streamsgroup.HeartbeatRequest{GroupID: app, MemberID: "reset-test-member", MemberEpoch: streamsgroup.JoinEpoch,
		RebalanceTimeoutMs: 30_000, ProcessID: &pid,
		Topology:    &streamsgroup.Topology{Subtopologies: []streamsgroup.Subtopology{{ID: "0", SourceTopics: []string{app + "-in"}}}},
		ActiveTasks: []streamsgroup.Tasks{}, StandbyTasks: []streamsgroup.Tasks{}, WarmupTasks: []streamsgroup.Tasks{},
		TaskOffsets: []streamsgroup.TaskOffset{}, TaskEndOffsets: []streamsgroup.TaskOffset{}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := conn.Heartbeat(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		herr := resp.Err(app)
		if herr == nil {
			break
		}
		// A just created source topic is answered UNKNOWN_SERVER_ERROR for a moment (see
		// package streamsgroup's doc); a just started broker answers coordinator errors.
		if !errors.Is(herr, sarama.ErrUnknown) && !errors.Is(herr, sarama.ErrOffsetsLoadInProgress) &&
			!errors.Is(herr, sarama.ErrConsumerCoordinatorNotAvailable) || time.Now().After(deadline) {
			t.Fatalf("join the streams group: %v", herr)
		}
		time.Sleep(100 * time.Millisecond) // retry pace, bounded by the deadline
	}
	code, out, errs := runReset("--bootstrap-server", b.Addrs[0], "--application-id", app, "--input-topics", app+"-in")
	want := "ERROR: group " + app + " is a streams group, not a classic one: " +
		"this tool resets applications of group.protocol=classic (the default), as Java's kafka-streams-application-reset does; " +
		"for a streams group (group.protocol=streams, KIP-1071) use Apache Kafka's kafka-streams-groups.sh\n"
	if code != ExitError || errs != want || out != "" {
		t.Fatalf("reset of a streams group: exit %d\nstdout %q\nstderr %q\nwant %q", code, out, errs, want)
	}
}
