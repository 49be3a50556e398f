// Command smokeclient is the Go counterpart of Kafka's StreamsSmokeTest "process" command: it
// runs the SmokeTestClient topology ([systemtest.SmokeTopology]) as Kafka's system tests run
// the Java client, so that Kafka's SmokeTestDriver can verify it.
//
//	smokeclient PROPERTIES_FILE process
//
// The properties file is the one Kafka's system tests write (bootstrap.servers,
// processing.guarantee at_least_once or exactly_once_v2, num.stream.threads,
// num.standby.replicas, commit.interval.ms, session.timeout.ms, ...); SmokeTestClient's own
// settings are the defaults under it ([systemtest.SmokeProperties]); like Java's client it
// uses a fresh temporary state directory (removed on exit) unless the file names one. It prints what Kafka's client prints, each line
// prefixed by the client's name (a random UUID):
//
//	<name> <time>: REBALANCING -> RUNNING
//	<name>: SMOKE-TEST-CLIENT-STARTED            (within a minute of starting)
//	processed 100 records from topic=data
//	<name>: SMOKE-TEST-CLIENT-EXCEPTION ...       (a stream thread failed, or no start in time)
//	<name>: SMOKE-TEST-CLIENT-CLOSED             (after SIGTERM or SIGINT, once closed cleanly)
//
// Exit status 1 on a bad command line or properties file, 0 otherwise.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/systemtest"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, "smokeclient expects two parameters: propFile, command; but only sees %d parameter(s)\n", len(os.Args)-1)
		os.Exit(1)
	}
	propFile, command := os.Args[1], os.Args[2]
	props, err := systemtest.LoadProperties(propFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if props["bootstrap.servers"] == "" {
		fmt.Fprintln(os.Stderr, "No bootstrap kafka servers specified in bootstrap.servers")
		os.Exit(1)
	}
	if command != "process" {
		fmt.Fprintln(os.Stderr, "unknown command: "+command+" (the driver's run command is systemtest/java's SmokeRun)")
		os.Exit(1)
	}
	if g := props["processing.guarantee"]; g != "at_least_once" && g != "exactly_once_v2" {
		fmt.Fprintln(os.Stderr, "processingGuarantee must be either at_least_once, exactly_once_v2")
		os.Exit(1)
	}
	out := systemtest.NewPrinter(os.Stdout)
	out.Printf("StreamsTest instance started (StreamsSmokeTest)")
	out.Printf("command=%s", command)
	out.Printf("props=%s", formatProps(props))

	stateDir, err := os.MkdirTemp("", "kstreams-smoke-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	err = run(props, newName(), stateDir, out, stop)
	_ = os.RemoveAll(stateDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(props map[string]string, name, stateDir string, out *systemtest.Printer, stop <-chan os.Signal) error {
	cfg, err := kstreams.ConfigFromProperties(systemtest.SmokeProperties(props, name, stateDir))
	if err != nil {
		return err
	}
	topology, err := systemtest.SmokeTopology(name, out, nil)
	if err != nil {
		return err
	}
	app, err := kstreams.New(topology, cfg)
	if err != nil {
		return err
	}
	started := make(chan struct{})
	var uncaught atomic.Bool
	app.SetStateListener(func(newState, oldState kstreams.State) {
		out.Printf("%s %s: %s -> %s", name, time.Now().UTC().Format(time.RFC3339Nano), oldState, newState)
		if oldState == kstreams.StateRebalancing && newState == kstreams.StateRunning {
			select {
			case <-started:
			default:
				close(started)
			}
		}
	})
	app.SetUncaughtExceptionHandler(func(err error) kstreams.ThreadResponse {
		out.Printf("%s: SMOKE-TEST-CLIENT-EXCEPTION", name)
		out.Printf("%s: FATAL: An unexpected exception is encountered: %v", name, err)
		uncaught.Store(true)
		return kstreams.ShutdownClient
	})
	if err := app.Start(context.Background()); err != nil {
		return err
	}
	select {
	case <-started:
		out.Printf("%s: SMOKE-TEST-CLIENT-STARTED", name)
		out.Printf("%s started at %s", name, time.Now().UTC().Format(time.RFC3339Nano))
	case <-time.After(time.Minute):
		out.Printf("%s: SMOKE-TEST-CLIENT-EXCEPTION: Didn't start in one minute", name)
	case <-stop:
		return closeApp(app, name, &uncaught, out)
	}
	<-stop
	return closeApp(app, name, &uncaught, out)
}

func closeApp(app *kstreams.KafkaStreams, name string, uncaught *atomic.Bool, out *systemtest.Printer) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch err := app.Close(ctx); {
	case err != nil:
		out.Printf("%s: SMOKE-TEST-CLIENT-EXCEPTION: Didn't close in time.", name)
	case uncaught.Load():
		out.Printf("%s: SMOKE-TEST-CLIENT-EXCEPTION: Got an uncaught exception", name)
	default:
		out.Printf("%s: SMOKE-TEST-CLIENT-CLOSED", name)
	}
	return nil
}

// newName returns a random UUID (version 4) in its usual text form. Java: UUID.randomUUID.
func newName() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// formatProps prints props as Java's Properties.toString does ({k=v, ...}), sorted.
func formatProps(props map[string]string) string {
	kv := make([]string, 0, len(props))
	for k, v := range props {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return "{" + strings.Join(kv, ", ") + "}"
}
