package kstreams

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/props"
)

// The connections' security: sarama's TLS and SASL settings from Config, and Config's TLS
// from Java's ssl.* PEM properties.

var jaasOption = regexp.MustCompile(`(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"`)

// saramaConfig builds the base sarama configuration of every connection: Kafka 4.0
// protocol, security, metadata retries.
func (c *Config) saramaConfig() *sarama.Config {
	sc := sarama.NewConfig()
	sc.Version = sarama.V4_0_0_0
	sc.Metadata.Retry.Max = 10
	sc.Metadata.Retry.Backoff = 250 * time.Millisecond
	proto := strings.ToUpper(c.SecurityProtocol)
	if proto == "SSL" || proto == "SASL_SSL" {
		sc.Net.TLS.Enable = true
		sc.Net.TLS.Config = c.TLS
	}
	if proto == "SASL_PLAINTEXT" || proto == "SASL_SSL" {
		sc.Net.SASL.Enable = true
		sc.Net.SASL.User = c.SASLUsername
		sc.Net.SASL.Password = c.SASLPassword
		switch strings.ToUpper(c.SASLMechanism) {
		case "SCRAM-SHA-256":
			sc.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
			sc.Net.SASL.SCRAMClientGeneratorFunc = kafka.SCRAMSHA256
		case "SCRAM-SHA-512":
			sc.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
			sc.Net.SASL.SCRAMClientGeneratorFunc = kafka.SCRAMSHA512
		case "OAUTHBEARER":
			sc.Net.SASL.Mechanism = sarama.SASLTypeOAuth
			tokens := c.tokens
			if tokens == nil && c.SASLOAuthBearerTokenProvider != nil {
				tokens = c.newTokenSource() // a Config not made by New: a cache of this configuration's own
			}
			if tokens != nil {
				sc.Net.SASL.TokenProvider = tokens
			}
		default:
			sc.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		}
	}
	if c.Sarama != nil {
		c.Sarama(sc)
	}
	return sc
}

// SaramaConfig returns the base sarama configuration of the instance's connections, for tools
// and admin clients that talk to the same cluster as the application: protocol version Kafka
// 4.0, metadata retries, and security from SecurityProtocol, SASLMechanism, SASLUsername,
// SASLPassword, SASLOAuthBearerTokenProvider and TLS (as ConfigFromProperties reads them from
// security.protocol, sasl.mechanism, sasl.jaas.config, sasl.oauthbearer.* and the ssl.* PEM
// properties), then the Sarama hook. For OAUTHBEARER each call makes its own token cache
// (the connections of an instance made by New share one). It does not validate c. No Java
// counterpart (Java clients take the properties themselves).
func (c Config) SaramaConfig() *sarama.Config { return c.saramaConfig() }

// tlsFromProperties builds a tls.Config from PEM properties (ssl.truststore.type=PEM with
// ssl.truststore.location or ssl.truststore.certificates; ssl.keystore.type=PEM with
// ssl.keystore.certificate.chain and ssl.keystore.key). JKS/PKCS12 stores are not supported.
func tlsFromProperties(get func(string) (string, bool)) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if v, ok := get(props.SSLEndpointIdentificationConfig); ok && v == "" {
		cfg.InsecureSkipVerify = true
	}
	if t, ok := get(props.SSLTruststoreTypeConfig); ok && !strings.EqualFold(t, "PEM") {
		return nil, &ConfigError{Property: props.SSLTruststoreTypeConfig, Value: t, Reason: "only PEM is supported"}
	}
	var pem []byte
	if v, ok := get(props.SSLTruststoreCertificatesConfig); ok {
		pem = []byte(v)
	} else if v, ok := get(props.SSLTruststoreLocationConfig); ok {
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, &ConfigError{Property: props.SSLTruststoreLocationConfig, Value: v, Reason: err.Error()}
		}
		pem = b
	}
	if pem != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &ConfigError{Property: props.SSLTruststoreCertificatesConfig, Value: "(pem)", Reason: "no certificate found"}
		}
		cfg.RootCAs = pool
	}
	if t, ok := get(props.SSLKeystoreTypeConfig); ok && !strings.EqualFold(t, "PEM") {
		return nil, &ConfigError{Property: props.SSLKeystoreTypeConfig, Value: t, Reason: "only PEM is supported"}
	}
	chain, okc := get(props.SSLKeystoreCertificateChainConfig)
	key, okk := get(props.SSLKeystoreKeyConfig)
	if okc || okk {
		cert, err := tls.X509KeyPair([]byte(chain), []byte(key))
		if err != nil {
			return nil, &ConfigError{Property: props.SSLKeystoreKeyConfig, Value: "(pem)", Reason: err.Error()}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
