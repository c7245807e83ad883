// Command load is a small HTTP load generator for the proxy benchmarks, for
// machines without wrk: -c keep-alive clients send GETs one after another
// for -d, then it prints the request rate and latency percentiles.
//
//	go run ./proxy/bench/load -url http://127.0.0.1:9002/proxy/t/ -c 32 -d 10s
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

func main() {
	target := flag.String("url", "", "URL to GET")
	conns := flag.Int("c", 32, "concurrent keep-alive clients")
	dur := flag.Duration("d", 10*time.Second, "how long to send")
	flag.Parse()
	if *target == "" {
		fmt.Fprintln(os.Stderr, "load: -url is required")
		os.Exit(2)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: *conns, DisableCompression: true,
	}}
	deadline := time.Now().Add(*dur)
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int
		wg        sync.WaitGroup
	)
	start := time.Now()
	for range *conns {
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				t0 := time.Now()
				res, err := client.Get(*target)
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			errs += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(latencies) == 0 {
		fmt.Fprintf(os.Stderr, "load: no request succeeded (%d errors)\n", errs)
		os.Exit(1)
	}
	slices.Sort(latencies)
	pct := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds())
	}
	fmt.Printf("requests/s %.0f p50_us %.0f p99_us %.0f requests %d errors %d\n",
		float64(len(latencies))/elapsed.Seconds(), pct(0.5), pct(0.99), len(latencies), errs)
}
