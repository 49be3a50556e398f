// Command brokercheck is a small helper for scripts/kafka/kafka.sh, the script that starts and
// stops the single-node Apache Kafka broker used by `make test`.
//
// Usage:
//
//	brokercheck freeport [N]                          print N (default 1) free TCP ports on 127.0.0.1, one a line
//	brokercheck ready -bootstrap HOST:PORT [-timeout D] [-tls-dir DIR]
//	                                                  exit 0 once the broker answers a metadata request
//	brokercheck certs -dir DIR                        make the secured broker's CA and certificate in DIR
//
// `ready` asks the broker for cluster metadata (DescribeCluster) and succeeds when it names at
// least one broker and a controller; it exits 1 with one line on stderr when the deadline
// passes first. With -tls-dir it connects over TLS with the broker's own certificate (mTLS,
// the super user of the secured broker) from the files `certs` wrote there.
//
// `certs` writes a fresh certificate authority and a broker certificate it signs (subject
// CN=broker, for 127.0.0.1 and localhost, server and client use), valid for a day:
// ca.pem and ca-key.pem (the CA), broker-keystore.pem (the broker's key and chain: a Kafka
// PEM key store), broker.pem and broker-key.pem (the same chain and key apart). Key files are
// readable by the owner only. It is not part of the library.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafkatest/certs"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("brokercheck: ")
	if len(os.Args) < 2 {
		log.Fatal("usage: brokercheck freeport [N] | ready -bootstrap HOST:PORT [-timeout 2s] [-tls-dir DIR] | certs -dir DIR")
	}
	switch os.Args[1] {
	case "freeport":
		n := 1
		if len(os.Args) > 2 {
			v, err := strconv.Atoi(os.Args[2])
			if err != nil || v < 1 {
				log.Fatalf("freeport: bad count %q", os.Args[2])
			}
			n = v
		}
		ports, err := freePorts(n)
		if err != nil {
			log.Fatalf("freeport: %v", err)
		}
		for _, p := range ports {
			fmt.Println(p)
		}
	case "ready":
		fs := flag.NewFlagSet("ready", flag.ExitOnError)
		bootstrap := fs.String("bootstrap", "", "broker address host:port")
		timeout := fs.Duration("timeout", 2*time.Second, "how long to try before giving up")
		tlsDir := fs.String("tls-dir", "", "connect with TLS and the broker certificate in `DIR` (written by certs)")
		_ = fs.Parse(os.Args[2:])
		if *bootstrap == "" {
			log.Fatal("ready: -bootstrap is required")
		}
		if err := ready(*bootstrap, *timeout, *tlsDir); err != nil {
			log.Fatalf("ready: broker %s did not answer a metadata request within %v: %v", *bootstrap, *timeout, err)
		}
	case "certs":
		fs := flag.NewFlagSet("certs", flag.ExitOnError)
		dir := fs.String("dir", "", "directory to write the certificate files to")
		_ = fs.Parse(os.Args[2:])
		if *dir == "" {
			log.Fatal("certs: -dir is required")
		}
		if err := writeCerts(*dir); err != nil {
			log.Fatalf("certs: %v", err)
		}
	default:
		log.Fatalf("unknown command %q", os.Args[1])
	}
}

// freePorts binds n listeners on 127.0.0.1:0 at once (so the ports differ), notes the ports the
// kernel chose and releases them.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ready tries DescribeCluster against addr until it names a broker and a controller, or the
// timeout passes.
func ready(addr string, timeout time.Duration, tlsDir string) error {
	sarama.Logger = log.New(io.Discard, "", 0)
	deadline := time.Now().Add(timeout)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.Net.DialTimeout = timeout
	cfg.Net.ReadTimeout = timeout
	cfg.Metadata.Retry.Max = 0
	if tlsDir != "" {
		tc, err := brokerTLS(tlsDir)
		if err != nil {
			return err
		}
		cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, tc
	}
	var last error
	for time.Now().Before(deadline) {
		last = describe(addr, cfg)
		if last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond) // poll interval between metadata requests
	}
	if last == nil {
		last = errors.New("no attempt finished")
	}
	return last
}

func describe(addr string, cfg *sarama.Config) error {
	admin, err := sarama.NewClusterAdmin([]string{addr}, cfg)
	if err != nil {
		return err
	}
	defer admin.Close()
	brokers, controller, err := admin.DescribeCluster()
	if err != nil {
		return err
	}
	if len(brokers) == 0 || controller < 0 {
		return fmt.Errorf("metadata names %d brokers and controller %d", len(brokers), controller)
	}
	return nil
}

// brokerTLS is a client TLS configuration that trusts the CA in dir and presents the broker's
// certificate.
func brokerTLS(dir string) (*tls.Config, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s", filepath.Join(dir, "ca.pem"))
	}
	kp, err := tls.LoadX509KeyPair(filepath.Join(dir, "broker.pem"), filepath.Join(dir, "broker-key.pem"))
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{kp}, MinVersion: tls.VersionTLS12}, nil
}

// writeCerts writes a fresh CA and broker certificate to dir (see the package comment).
func writeCerts(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := certs.NewCA("kstreams-test-ca")
	if err != nil {
		return err
	}
	caKey, err := ca.KeyPEM()
	if err != nil {
		return err
	}
	broker, err := ca.Issue("broker", "127.0.0.1", "localhost")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"ca.pem", ca.CertPEM, 0o644},
		{"ca-key.pem", caKey, 0o600},
		{"broker.pem", broker.CertPEM, 0o644},
		{"broker-key.pem", broker.KeyPEM, 0o600},
		{"broker-keystore.pem", broker.KeystorePEM(), 0o600},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}
