// Command interactive shows interactive queries across instances: two instances of one Kafka
// Streams application run in this process, each with its own application.server address and an
// HTTP server on it. The application counts clicks per user into the store "clicks-per-user";
// its tasks (and so the users) are split between the two instances. Each instance answers
//
//	GET /counts/{user}   the user's count, if this instance owns the user's partition; if the
//	                     other instance does, a 307 redirect to the same path there (found with
//	                     QueryMetadataForKey); 503 while the owner is not known (rebalancing)
//	GET /counts          the counts this instance holds (its local tasks only)
//
// By default it starts an embedded in-process Kafka broker (kfake), writes a generated
// stream of clicks, waits until both instances have processed them, asks instance A for
// every user (following redirects) and prints one line per user to stdout:
//
//	user<TAB>count<TAB>served by<TAB>how ("direct" or "redirected from <A>")
//
// and exits. Progress goes to stderr. Flags: -bootstrap host:port[,...] uses a real cluster
// (the topic is created if missing); -serve keeps both HTTP servers running until
// interrupted, so you can try `curl -L http://<A>/counts/alice`; -clicks N sets how many
// clicks are written (default 2000).
//
// Java counterpart: Confluent's kafka-streams-examples WordCountInteractiveQueriesExample
// (KafkaStreams.queryMetadataForKey, KafkaStreams.store and application.server).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// StoreName is the queryable store of clicks per user.
const StoreName = "clicks-per-user"

// Users are the users the generated clicks come from.
var Users = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj"}

// Click is one generated click: the record key is User, the value Page.
type Click struct {
	User, Page string
}

// Clicks returns n deterministic clicks (the same n gives the same clicks).
func Clicks(n int) []Click {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	pages := []string{"/", "/docs", "/pricing", "/blog", "/about"}
	out := make([]Click, n)
	for i := range out {
		out[i] = Click{User: Users[r.IntN(len(Users))], Page: pages[r.IntN(len(pages))]}
	}
	return out
}

// Topology counts clicks per user (the record key) into StoreName.
func Topology(input string) (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, input, kstream.ConsumedWith(serde.String(), serde.String())).
		GroupByKey(kstream.GroupedWith(serde.String(), serde.String())).
		Count(kstream.MaterializedAs[string, int64](StoreName))
	return b.Build()
}

// Instance is one application instance with its HTTP server on its application.server address.
type Instance struct {
	// Name is "A" or "B".
	Name string
	// Addr is the instance's application.server and HTTP address (host:port).
	Addr string
	// App is the application instance.
	App *kstreams.KafkaStreams

	srv *http.Server
}

// countResponse is the JSON body of GET /counts/{user}.
type countResponse struct {
	User     string `json:"user"`
	Count    int64  `json:"count"`
	ServedBy string `json:"served_by"`
}

// ServeHTTP implements http.Handler: GET /counts/{user} and GET /counts.
func (in *Instance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/counts")
	if r.Method != http.MethodGet || (path != "" && path != "/" && !strings.HasPrefix(path, "/")) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("X-Served-By", in.Addr)
	if path == "" || path == "/" {
		in.serveLocal(w)
		return
	}
	user := strings.TrimPrefix(path, "/")
	md, err := in.App.QueryMetadataForKey(StoreName, []byte(user)) // the String serde's bytes
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if md.ActiveHost.Host == "" {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the owner of this key is not known yet (rebalancing)", http.StatusServiceUnavailable)
		return
	}
	if owner := net.JoinHostPort(md.ActiveHost.Host, strconv.Itoa(md.ActiveHost.Port)); owner != in.Addr {
		http.Redirect(w, r, "http://"+owner+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		return
	}
	kv, err := localStore(in.App)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	v, ok, err := kv.Get(user)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	var n int64
	if ok {
		n = v
	}
	writeJSON(w, countResponse{User: user, Count: n, ServedBy: in.Addr})
}

// localStore is the instance's read-only view of StoreName, with the types of the Count's
// Materialized (string users, int64 counts).
func localStore(app *kstreams.KafkaStreams) (store.ReadOnlyKeyValueStore[string, int64], error) {
	return kstreams.KeyValueStore[string, int64](app, StoreName)
}

func (in *Instance) serveLocal(w http.ResponseWriter) {
	kv, err := localStore(in.App)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	it := kv.All()
	defer it.Close()
	out := map[string]int64{}
	for it.Next() {
		out[it.Key()] = it.Value()
	}
	if err := it.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, out)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "interactive: "+strings.Join(strings.Fields(err.Error()), " "))
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("interactive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap", "", "`host:port[,...]` of a Kafka cluster to use instead of the embedded broker")
	serve := fs.Bool("serve", false, "keep serving HTTP until interrupted")
	nClicks := fs.Int("clicks", 2000, "how many clicks to write")
	appID := fs.String("application-id", "interactive-clicks", "application.id")
	topic := fs.String("input-topic", "user-clicks", "input topic (created with 4 partitions if missing)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "interactive: "+format+"\n", a...) }

	var addrs []string
	if *bootstrap == "" {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			return fmt.Errorf("start the embedded broker: %w", err)
		}
		defer c.Close()
		addrs = c.ListenAddrs()
		progress("started an embedded Kafka broker (kfake) at %s", strings.Join(addrs, ","))
	} else {
		addrs = strings.Split(*bootstrap, ",")
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 1
	cfg.Producer.Partitioner = sarama.NewMurmur2Partitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	admin, err := sarama.NewClusterAdmin(addrs, cfg)
	if err != nil {
		return fmt.Errorf("cannot reach Kafka at %s: %v", strings.Join(addrs, ","), err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(*topic, &sarama.TopicDetail{NumPartitions: 4, ReplicationFactor: -1}, false); err != nil &&
		!errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", *topic, err)
	}

	var insts []*Instance
	var stateDirs []string
	defer func() {
		for _, in := range insts {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := in.App.Close(cctx); err != nil {
				progress("instance %s: close: %v", in.Name, err)
			}
			cancel()
			_ = in.srv.Close()
		}
		// Only after Close: the instances' stores live in these directories until then.
		for _, dir := range stateDirs {
			os.RemoveAll(dir)
		}
	}()
	for _, name := range []string{"A", "B"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		stateDir, err := os.MkdirTemp("", "interactive-"+name+"-")
		if err != nil {
			ln.Close()
			return err
		}
		stateDirs = append(stateDirs, stateDir)
		// Each instance gets its own Topology, as it would in its own process.
		topo, err := Topology(*topic)
		if err != nil {
			ln.Close()
			return err
		}
		in := &Instance{Name: name, Addr: ln.Addr().String()}
		in.App, err = kstreams.New(topo, kstreams.Config{
			ApplicationID: *appID, BootstrapServers: addrs, ApplicationServer: in.Addr, StateDir: stateDir,
			CommitInterval: 100 * time.Millisecond,
			Logger:         slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		if err != nil {
			ln.Close()
			return err
		}
		in.srv = &http.Server{Handler: in, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = in.srv.Serve(ln) }()
		insts = append(insts, in)
		if err := in.App.Start(context.Background()); err != nil {
			return fmt.Errorf("instance %s: start: %w", name, err)
		}
		progress("instance %s: application.server and HTTP at %s", name, in.Addr)
	}

	// Both instances own tasks before any click is written, so no later rebalance moves
	// half-processed work.
	if err := waitFor(ctx, insts, "both instances to run with tasks", func() bool {
		for _, in := range insts {
			if in.App.State() != kstreams.StateRunning || countTasks(in.App) == 0 {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	clicks := Clicks(*nClicks)
	p, err := sarama.NewSyncProducer(addrs, cfg)
	if err != nil {
		return err
	}
	msgs := make([]*sarama.ProducerMessage, len(clicks))
	for i, c := range clicks {
		msgs[i] = &sarama.ProducerMessage{Topic: *topic, Key: sarama.StringEncoder(c.User), Value: sarama.StringEncoder(c.Page)}
	}
	err = p.SendMessages(msgs)
	p.Close()
	if err != nil {
		return fmt.Errorf("write clicks: %w", err)
	}
	progress("wrote %d clicks of %d users to %s", len(clicks), len(Users), *topic)
	// Both instances share the application's consumer group: either can wait for it.
	if err := insts[0].App.WaitCaughtUp(ctx); err != nil {
		return err
	}

	a := insts[0]
	noFollow := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	follow := &http.Client{Timeout: 10 * time.Second}
	users := append([]string(nil), Users...)
	sort.Strings(users)
	for _, u := range users {
		url := "http://" + a.Addr + "/counts/" + u
		how := "direct"
		resp, err := noFollow.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusTemporaryRedirect:
			how = "redirected from " + a.Addr
		default:
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		resp, err = follow.Get(url)
		if err != nil {
			return err
		}
		var cr countResponse
		err = json.NewDecoder(resp.Body).Decode(&cr)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s (following redirects): %s %v", url, resp.Status, err)
		}
		fmt.Fprintf(stdout, "%s\t%d\t%s\t%s\n", cr.User, cr.Count, cr.ServedBy, how)
	}
	if *serve {
		progress("serving until interrupted: try curl -L http://%s/counts/alice or http://%s/counts", a.Addr, insts[1].Addr)
		<-ctx.Done()
	}
	return nil
}

// countTasks returns how many active tasks the instance runs.
func countTasks(app *kstreams.KafkaStreams) int {
	n := 0
	for _, th := range app.MetadataForLocalThreads() {
		n += len(th.ActiveTasks)
	}
	return n
}

// waitFor polls cond every 50 ms until it holds, an instance fails, or ctx ends.
func waitFor(ctx context.Context, insts []*Instance, what string, cond func() bool) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		for _, in := range insts {
			if err := in.App.Err(); err != nil {
				return fmt.Errorf("instance %s failed while waiting for %s: %w", in.Name, what, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
