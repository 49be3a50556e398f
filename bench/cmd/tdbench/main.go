// Command tdbench pipes every line of a file through the word count topology (bench/wc) in
// kstreams-go's TopologyTestDriver, no broker, reading the output every 10 000 lines, and
// prints "go-testdriver lines N words W outputs O seconds S lines/s R" (the Java counterpart
// is io.kstreams.bench.TestDriverWordCount in bench/java; bench/run.sh runs both).
//
//	tdbench -lines-file FILE [-cache-bytes 10485760] [-cpuprofile FILE]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/kstreams-go/kstreams/internal/wc"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

func main() {
	file := flag.String("lines-file", "", "`FILE` of input lines")
	cacheBytes := flag.Int64("cache-bytes", 10<<20, "statestore.cache.max.bytes")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the piping to `FILE`")
	flag.Parse()
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(pf)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "tdbench: -cpuprofile:", err)
			os.Exit(2)
		}
		defer pf.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(*file, *cacheBytes); err != nil {
		fmt.Fprintln(os.Stderr, "tdbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(file string, cacheBytes int64) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	var lines []string
	var words int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		words += len(wc.SplitWords(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return err
	}
	topo, err := wc.Topology("lines", "counts")
	if err != nil {
		return err
	}
	d, err := testdriver.New(topo, map[string]string{
		"application.id":             "bench-testdriver",
		"statestore.cache.max.bytes": strconv.FormatInt(cacheBytes, 10),
	}, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "lines", serde.String(), serde.String())
	out := testdriver.CreateOutputTopic(d, "counts", serde.String(), serde.Long())
	outputs := 0
	start := time.Now()
	for i, l := range lines {
		if err := in.PipeInput(l); err != nil {
			return err
		}
		if i%10_000 == 9_999 {
			vs, err := out.ReadValuesToList()
			if err != nil {
				return err
			}
			outputs += len(vs)
		}
	}
	vs, err := out.ReadValuesToList()
	if err != nil {
		return err
	}
	outputs += len(vs)
	secs := time.Since(start).Seconds()
	fmt.Printf("go-testdriver lines %d words %d outputs %d seconds %.3f lines/s %.0f\n", len(lines), words, outputs, secs, float64(len(lines))/secs)
	return nil
}
