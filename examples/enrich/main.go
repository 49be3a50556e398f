// Command enrich prices orders by calling an outside HTTP service from the topology, with
// kstream's MapValuesAsync: the calls run concurrently (up to -in-flight per task) while the
// orders of one customer (the record key) are priced and written in their input order, and a
// slow service holds up neither the consumer group nor the other partitions.
//
// It starts a local pricing service (GET /price?sku=...: {"cents": n} after -latency, 404 for
// an unknown SKU), and by default an embedded in-process Kafka broker (kfake); it writes
// -orders orders to the orders topic (4 partitions, keyed by customer id), prices them into
// priced-orders, sends the orders whose SKU the service does not know to the dead-letter topic
// orders-dlq (the processing handler continues), closes the application and prints
//
//	priced<TAB>order id<TAB>customer<TAB>sku<TAB>quantity<TAB>total (cents)
//	dead<TAB>order id<TAB>customer<TAB>sku
//
// sorted by order id; progress and throughput go to stderr. Flag -bootstrap host:port[,...]
// uses a real cluster (topics created if missing); -application-id and -topic-prefix rename
// what it creates.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Order is an order (key: customer id).
type Order struct {
	ID  string `json:"id"`
	SKU string `json:"sku"`
	Qty int64  `json:"qty"`
}

// PricedOrder is an order with its price from the pricing service.
type PricedOrder struct {
	Order
	UnitCents  int64 `json:"unitCents"`
	TotalCents int64 `json:"totalCents"`
}

// Catalog is what the pricing service knows: unit price in cents by SKU.
var Catalog = map[string]int64{}

func init() {
	for i := range 10 {
		Catalog[fmt.Sprintf("sku-%d", i)] = int64(i+1) * 150
	}
}

// MakeOrder returns the i-th order of the run and its customer: SKUs sku-0..sku-10 in turn
// (sku-10 is not in the catalog), quantities 1..3, customers c0..c49.
func MakeOrder(i int) (customer string, o Order) {
	return fmt.Sprintf("c%d", i%50), Order{ID: fmt.Sprintf("o%05d", i), SKU: fmt.Sprintf("sku-%d", i%11), Qty: int64(1 + i%3)}
}

// Topics names the example's topics.
type Topics struct{ Orders, Priced, DeadLetters string }

// TopicsWithPrefix returns the topics named <prefix>-orders, <prefix>-priced-orders and
// <prefix>-orders-dlq.
func TopicsWithPrefix(prefix string) Topics {
	return Topics{Orders: prefix + "-orders", Priced: prefix + "-priced-orders", DeadLetters: prefix + "-orders-dlq"}
}

// PriceClient calls the pricing service at base.
type PriceClient struct {
	base string
	http *http.Client
}

// Price returns the unit price of sku; ctx ends the call (the step's timeout, a revocation).
func (c *PriceClient) Price(ctx context.Context, sku string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/price?sku="+sku, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("pricing service: sku %s: %s", sku, resp.Status)
	}
	var p struct{ Cents int64 }
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return 0, err
	}
	return p.Cents, nil
}

// Topology reads orders, prices each through the service (inFlight calls at once per task,
// per customer in order, 5 s per call at most) and writes the priced orders.
func Topology(t Topics, prices *PriceClient, inFlight int) (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()
	orders := kstream.Stream(b, t.Orders, kstream.ConsumedWith(serde.String(), serde.JSON[Order]()))
	orders.MapValuesAsync(func(ctx context.Context, customer string, o Order) (PricedOrder, error) {
		unit, err := prices.Price(ctx, o.SKU)
		if err != nil {
			return PricedOrder{}, err // to the processing handler, then the dead-letter topic
		}
		return PricedOrder{Order: o, UnitCents: unit, TotalCents: unit * o.Qty}, nil
	}, processor.AsyncOptions{MaxInFlight: inFlight, Timeout: 5 * time.Second}).
		To(t.Priced, kstream.ProducedWith(serde.String(), serde.JSON[PricedOrder]()))
	return b.Build()
}

// startPricing serves the catalog on a local port, each answer after latency.
func startPricing(latency time.Duration) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return
		}
		cents, ok := Catalog[r.URL.Query().Get("sku")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]int64{"cents": cents})
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "enrich: "+strings.Join(strings.Fields(err.Error()), " "))
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("enrich", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap", "", "`host:port[,...]` of a Kafka cluster to use instead of the embedded broker")
	appID := fs.String("application-id", "enrich-example", "application.id")
	prefix := fs.String("topic-prefix", "enrich", "prefix of the topics")
	n := fs.Int("orders", 500, "orders to write")
	latency := fs.Duration("latency", 20*time.Millisecond, "the pricing service's time per call")
	inFlight := fs.Int("in-flight", 32, "calls in flight per task")
	if err := fs.Parse(args); err != nil {
		return err
	}
	topics := TopicsWithPrefix(*prefix)
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "enrich: "+format+"\n", a...) }

	url, stopPricing, err := startPricing(*latency)
	if err != nil {
		return err
	}
	defer stopPricing()
	prices := &PriceClient{base: url, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * *inFlight}}}
	progress("pricing service at %s, %v per call", url, *latency)

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
	stateDir, err := os.MkdirTemp("", "enrich-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stateDir)

	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 1
	cfg.Producer.Partitioner = sarama.NewMurmur2Partitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		return fmt.Errorf("cannot reach Kafka at %s: %v", strings.Join(addrs, ","), err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return err
	}
	for _, t := range []string{topics.Orders, topics.Priced, topics.DeadLetters} {
		if err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: 4, ReplicationFactor: -1}, false); err != nil &&
			!errors.Is(err, sarama.ErrTopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", t, err)
		}
	}

	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return err
	}
	var msgs []*sarama.ProducerMessage
	for i := range *n {
		customer, o := MakeOrder(i)
		v, _ := json.Marshal(o)
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topics.Orders, Key: sarama.StringEncoder(customer), Value: sarama.ByteEncoder(v)})
	}
	err = p.SendMessages(msgs)
	p.Close()
	if err != nil {
		return fmt.Errorf("write orders: %w", err)
	}
	progress("wrote %d orders", *n)

	topo, err := Topology(topics, prices, *inFlight)
	if err != nil {
		return err
	}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: *appID, BootstrapServers: addrs, StateDir: stateDir,
		ProcessingGuarantee: kstreams.ExactlyOnceV2,
		// An unknown SKU is logged, counted, and its order sent to the dead-letter topic.
		ProcessingHandler:    kstreams.LogAndContinueProcessing,
		DeadLetterQueueTopic: topics.DeadLetters,
		Logger:               slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		return err
	}
	start := time.Now()
	if err := app.Start(context.Background()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	werr := app.WaitCaughtUp(ctx)
	took := time.Since(start)
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = app.Close(cctx) // the final commit waits for the calls still in flight
	cancel()
	if err := errors.Join(werr, err, app.Err()); err != nil {
		return err
	}
	progress("priced %d orders in %v, start-up and group join included (one call per order, %v each: %v one after the other)",
		*n, took.Round(time.Millisecond), *latency, (time.Duration(*n) * *latency).Round(time.Millisecond))

	var lines []string
	priced, err := readAll(client, topics.Priced)
	if err != nil {
		return err
	}
	for _, m := range priced {
		var po PricedOrder
		if err := json.Unmarshal(m.Value, &po); err != nil {
			return fmt.Errorf("%s: %w", topics.Priced, err)
		}
		lines = append(lines, fmt.Sprintf("priced\t%s\t%s\t%s\t%d\t%d", po.ID, m.Key, po.SKU, po.Qty, po.TotalCents))
	}
	dead, err := readAll(client, topics.DeadLetters)
	if err != nil {
		return err
	}
	for _, m := range dead {
		var o Order
		if err := json.Unmarshal(m.Value, &o); err != nil {
			return fmt.Errorf("%s: %w", topics.DeadLetters, err)
		}
		lines = append(lines, fmt.Sprintf("dead\t%s\t%s\t%s", o.ID, m.Key, o.SKU))
	}
	sort.Slice(lines, func(i, j int) bool { return strings.Split(lines[i], "\t")[1] < strings.Split(lines[j], "\t")[1] })
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return nil
}

// readAll reads every partition of topic from the start to its current end, read_committed.
func readAll(client sarama.Client, topic string) ([]*sarama.ConsumerMessage, error) {
	ps, err := client.Partitions(topic)
	if err != nil {
		return nil, err
	}
	c, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []*sarama.ConsumerMessage
	for _, p := range ps {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, err
		}
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		timeout := time.After(30 * time.Second)
	read:
		for {
			select {
			case m := <-pc.Messages():
				out = append(out, m)
				if m.Offset+1 >= end {
					break read
				}
			case <-time.After(time.Second):
				break read // the rest are transaction markers
			case <-timeout:
				pc.Close()
				return nil, fmt.Errorf("%s/%d: not read to offset %d within 30 s", topic, p, end)
			}
		}
		pc.Close()
	}
	return out, nil
}
