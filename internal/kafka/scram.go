package kafka

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"github.com/IBM/sarama"
)

// scramClient is a SCRAM (RFC 5802) client for sarama's SASL/SCRAM-SHA-256 and -512
// mechanisms (Java: ScramLoginModule).
type scramClient struct {
	h                func() hash.Hash
	user, pass       string
	nonce, firstBare string
	serverSignature  []byte
	step             int
	done             bool
}

// SCRAMSHA256 returns a new SCRAM-SHA-256 client: a sarama Net.SASL.SCRAMClientGeneratorFunc,
// also used by the connections of our own (internal/kafka/streamsgroup).
func SCRAMSHA256() sarama.SCRAMClient { return &scramClient{h: sha256.New} }

// SCRAMSHA512 returns a new SCRAM-SHA-512 client, as SCRAMSHA256.
func SCRAMSHA512() sarama.SCRAMClient { return &scramClient{h: sha512.New} }

// Begin implements sarama.SCRAMClient.
func (c *scramClient) Begin(user, pass, _ string) error {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	c.user, c.pass, c.nonce = user, pass, base64.RawStdEncoding.EncodeToString(b)
	c.step, c.done = 0, false
	return nil
}

func scramEscape(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}

// Step implements sarama.SCRAMClient.
func (c *scramClient) Step(challenge string) (string, error) {
	c.step++
	switch c.step {
	case 1:
		c.firstBare = "n=" + scramEscape(c.user) + ",r=" + c.nonce
		return "n,," + c.firstBare, nil
	case 2:
		attrs := map[string]string{}
		for _, kv := range strings.Split(challenge, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				attrs[k] = v
			}
		}
		r, s, i := attrs["r"], attrs["s"], attrs["i"]
		if !strings.HasPrefix(r, c.nonce) {
			return "", errors.New("scram: server nonce does not extend the client nonce")
		}
		salt, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "", fmt.Errorf("scram: bad salt: %w", err)
		}
		iters, err := strconv.Atoi(i)
		if err != nil || iters < 1 {
			return "", fmt.Errorf("scram: bad iteration count %q", i)
		}
		salted, err := pbkdf2.Key(c.h, c.pass, salt, iters, c.h().Size())
		if err != nil {
			return "", err
		}
		mac := func(key []byte, msg string) []byte {
			m := hmac.New(c.h, key)
			m.Write([]byte(msg))
			return m.Sum(nil)
		}
		clientKey := mac(salted, "Client Key")
		hh := c.h()
		hh.Write(clientKey)
		storedKey := hh.Sum(nil)
		final := "c=biws,r=" + r
		authMsg := c.firstBare + "," + challenge + "," + final
		sig := mac(storedKey, authMsg)
		proof := make([]byte, len(clientKey))
		for k := range clientKey {
			proof[k] = clientKey[k] ^ sig[k]
		}
		c.serverSignature = mac(mac(salted, "Server Key"), authMsg)
		return final + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
	default:
		v, ok := strings.CutPrefix(challenge, "v=")
		if !ok {
			return "", fmt.Errorf("scram: server error: %s", challenge)
		}
		got, err := base64.StdEncoding.DecodeString(v)
		if err != nil || !hmac.Equal(got, c.serverSignature) {
			return "", errors.New("scram: server signature mismatch")
		}
		c.done = true
		return "", nil
	}
}

// Done implements sarama.SCRAMClient.
func (c *scramClient) Done() bool { return c.done }
