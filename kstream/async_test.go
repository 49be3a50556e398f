package kstream_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// In the test driver MapValuesAsync gives what MapValues gives, record for record (the driver
// waits for each record's calls), tombstones included; Describe names it as MapValues.
func TestMapValuesAsyncInTestDriver(t *testing.T) {
	build := func(async bool) []string {
		b := kstream.NewStreamsBuilder()
		s := kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String()))
		upper := func(k, v string) string { return strings.ToUpper(v) + "@" + k }
		var out kstream.KStream[string, string]
		if async {
			out = s.MapValuesAsync(func(ctx context.Context, k, v string) (string, error) {
				time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
				return upper(k, v), nil
			}, processor.AsyncOptions{MaxInFlight: 4})
		} else {
			out = s.MapValuesWithKey(upper)
		}
		out.To("out", kstream.ProducedWith(serde.String(), serde.String()))
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(topo.Describe().String(), "KSTREAM-MAPVALUES-0000000001") {
			t.Errorf("describe:\n%s", topo.Describe())
		}
		d, err := testdriver.New(topo, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String())
		nulls := testdriver.CreateInputTopic(d, "in", serde.String(), serde.ByteArray())
		o := testdriver.CreateOutputTopic(d, "out", serde.String(), serde.ByteArray())
		var got []string
		for i := range 200 {
			k := fmt.Sprintf("k%d", i%7)
			if i%50 == 49 {
				if err := nulls.PipeKeyValue(k, nil); err != nil {
					t.Fatal(err)
				}
			} else if err := in.PipeKeyValue(k, fmt.Sprint("v", i)); err != nil {
				t.Fatal(err)
			}
			rs, err := o.ReadRecordsToList()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				got = append(got, fmt.Sprintf("%d:%s=%q/%v", i, r.Key, r.Value, r.Value == nil))
			}
		}
		return got
	}
	sync, async := build(false), build(true)
	if strings.Join(sync, "\n") != strings.Join(async, "\n") {
		t.Fatalf("async outputs differ from sync:\n%v\n%v", sync, async)
	}
	if len(async) != 200 {
		t.Fatalf("%d outputs", len(async))
	}
}

// A call's error fails the pipe with the record's location; LogAndContinue drops it.
func TestMapValuesAsyncErrorInTestDriver(t *testing.T) {
	for _, cont := range []bool{false, true} {
		b := kstream.NewStreamsBuilder()
		kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String())).
			MapValuesAsync(func(ctx context.Context, k, v string) (string, error) {
				if v == "bad" {
					return "", errors.New("refused")
				}
				return v, nil
			}, processor.AsyncOptions{}).
			To("out", kstream.ProducedWith(serde.String(), serde.String()))
		topo, _ := b.Build()
		props := map[string]string{}
		if cont {
			props["processing.exception.handler"] = "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler"
		}
		d, err := testdriver.New(topo, props, 0)
		if err != nil {
			t.Fatal(err)
		}
		in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String())
		o := testdriver.CreateOutputTopic(d, "out", serde.String(), serde.String())
		_ = in.PipeKeyValue("a", "ok")
		err = in.PipeKeyValue("b", "bad")
		var ae *processor.AsyncError
		if cont {
			if err != nil {
				t.Fatal(err)
			}
		} else if !errors.As(err, &ae) || ae.Key != "b" || ae.Offset != 1 || ae.Topic != "in" {
			t.Fatalf("error %v", err)
		}
		_ = in.PipeKeyValue("c", "ok2")
		vals, _ := o.ReadValuesToList()
		if cont && fmt.Sprint(vals) != "[ok ok2]" {
			t.Errorf("continue: outputs %v", vals)
		}
		if !cont && (len(vals) == 0 || vals[0] != "ok" || strings.Contains(fmt.Sprint(vals), "bad")) {
			t.Errorf("fail: outputs %v", vals)
		}
		d.Close()
	}
}
