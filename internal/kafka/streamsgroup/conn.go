package streamsgroup

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// API keys of the connection's own requests.
const (
	apiSaslHandshake    int16 = 17
	apiVersions         int16 = 18
	apiSaslAuthenticate int16 = 36
)

// Config is how a Conn connects: the settings of the other connections' sarama config.
type Config struct {
	// ClientID is the client id of the request headers.
	ClientID string
	// TLS, when set, wraps the connection in TLS (security.protocol SSL or SASL_SSL). An
	// empty ServerName is set to the broker's host, as sarama does.
	TLS *tls.Config
	// SASL, when set, authenticates after connecting (SASL_PLAINTEXT or SASL_SSL).
	SASL *SASL
	// DialTimeout bounds connecting, TLS and authentication; 0 means 30 s.
	DialTimeout time.Duration
	// ReadTimeout bounds waiting for a response (beyond the context's deadline); 0 means 30 s.
	ReadTimeout time.Duration
}

// SASL is the SASL authentication of a Conn (SaslHandshake v1, then SaslAuthenticate v2).
// When the broker limits the session's lifetime (connections.max.reauth.ms, KIP-368), the
// Conn authenticates again before a request once 85-95% of it has passed, as sarama and
// Java do.
type SASL struct {
	// Mechanism is "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512" or "OAUTHBEARER".
	Mechanism string
	// User and Password are the credentials of PLAIN and SCRAM.
	User, Password string
	// SCRAMClient makes the SCRAM client of the SCRAM mechanisms (sarama's
	// Net.SASL.SCRAMClientGeneratorFunc).
	SCRAMClient func() sarama.SCRAMClient
	// TokenProvider gives OAUTHBEARER's token at each authentication (sarama's
	// Net.SASL.TokenProvider).
	TokenProvider sarama.AccessTokenProvider
}

// ConfigFromSarama takes TLS, SASL, client id and timeouts from sc, the configuration the
// other connections use (kafka.Cluster's Config()); clientID "" keeps sc.ClientID.
func ConfigFromSarama(sc *sarama.Config, clientID string) (Config, error) {
	if clientID == "" {
		clientID = sc.ClientID
	}
	c := Config{ClientID: clientID, DialTimeout: sc.Net.DialTimeout, ReadTimeout: sc.Net.ReadTimeout}
	if sc.Net.TLS.Enable {
		c.TLS = sc.Net.TLS.Config
		if c.TLS == nil {
			c.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	}
	if sc.Net.SASL.Enable {
		m := string(sc.Net.SASL.Mechanism)
		if m == "" {
			m = sarama.SASLTypePlaintext
		}
		switch m {
		case sarama.SASLTypePlaintext:
		case sarama.SASLTypeSCRAMSHA256, sarama.SASLTypeSCRAMSHA512:
			if sc.Net.SASL.SCRAMClientGeneratorFunc == nil {
				return c, fmt.Errorf("streamsgroup: SASL %s needs Net.SASL.SCRAMClientGeneratorFunc", m)
			}
		case sarama.SASLTypeOAuth:
			if sc.Net.SASL.TokenProvider == nil {
				return c, fmt.Errorf("streamsgroup: SASL %s needs Net.SASL.TokenProvider", m)
			}
		default:
			return c, fmt.Errorf("streamsgroup: SASL mechanism %s is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", m)
		}
		c.SASL = &SASL{Mechanism: m, User: sc.Net.SASL.User, Password: sc.Net.SASL.Password,
			SCRAMClient: sc.Net.SASL.SCRAMClientGeneratorFunc, TokenProvider: sc.Net.SASL.TokenProvider}
	}
	return c, nil
}

// Conn is a connection of our own to one broker, for the requests sarama does not know:
// Kafka's framing (a 4-byte size, request header v2 with the client id, response header v1;
// v1/v0 for the legacy requests), checked against the broker's ApiVersions. One request at a
// time; safe for concurrent use (requests wait their turn).
type Conn struct {
	cfg      Config
	addr     string
	mu       sync.Mutex // one request at a time
	nc       net.Conn
	r        *bufio.Reader
	corr     int32
	versions map[int16][2]int16 // API key -> min, max version
	closed   bool

	authMu   sync.Mutex // one authentication at a time; guards reauthAt
	reauthAt time.Time  // authenticate again before a request from then on; zero: never
}

// Dial connects to addr (host:port), with TLS and SASL as cfg says, and reads the broker's
// API versions. Errors: a connection or TLS failure, ErrAuthentication, ctx's error.
func Dial(ctx context.Context, addr string, cfg Config) (*Conn, error) {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 30 * time.Second
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("streamsgroup: connect to %s: %w", addr, err)
	}
	if cfg.TLS != nil {
		tc := cfg.TLS.Clone()
		if tc.ServerName == "" && !tc.InsecureSkipVerify {
			host, _, _ := net.SplitHostPort(addr)
			tc.ServerName = host
		}
		tlsConn := tls.Client(nc, tc)
		if err := tlsConn.HandshakeContext(dctx); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("streamsgroup: TLS handshake with %s: %w", addr, err)
		}
		nc = tlsConn
	}
	c := &Conn{cfg: cfg, addr: addr, nc: nc, r: bufio.NewReader(nc)}
	if err := c.apiVersions(dctx); err != nil {
		_ = nc.Close()
		return nil, err
	}
	if cfg.SASL != nil {
		c.authMu.Lock()
		err := c.authenticate(dctx)
		c.authMu.Unlock()
		if err != nil {
			_ = nc.Close()
			return nil, err
		}
	}
	return c, nil
}

// Addr returns the broker's address.
func (c *Conn) Addr() string { return c.addr }

// Close closes the connection. A request under way is waited for (its read timeout, or its
// context, bounds it: cancel the context to end it at once); requests after Close fail with
// net.ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.nc.Close()
}

// Versions returns the versions of apiKey the broker supports, ok false when it has none.
func (c *Conn) Versions(apiKey int16) (minV, maxV int16, ok bool) {
	v, ok := c.versions[apiKey]
	return v[0], v[1], ok
}

// version picks the highest of our versions lo..hi the broker supports.
func (c *Conn) version(api string, key, lo, hi int16) (int16, error) {
	bmin, bmax, ok := c.Versions(key)
	if !ok || bmax < lo || bmin > hi {
		return 0, fmt.Errorf("%w: %s (API key %d, versions %d-%d) at %s: the broker supports %v",
			ErrUnsupported, api, key, lo, hi, c.addr, versionsText(bmin, bmax, ok))
	}
	return min(hi, bmax), nil
}

func versionsText(lo, hi int16, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// Heartbeat sends a StreamsGroupHeartbeat (version 1 when the broker supports it, else 0).
// A Kafka error code of the response is in resp.ErrorCode (resp.Err): the error returned is
// a transport failure, ErrUnsupported, ErrMalformed or ctx's error; the connection should
// then be closed.
func (c *Conn) Heartbeat(ctx context.Context, req *HeartbeatRequest) (*HeartbeatResponse, error) {
	v, err := c.version("StreamsGroupHeartbeat", APIKeyHeartbeat, 0, 1)
	if err != nil {
		return nil, err
	}
	if err := c.reauthenticate(ctx); err != nil {
		return nil, err
	}
	var e enc
	req.encode(&e, v)
	body, err := c.roundTrip(ctx, APIKeyHeartbeat, v, true, e.b)
	if err != nil {
		return nil, err
	}
	resp := &HeartbeatResponse{}
	d := dec{b: body}
	resp.decode(&d, v)
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("StreamsGroupHeartbeat v%d from %s: %w", v, c.addr, err)
	}
	return resp, nil
}

// Describe sends a StreamsGroupDescribe (version 0). The groups' error codes are in the
// response (DescribedGroup.Err); the error returned is as Heartbeat's.
func (c *Conn) Describe(ctx context.Context, req *DescribeRequest) (*DescribeResponse, error) {
	v, err := c.version("StreamsGroupDescribe", APIKeyDescribe, 0, 0)
	if err != nil {
		return nil, err
	}
	if err := c.reauthenticate(ctx); err != nil {
		return nil, err
	}
	var e enc
	req.encode(&e, v)
	body, err := c.roundTrip(ctx, APIKeyDescribe, v, true, e.b)
	if err != nil {
		return nil, err
	}
	resp := &DescribeResponse{}
	d := dec{b: body}
	resp.decode(&d, v)
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("StreamsGroupDescribe v%d from %s: %w", v, c.addr, err)
	}
	return resp, nil
}

// RoundTrip sends one request of API key key and version version, whose body the caller
// encoded, and returns the response body (after the response header; the caller's to keep):
// for requests the caller encodes and decodes itself, such as restore's and the fetcher's Fetch, whose records
// sarama decodes into a struct each. flexible selects request header v2 and response header
// v1 (else v1 and v0). It authenticates again first when the SASL session is due (KIP-368).
// Errors are as Heartbeat's; the connection should then be closed.
func (c *Conn) RoundTrip(ctx context.Context, key, version int16, flexible bool, body []byte) ([]byte, error) {
	if err := c.reauthenticate(ctx); err != nil {
		return nil, err
	}
	return c.roundTrip(ctx, key, version, flexible, body)
}

// roundTrip sends one request and returns its response body. flexible selects request
// header v2 / response header v1 (else v1 / v0). When ctx ends the connection is closed,
// so the request fails at once.
func (c *Conn) roundTrip(ctx context.Context, key, version int16, flexible bool, body []byte) ([]byte, error) {
	return c.roundTripHeaders(ctx, key, version, flexible, flexible, body)
}

func (c *Conn) roundTripHeaders(ctx context.Context, key, version int16, flexibleReq, flexibleResp bool, body []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("streamsgroup: connection to %s: %w", c.addr, net.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.nc.Close() })
	defer stop()
	deadline := time.Now().Add(c.cfg.ReadTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.nc.SetDeadline(deadline)

	c.corr++
	corr := c.corr
	var h enc
	h.int32(0) // size, set below
	h.int16(key)
	h.int16(version)
	h.int32(corr)
	id := c.cfg.ClientID
	h.legacyString(&id)
	if flexibleReq {
		h.noTags()
	}
	h.b = append(h.b, body...)
	binary.BigEndian.PutUint32(h.b, uint32(len(h.b)-4))
	if _, err := c.nc.Write(h.b); err != nil {
		return nil, c.ioError(ctx, "write", key, err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		return nil, c.ioError(ctx, "read", key, err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 100<<20 {
		return nil, fmt.Errorf("%w: response size %d from %s", ErrMalformed, n, c.addr)
	}
	resp := make([]byte, n)
	if _, err := io.ReadFull(c.r, resp); err != nil {
		return nil, c.ioError(ctx, "read", key, err)
	}
	d := dec{b: resp}
	if got := d.int32(); got != corr {
		return nil, fmt.Errorf("%w: correlation id %d from %s, want %d", ErrMalformed, got, c.addr, corr)
	}
	if flexibleResp {
		d.skipTags()
	}
	if d.err != nil {
		return nil, d.err
	}
	return resp[d.off:], nil
}

func (c *Conn) ioError(ctx context.Context, op string, key int16, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("streamsgroup: API key %d to %s: %w (%v)", key, c.addr, context.Cause(ctx), err)
	}
	return fmt.Errorf("streamsgroup: %s API key %d at %s: %w", op, key, c.addr, err)
}

// apiVersions sends ApiVersions v3 (request header v2; its response header is v0 whatever
// the version, so that a client can read an old broker's answer).
func (c *Conn) apiVersions(ctx context.Context) error {
	var e enc
	e.compactString("kstreams-go")
	e.compactString("1")
	e.noTags()
	body, err := c.roundTripHeaders(ctx, apiVersions, 3, true, false, e.b)
	if err != nil {
		return err
	}
	d := dec{b: body}
	code := d.int16()
	n := d.arrayLen()
	versions := make(map[int16][2]int16, max(n, 0))
	for range max(n, 0) {
		k, lo, hi := d.int16(), d.int16(), d.int16()
		d.skipTags()
		versions[k] = [2]int16{lo, hi}
	}
	d.int32() // throttle time
	d.skipTags()
	if err := d.done(); err != nil {
		return fmt.Errorf("ApiVersions from %s: %w", c.addr, err)
	}
	if code != 0 {
		return fmt.Errorf("streamsgroup: ApiVersions v3 at %s: %w", c.addr, sarama.KError(code))
	}
	c.versions = versions
	return nil
}

// reauthenticate authenticates again when the session's re-authentication time has come
// (KIP-368): the broker closes a connection whose session expired at its next request.
func (c *Conn) reauthenticate(ctx context.Context) error {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if c.reauthAt.IsZero() || time.Now().Before(c.reauthAt) {
		return nil
	}
	return c.authenticate(ctx)
}

// authenticate runs SaslHandshake v1 and SaslAuthenticate v2 rounds (KIP-152). c.authMu is
// held.
func (c *Conn) authenticate(ctx context.Context) error {
	s := c.cfg.SASL
	var e enc
	mech := s.Mechanism
	e.legacyString(&mech)
	body, err := c.roundTripHeaders(ctx, apiSaslHandshake, 1, false, false, e.b)
	if err != nil {
		return err
	}
	d := dec{b: body}
	code := d.int16()
	var mechs []string
	if n := d.int32(); n > 0 && int(n) <= len(body) {
		for range n {
			l := d.int16()
			mechs = append(mechs, string(d.take(int(l))))
		}
	}
	if err := d.done(); err != nil {
		return fmt.Errorf("SaslHandshake from %s: %w", c.addr, err)
	}
	if code != 0 {
		return fmt.Errorf("%w: SaslHandshake at %s: mechanism %s: %w (enabled: %s)", ErrAuthentication, c.addr, mech,
			sarama.KError(code), strings.Join(mechs, ", "))
	}
	switch s.Mechanism {
	case sarama.SASLTypePlaintext:
		msg := []byte("\x00" + s.User + "\x00" + s.Password)
		_, err := c.saslRound(ctx, msg)
		return err
	case sarama.SASLTypeOAuth:
		tok, err := s.TokenProvider.Token()
		if err != nil {
			return fmt.Errorf("streamsgroup: OAUTHBEARER at %s: %w", c.addr, err)
		}
		// RFC 7628's initial client response: GS2 header, then kvpairs separated by ^A.
		var b strings.Builder
		b.WriteString("n,,\x01auth=Bearer " + tok.Token)
		keys := make([]string, 0, len(tok.Extensions))
		for k := range tok.Extensions {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString("\x01" + k + "=" + tok.Extensions[k])
		}
		b.WriteString("\x01\x01")
		reply, err := c.saslRound(ctx, []byte(b.String()))
		if err != nil {
			return err
		}
		if len(reply) > 0 {
			// The broker refused the token: its reply is an error (JSON); acknowledging it
			// with ^A makes the broker answer SASL_AUTHENTICATION_FAILED with the reason.
			if _, err := c.saslRound(ctx, []byte{1}); err != nil {
				return err
			}
			return fmt.Errorf("%w: OAUTHBEARER at %s: token refused: %s", ErrAuthentication, c.addr, reply)
		}
		return nil
	default:
		sc := s.SCRAMClient()
		if err := sc.Begin(s.User, s.Password, ""); err != nil {
			return fmt.Errorf("%w: SCRAM: %v", ErrAuthentication, err)
		}
		challenge := ""
		for !sc.Done() {
			msg, err := sc.Step(challenge)
			if err != nil {
				return fmt.Errorf("%w: SCRAM at %s: %v", ErrAuthentication, c.addr, err)
			}
			if sc.Done() {
				// The client checked the server's final message; nothing more to send.
				return nil
			}
			reply, err := c.saslRound(ctx, []byte(msg))
			if err != nil {
				return err
			}
			challenge = string(reply)
		}
		return nil
	}
}

// saslRound sends one SaslAuthenticate v2 and returns the server's bytes.
func (c *Conn) saslRound(ctx context.Context, auth []byte) ([]byte, error) {
	var e enc
	e.compactBytes(auth)
	e.noTags()
	body, err := c.roundTrip(ctx, apiSaslAuthenticate, 2, true, e.b)
	if err != nil {
		// Not ErrAuthentication: the connection failed (kfake closes it on a wrong password
		// instead of answering SASL_AUTHENTICATION_FAILED, as Kafka does).
		return nil, fmt.Errorf("streamsgroup: SASL %s authentication as %q: %w", c.cfg.SASL.Mechanism, c.cfg.SASL.User, err)
	}
	d := dec{b: body}
	code := d.int16()
	msg := d.compactNullableString()
	reply := d.compactBytes()
	lifetime := d.int64()
	d.skipTags()
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("SaslAuthenticate from %s: %w", c.addr, err)
	}
	if code != 0 {
		text := ""
		if msg != nil {
			text = ": " + *msg
		}
		who := fmt.Sprintf(" as %q", c.cfg.SASL.User)
		if c.cfg.SASL.Mechanism == sarama.SASLTypeOAuth {
			who = "" // the principal is in the token
		}
		return nil, fmt.Errorf("%w: at %s%s (%s): %w%s", ErrAuthentication, c.addr, who, c.cfg.SASL.Mechanism,
			sarama.KError(code), text)
	}
	c.reauthAt = time.Time{}
	if lifetime > 0 {
		// Re-authenticate at 85-95% of the session's lifetime (jittered so that many
		// connections do not all re-authenticate at once).
		c.reauthAt = time.Now().Add(time.Duration(float64(lifetime) * (0.85 + 0.1*rand.Float64()) * float64(time.Millisecond)))
	}
	return reply, nil
}
