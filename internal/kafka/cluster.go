package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// MinVersion is the least sarama Config.Version the layer accepts: Produce v10 (and the
// flexible versions of the other requests) need at least Kafka 3.7 in sarama's eyes; an older
// Version makes sarama refuse Produce before sending anything.
var MinVersion = sarama.V3_7_0_0

// Config configures a [Cluster].
type Config struct {
	// Brokers are the bootstrap servers, host:port. Required.
	Brokers []string
	// Sarama is the base configuration of every connection: Version (at least [MinVersion]),
	// ClientID, Net (TLS, SASL, dial, read and write timeouts) and Metadata (retries, refresh
	// frequency). Its Consumer and Producer sections are not used. Required; not modified.
	Sarama *sarama.Config
	// Logger logs connection trouble; nil means slog.Default().
	Logger *slog.Logger
}

// Node is a broker: its id and address.
type Node struct {
	// ID is the broker id (node.id).
	ID int32
	// Addr is host:port.
	Addr string
}

// Purpose names what a connection is for. A [Cluster] keeps one connection per broker and
// purpose: a *sarama.Broker holds its lock from writing a request until its response is read,
// so a long-polling Fetch, or a JoinGroup the coordinator holds until the group has rejoined,
// would block every other request sharing its connection.
type Purpose struct {
	// Name distinguishes the connection ("fetch", "produce", "group", "heartbeat", ...).
	Name string
	// ClientID is the client.id the connection sends; "" keeps Sarama.ClientID. Java names a
	// stream thread's clients <client.id>-StreamThread-<n>-consumer / -producer.
	ClientID string
	// ReadTimeout overrides Net.ReadTimeout when positive: a long poll or a held JoinGroup
	// must not time out before the broker answers.
	ReadTimeout time.Duration
	// MaxOpenRequests overrides Net.MaxOpenRequests when positive: how many requests may be
	// in flight on the connection (AsyncProduce pipelines up to that many).
	MaxOpenRequests int
}

// Cluster is one client's view of the cluster: topic metadata (through a sarama.Client used
// for metadata only), a connection per broker and [Purpose], and coordinator lookup. Safe for
// concurrent use.
type Cluster struct {
	cfg  Config
	log  *slog.Logger
	meta sarama.Client

	mu    sync.Mutex
	conns map[connKey]*sarama.Broker
	// sockets holds the socket under each connection, for Interrupt.
	sockets map[*sarama.Broker]*socketDialer
	closed  bool
}

type connKey struct {
	addr    string
	purpose string
}

// ErrClosed is returned by a Cluster (and the parts using it) after Close.
var ErrClosed = errors.New("kafka: client closed")

// NewCluster connects to the bootstrap servers and loads the cluster metadata. Errors: an
// invalid configuration (Version below MinVersion, no brokers) or no reachable broker.
func NewCluster(cfg Config) (*Cluster, error) {
	if cfg.Sarama == nil {
		return nil, errors.New("kafka: Config.Sarama is required")
	}
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("kafka: no bootstrap servers")
	}
	if !cfg.Sarama.Version.IsAtLeast(MinVersion) {
		return nil, fmt.Errorf("kafka: sarama Config.Version %s is below %s, which Produce v10 needs", cfg.Sarama.Version, MinVersion)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	meta, err := sarama.NewClient(cfg.Brokers, cfg.Sarama)
	if err != nil {
		return nil, ConnectError(cfg.Brokers, err)
	}
	return &Cluster{cfg: cfg, log: cfg.Logger, meta: meta, conns: map[connKey]*sarama.Broker{},
		sockets: map[*sarama.Broker]*socketDialer{}}, nil
}

// Config returns the base sarama configuration (not to be modified).
func (c *Cluster) Config() *sarama.Config { return c.cfg.Sarama }

// Bootstrap returns the bootstrap servers.
func (c *Cluster) Bootstrap() []string { return c.cfg.Brokers }

// Partitions returns the number of partitions of topic, refreshing the metadata when the
// topic is not known yet. Errors: sarama.ErrUnknownTopicOrPartition (wrapped) for a topic that
// does not exist, metadata errors.
func (c *Cluster) Partitions(topic string) (int32, error) {
	ps, err := c.meta.Partitions(topic)
	if err != nil {
		return 0, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	return int32(len(ps)), nil
}

// Leader returns the leader of tp and its leader epoch (-1 when the broker did not say) from
// the cached metadata, refreshing it when tp's leader is not known.
func (c *Cluster) Leader(tp TopicPartition) (Node, int32, error) {
	b, epoch, err := c.meta.LeaderAndEpoch(tp.Topic, tp.Partition)
	if err != nil {
		return Node{}, -1, fmt.Errorf("leader of %s: %w", tp, err)
	}
	return Node{ID: b.ID(), Addr: b.Addr()}, epoch, nil
}

// RefreshMetadata reloads the metadata of topics (all known topics when none is given), after
// a leader change or a new topic.
func (c *Cluster) RefreshMetadata(topics ...string) error {
	return c.meta.RefreshMetadata(topics...)
}

// AnyNode returns a broker to send requests that any broker answers (FindCoordinator,
// ListOffsets of no particular partition's leader...).
func (c *Cluster) AnyNode() (Node, error) {
	for _, b := range c.meta.Brokers() {
		return Node{ID: b.ID(), Addr: b.Addr()}, nil
	}
	if b := c.meta.LeastLoadedBroker(); b != nil {
		return Node{ID: b.ID(), Addr: b.Addr()}, nil
	}
	return Node{}, fmt.Errorf("no broker known: %w", sarama.ErrOutOfBrokers)
}

// Conn returns the connection to n for purpose p, dialling it when there is none. A request
// that fails on a connection leaves it closed (sarama closes it on transport errors): the
// caller then hands it to Discard, and the next Conn dials again. Errors: the dial's
// (wrapped), ErrClosed.
func (c *Cluster) Conn(n Node, p Purpose) (*sarama.Broker, error) {
	key := connKey{addr: n.Addr, purpose: p.Name}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if b := c.conns[key]; b != nil {
		c.mu.Unlock()
		return b, nil
	}
	c.mu.Unlock()
	conf := *c.cfg.Sarama
	if p.ClientID != "" {
		conf.ClientID = p.ClientID
	}
	if p.ReadTimeout > 0 {
		conf.Net.ReadTimeout = p.ReadTimeout
	}
	if p.MaxOpenRequests > 0 {
		conf.Net.MaxOpenRequests = p.MaxOpenRequests
	}
	// The connection carries this package's own requests: the settings of sarama's producer do
	// not apply, and with Producer.Idempotent (or a transactional id) set, sarama's config check
	// in Open refuses any MaxOpenRequests above 1, so that every produce connection would fail.
	conf.Producer.Idempotent = false
	conf.Producer.Transaction.ID = ""
	sd := newSocketDialer(&conf)
	conf.Net.Proxy.Enable, conf.Net.Proxy.Dialer = true, sd
	nb := sarama.NewBroker(n.Addr)
	if err := nb.Open(&conf); err != nil {
		return nil, fmt.Errorf("connect to broker %d (%s): %w", n.ID, n.Addr, err)
	}
	if ok, err := nb.Connected(); !ok { // waits for the dial
		if err == nil {
			err = sarama.ErrNotConnected
		}
		return nil, fmt.Errorf("connect to broker %d (%s): %w", n.ID, n.Addr, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = nb.Close()
		return nil, ErrClosed
	}
	if old := c.conns[key]; old != nil {
		// Another goroutine dialled meanwhile: keep one.
		_ = nb.Close()
		return old, nil
	}
	c.conns[key] = nb
	c.sockets[nb] = sd
	return nb, nil
}

// Interrupt closes the socket under the connection to n for purpose p, so that a request
// blocked on it (a JoinGroup the coordinator holds until the group has rejoined, a long-poll
// Fetch) fails at once with a transport error instead of waiting for its response or its read
// timeout; the connection is then closed and forgotten, and the next Conn dials a new one.
// *sarama.Broker cannot do this itself: its Close waits for the lock the blocked request
// holds. Interrupt returns once the blocked request (if any) has failed; it does nothing when
// there is no such connection. Safe to call while another goroutine uses the connection.
func (c *Cluster) Interrupt(n Node, p Purpose) {
	key := connKey{addr: n.Addr, purpose: p.Name}
	c.mu.Lock()
	b := c.conns[key]
	var sd *socketDialer
	if b != nil {
		delete(c.conns, key)
		sd = c.sockets[b]
		delete(c.sockets, b)
	}
	c.mu.Unlock()
	if b == nil {
		return
	}
	if sd != nil {
		sd.closeSocket()
	}
	_ = b.Close()
}

// socketDialer dials a connection's socket with the dialer sarama would use, and keeps it, so
// that Interrupt can close it under sarama's feet.
type socketDialer struct {
	base interface {
		Dial(network, addr string) (net.Conn, error)
	}
	mu     sync.Mutex
	socket net.Conn
	closed bool
}

func newSocketDialer(conf *sarama.Config) *socketDialer {
	if conf.Net.Proxy.Enable && conf.Net.Proxy.Dialer != nil {
		return &socketDialer{base: conf.Net.Proxy.Dialer}
	}
	return &socketDialer{base: &net.Dialer{Timeout: conf.Net.DialTimeout, KeepAlive: conf.Net.KeepAlive, LocalAddr: conf.Net.LocalAddr}}
}

// Dial implements sarama's proxy dialer (golang.org/x/net/proxy.Dialer).
func (d *socketDialer) Dial(network, addr string) (net.Conn, error) {
	conn, err := d.base.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = conn.Close()
		return nil, net.ErrClosed
	}
	d.socket = conn
	return conn, nil
}

func (d *socketDialer) closeSocket() {
	d.mu.Lock()
	d.closed = true
	s := d.socket
	d.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
}

// Discard closes b, the connection to n for purpose p, after an error that leaves it unusable
// (a network error, a timeout), so that the next Conn dials a new one.
func (c *Cluster) Discard(n Node, p Purpose, b *sarama.Broker) {
	key := connKey{addr: n.Addr, purpose: p.Name}
	c.mu.Lock()
	if c.conns[key] == b {
		delete(c.conns, key)
	}
	delete(c.sockets, b)
	c.mu.Unlock()
	if b != nil {
		_ = b.Close()
	}
}

// FindCoordinator asks any broker which one coordinates key: a group id (sarama.CoordinatorGroup)
// or a transactional id (sarama.CoordinatorTransaction). It retries COORDINATOR_NOT_AVAILABLE
// and connection errors until ctx ends. Errors: ctx's (wrapping the last failure), and errors
// a retry cannot cure (authorization of key, a connection that cannot authenticate:
// [AuthError]), wrapped.
func (c *Cluster) FindCoordinator(ctx context.Context, key string, typ sarama.CoordinatorType) (Node, error) {
	p := Purpose{Name: "metadata"}
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := Sleep(ctx, Backoff(attempt, 50*time.Millisecond, time.Second)); err != nil {
				return Node{}, fmt.Errorf("find coordinator of %q: %w (last error: %v)", key, err, last)
			}
		}
		n, err := c.AnyNode()
		if err != nil {
			last = err
			_ = c.RefreshMetadata()
			continue
		}
		b, err := c.Conn(n, p)
		if err != nil {
			if AuthError(err) { // the connection cannot authenticate: no retry cures it
				return Node{}, fmt.Errorf("find coordinator of %q: %w", key, err)
			}
			last = err
			continue
		}
		req := &sarama.FindCoordinatorRequest{Version: 2, CoordinatorKey: key, CoordinatorType: typ}
		resp, err := b.FindCoordinator(req)
		if err != nil {
			last = err
			c.Discard(n, p, b)
			continue
		}
		switch {
		case resp.Err == sarama.ErrNoError && resp.Coordinator != nil:
			return Node{ID: resp.Coordinator.ID(), Addr: resp.Coordinator.Addr()}, nil
		case Retriable(resp.Err):
			last = resp.Err
			continue
		default:
			return Node{}, fmt.Errorf("find coordinator of %q: %w", key, resp.Err)
		}
	}
}

// Close closes every connection and the metadata client. Later calls fail with ErrClosed.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	conns := c.conns
	c.conns = nil
	c.sockets = nil
	c.mu.Unlock()
	for _, b := range conns {
		_ = b.Close()
	}
	return c.meta.Close()
}

// Sleep waits d or until ctx ends; it returns ctx's error in the latter case.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff returns the pause before retry number attempt (1 for the first retry): base doubled
// per attempt, at most max.
func Backoff(attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}
