// Command brokercheck is a small helper for scripts/kafka/kafka.sh, the script that starts and
// stops the single-node Apache Kafka broker used by `make test`.
//
// Usage:
//
//	brokercheck freeport [N]                          print N (default 1) free TCP ports on 127.0.0.1, one a line
//	brokercheck ready -bootstrap HOST:PORT [-timeout D] exit 0 once the broker answers a metadata request
//
// `ready` asks the broker for cluster metadata (DescribeCluster) and succeeds when it names at
// least one broker and a controller; it exits 1 with one line on stderr when the deadline
// passes first. It is not part of the library.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/IBM/sarama"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("brokercheck: ")
	if len(os.Args) < 2 {
		log.Fatal("usage: brokercheck freeport [N] | ready -bootstrap HOST:PORT [-timeout 2s]")
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
		_ = fs.Parse(os.Args[2:])
		if *bootstrap == "" {
			log.Fatal("ready: -bootstrap is required")
		}
		if err := ready(*bootstrap, *timeout); err != nil {
			log.Fatalf("ready: broker %s did not answer a metadata request within %v: %v", *bootstrap, *timeout, err)
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
func ready(addr string, timeout time.Duration) error {
	sarama.Logger = log.New(io.Discard, "", 0)
	deadline := time.Now().Add(timeout)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.Net.DialTimeout = timeout
	cfg.Net.ReadTimeout = timeout
	cfg.Metadata.Retry.Max = 0
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
