// Command join shows the two kinds of DSL join on a small, fixed story:
//
//   - orders enriched with customers: the orders stream, re-keyed by customer id (which
//     repartitions it), is left-joined with the customers table (Java: KStream.leftJoin(KTable)).
//     An order sees the customer's row as it is when the order is processed, so a customer
//     update changes later orders only; an order of an unknown customer is kept, with no
//     customer (an inner Join would drop it).
//   - ad clicks matched to impressions: the impressions stream is joined with the clicks
//     stream, both keyed by impression id, over a window of 0 before and 10 minutes after the
//     impression (Java: KStream.join(KStream, ValueJoiner, JoinWindows.ofTimeDifferenceWithNoGrace
//     (Duration.ofMinutes(10)).before(Duration.ZERO))): a click counts only if it comes
//     within 10 minutes after its impression.
//
// By default it starts an embedded in-process Kafka broker (kfake), writes the records of
// Script one at a time (waiting until each is processed, so the story's order is also the
// processing order), closes the application, reads both output topics and prints to stdout
//
//	order<TAB>order id<TAB>customer id<TAB>amount (cents)<TAB>customer name (tier) | unknown customer
//	match<TAB>impression id<TAB>ad<TAB>user<TAB>seconds from impression to click
//
// orders by order id, then matches by impression id and seconds. Progress goes to stderr. Flag -bootstrap host:port[,...] uses a real cluster
// (topics created if missing); -application-id and -topic-prefix rename what it creates.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
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

// Customer is a row of the customers table (key: customer id).
type Customer struct {
	Name string `json:"name"`
	Tier string `json:"tier"`
}

// Order is an order (key: order id).
type Order struct {
	ID         string `json:"id"`
	CustomerID string `json:"customerId"`
	// AmountCents is the amount in cents.
	AmountCents int64 `json:"amountCents"`
}

// EnrichedOrder is an order with its customer; Customer is nil for an unknown customer.
type EnrichedOrder struct {
	Order    Order     `json:"order"`
	Customer *Customer `json:"customer"`
}

// Impression is an ad shown to a user (key: impression id). At is its time in ms.
type Impression struct {
	ID   string `json:"id"`
	Ad   string `json:"ad"`
	User string `json:"user"`
	At   int64  `json:"at"`
}

// Click is a click on an impression (key: impression id). At is its time in ms.
type Click struct {
	ImpressionID string `json:"impressionId"`
	At           int64  `json:"at"`
}

// Match is an impression with a click within 10 minutes after it.
type Match struct {
	Impression Impression `json:"impression"`
	Click      Click      `json:"click"`
}

// ClickWindow is how long after an impression a click still counts.
const ClickWindow = 10 * time.Minute

// Topics are the topic names under a prefix.
type Topics struct {
	Customers, Orders, Enriched, Impressions, Clicks, Matches string
}

// TopicsWithPrefix returns the topics "<prefix>-customers", "-orders", "-orders-enriched",
// "-impressions", "-clicks" and "-ad-matches".
func TopicsWithPrefix(prefix string) Topics {
	return Topics{prefix + "-customers", prefix + "-orders", prefix + "-orders-enriched",
		prefix + "-impressions", prefix + "-clicks", prefix + "-ad-matches"}
}

// Topology builds both joins.
func Topology(t Topics) (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()

	customers := kstream.Table(b, t.Customers, kstream.ConsumedWith(serde.String(), serde.JSON[*Customer]()))
	kstream.Stream(b, t.Orders, kstream.ConsumedWith(serde.String(), serde.JSON[Order]())).
		SelectKey(func(_ string, o Order) string { return o.CustomerID }).
		LeftJoin(customers, func(o Order, c *Customer) EnrichedOrder { return EnrichedOrder{Order: o, Customer: c} },
			kstream.JoinedWith(serde.String(), serde.JSON[Order](), serde.JSON[*Customer]())).
		To(t.Enriched, kstream.ProducedWith(serde.String(), serde.JSON[EnrichedOrder]()))

	impressions := kstream.Stream(b, t.Impressions, kstream.ConsumedWith(serde.String(), serde.JSON[Impression]()))
	clicks := kstream.Stream(b, t.Clicks, kstream.ConsumedWith(serde.String(), serde.JSON[Click]()))
	impressions.
		JoinStream(clicks, func(i Impression, c Click) Match { return Match{Impression: i, Click: c} },
			kstream.OfTimeDifferenceWithNoGrace(ClickWindow).Before(0),
			kstream.StreamJoinedWith(serde.String(), serde.JSON[Impression](), serde.JSON[Click]())).
		To(t.Matches, kstream.ProducedWith(serde.String(), serde.JSON[Match]()))
	return b.Build()
}

// Step is one record of the script: Value is marshalled as JSON (nil: a tombstone).
type Step struct {
	// Topic is "customers", "orders", "impressions" or "clicks".
	Topic string
	Key   string
	Value any
	// At is the record timestamp in ms.
	At int64
}

// base is the script's time origin: 2026-01-01T09:00:00Z in ms.
var base = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC).UnixMilli()

// minute is base plus m minutes.
func minute(m int) int64 { return base + int64(m)*60_000 }

// Script is the story, in order.
var Script = []Step{
	{"customers", "c1", Customer{"Ada", "gold"}, minute(0)},
	{"customers", "c2", Customer{"Brian", "silver"}, minute(0)},
	{"orders", "o1", Order{"o1", "c1", 2500}, minute(1)},
	{"orders", "o2", Order{"o2", "c2", 1200}, minute(2)},
	{"orders", "o3", Order{"o3", "c9", 700}, minute(3)}, // no such customer: left join keeps it
	{"customers", "c2", Customer{"Brian", "gold"}, minute(4)},
	{"orders", "o4", Order{"o4", "c2", 9900}, minute(5)}, // sees the upgraded tier
	{"customers", "c1", nil, minute(6)},                  // Ada leaves: tombstone
	{"orders", "o5", Order{"o5", "c1", 300}, minute(7)},  // unknown now
	{"impressions", "i1", Impression{"i1", "ad-shoes", "u1", minute(10)}, minute(10)},
	{"impressions", "i2", Impression{"i2", "ad-books", "u2", minute(11)}, minute(11)},
	{"clicks", "i1", Click{"i1", minute(13)}, minute(13)}, // 3 min after i1: a match
	{"impressions", "i3", Impression{"i3", "ad-shoes", "u3", minute(14)}, minute(14)},
	{"clicks", "i2", Click{"i2", minute(23)}, minute(23)}, // 12 min after i2: too late
	{"clicks", "i3", Click{"i3", minute(24)}, minute(24)}, // 10 min after i3: still a match
	{"clicks", "i1", Click{"i1", minute(25)}, minute(25)}, // 15 min after i1: too late
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "join: "+strings.Join(strings.Fields(err.Error()), " "))
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("join", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap", "", "`host:port[,...]` of a Kafka cluster to use instead of the embedded broker")
	appID := fs.String("application-id", "join-example", "application.id")
	prefix := fs.String("topic-prefix", "join", "prefix of the topics")
	if err := fs.Parse(args); err != nil {
		return err
	}
	topics := TopicsWithPrefix(*prefix)
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "join: "+format+"\n", a...) }

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
	stateDir, err := os.MkdirTemp("", "join-state-")
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
	// Joined topics must be co-partitioned: the same partition count on both sides.
	for _, t := range []string{topics.Customers, topics.Orders, topics.Enriched, topics.Impressions, topics.Clicks, topics.Matches} {
		if err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: -1}, false); err != nil &&
			!errors.Is(err, sarama.ErrTopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", t, err)
		}
	}

	topo, err := Topology(topics)
	if err != nil {
		return err
	}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: *appID, BootstrapServers: addrs, StateDir: stateDir,
		CommitInterval: 100 * time.Millisecond,
		Logger:         slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	if err := app.Start(context.Background()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = app.Close(cctx)
			cancel()
		}
	}()

	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return err
	}
	defer p.Close()
	for _, s := range Script {
		topic := map[string]string{"customers": topics.Customers, "orders": topics.Orders,
			"impressions": topics.Impressions, "clicks": topics.Clicks}[s.Topic]
		m := &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(s.Key), Timestamp: time.UnixMilli(s.At)}
		if s.Value != nil {
			b, err := json.Marshal(s.Value)
			if err != nil {
				return err
			}
			m.Value = sarama.ByteEncoder(b)
		}
		if _, _, err := p.SendMessage(m); err != nil {
			return fmt.Errorf("write %s: %w", topic, err)
		}
		if err := app.WaitCaughtUp(ctx); err != nil {
			return err
		}
	}
	progress("wrote and processed the %d records of the script", len(Script))
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = app.Close(cctx)
	cancel()
	closed = true
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if err := app.Err(); err != nil {
		return err
	}

	enriched, err := readAll(client, topics.Enriched)
	if err != nil {
		return err
	}
	var orderLines, matchLines []string
	for _, m := range enriched {
		var e EnrichedOrder
		if err := json.Unmarshal(m.Value, &e); err != nil {
			return fmt.Errorf("%s: %w", topics.Enriched, err)
		}
		who := "unknown customer"
		if e.Customer != nil {
			who = fmt.Sprintf("%s (%s)", e.Customer.Name, e.Customer.Tier)
		}
		orderLines = append(orderLines, fmt.Sprintf("order\t%s\t%s\t%d\t%s", e.Order.ID, e.Order.CustomerID, e.Order.AmountCents, who))
	}
	matches, err := readAll(client, topics.Matches)
	if err != nil {
		return err
	}
	for _, m := range matches {
		var x Match
		if err := json.Unmarshal(m.Value, &x); err != nil {
			return fmt.Errorf("%s: %w", topics.Matches, err)
		}
		matchLines = append(matchLines, fmt.Sprintf("match\t%s\t%s\t%s\t%d", x.Impression.ID, x.Impression.Ad, x.Impression.User,
			(x.Click.At-x.Impression.At)/1000))
	}
	sort.Strings(orderLines)
	sort.Strings(matchLines)
	for _, l := range append(orderLines, matchLines...) {
		fmt.Fprintln(stdout, l)
	}
	return nil
}

// readAll reads every partition of topic from the start to its current end, partition by
// partition, and returns the records in (partition, offset) order.
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
		start, err := client.GetOffset(topic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		if start >= end {
			continue
		}
		pc, err := c.ConsumePartition(topic, p, start)
		if err != nil {
			return nil, err
		}
		timeout := time.After(30 * time.Second)
		for next := start; next < end; {
			select {
			case m := <-pc.Messages():
				out = append(out, m)
				next = m.Offset + 1
			case <-timeout:
				pc.Close()
				return nil, fmt.Errorf("%s/%d: not read to offset %d within 30 s", topic, p, end)
			}
		}
		pc.Close()
	}
	return out, nil
}
