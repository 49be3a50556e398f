// Command eosclient is the Go counterpart of Kafka's StreamsEosTest "process" and
// "process-complex" commands: it runs the EosTestClient topology ([systemtest.EosTopology]) as
// Kafka's system tests run the Java client, so that Kafka's EosTestDriver can verify it.
//
//	eosclient PROPERTIES_FILE process|process-complex
//
// The properties file is the one Kafka's system tests write (bootstrap.servers, state.dir,
// processing.guarantee=exactly_once_v2, session.timeout.ms, ...); EosTestClient's own settings
// are laid over it ([systemtest.EosProperties]). It prints what Kafka's client prints and the
// system tests wait for, each state line after a line with the time in ms:
//
//	StateChange: REBALANCING -> RUNNING
//	processed 100 records from topic=data
//	EOS-TEST-CLIENT-EXCEPTION     (a stream thread failed: the instance is closed and made anew)
//	EOS-TEST-CLIENT-CLOSED        (after SIGTERM or SIGINT, once closed cleanly)
//
// Exit status 1 on a bad command line or properties file, 0 after a clean close.
package main

import (
	"context"
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
		fmt.Fprintf(os.Stderr, "eosclient expects two parameters: propFile, command; but only sees %d parameter(s)\n", len(os.Args)-1)
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
	var withRepartitioning bool
	switch command {
	case "process":
	case "process-complex":
		withRepartitioning = true
	default:
		fmt.Fprintln(os.Stderr, "unknown command: "+command+" (the driver's run and verify commands are Kafka's StreamsEosTest)")
		os.Exit(1)
	}
	if props["processing.guarantee"] != "exactly_once_v2" {
		fmt.Fprintln(os.Stderr, "processingGuarantee must be exactly_once_v2")
		os.Exit(1)
	}

	out := systemtest.NewPrinter(os.Stdout)
	out.Printf("StreamsTest instance started")
	out.Printf("kafka=%s", props["bootstrap.servers"])
	out.Printf("props=%s", formatProps(props))
	out.Printf("command=%s", command)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	if err := run(props, withRepartitioning, out, stop); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run keeps one application instance running until stop fires, making a new one (after a
// second, as Java's client loop does) whenever a stream thread's error shut the last one down.
func run(props map[string]string, withRepartitioning bool, out *systemtest.Printer, stop <-chan os.Signal) error {
	cfg, err := kstreams.ConfigFromProperties(systemtest.EosProperties(props))
	if err != nil {
		return err
	}
	for {
		topology, err := systemtest.EosTopology(withRepartitioning, out)
		if err != nil {
			return err
		}
		app, err := kstreams.New(topology, cfg)
		if err != nil {
			return err
		}
		var uncaught atomic.Bool
		app.SetUncaughtExceptionHandler(func(err error) kstreams.ThreadResponse {
			out.Printf("%d", time.Now().UnixMilli())
			out.Printf("EOS-TEST-CLIENT-EXCEPTION")
			out.Printf("%v", err)
			uncaught.Store(true)
			return kstreams.ShutdownClient
		})
		app.SetStateListener(func(newState, oldState kstreams.State) {
			out.Printf("%d", time.Now().UnixMilli())
			out.Printf("StateChange: %s -> %s", oldState, newState)
		})
		if err := app.Start(context.Background()); err != nil {
			return err
		}
		select {
		case <-stop:
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
			err := app.Close(ctx)
			cancel()
			if err != nil {
				return fmt.Errorf("close: %w", err)
			}
			if !uncaught.Load() {
				out.Printf("%d", time.Now().UnixMilli())
				out.Printf("EOS-TEST-CLIENT-CLOSED")
			}
			return nil
		case <-app.Done():
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			_ = app.Close(ctx)
			cancel()
			select {
			case <-stop:
				return nil
			case <-time.After(time.Second):
			}
		}
	}
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
