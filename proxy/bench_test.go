package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/resolute-ml/resolute/proxy"
)

// benchBytes is the size of the throughput benchmark's download: 1 GiB, or
// RESOLUTE_PROXY_BENCH_BYTES (e.g. 67108864) for a quick run.
func benchBytes(b *testing.B) int64 {
	if s := os.Getenv("RESOLUTE_PROXY_BENCH_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("RESOLUTE_PROXY_BENCH_BYTES=%q: want a positive number of bytes", s)
		}
		return n
	}
	return 1 << 30
}

// benchClient is a keep-alive client that asks for no compression.
func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DisableCompression: true, MaxIdleConnsPerHost: 16, ReadBufferSize: 64 << 10,
	}}
}

// BenchmarkProxyThroughput downloads the same stream of zeros (1 GiB by
// default) from a service directly over loopback and through the proxy, and
// prints both rates and their ratio (target: proxied ≥ 90% of direct). MB/s
// and ns/op are the proxied download's; the two alternate within each op.
func BenchmarkProxyThroughput(b *testing.B) {
	size := benchBytes(b)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		io.CopyN(w, zeros{}, size)
	}))
	defer backend.Close()
	srv := serve(b, proxy.New(tasks{"t": {URL: mustURL(b, backend.URL), State: proxy.Ready}}.lookup))

	directURL, proxiedURL := backend.URL+"/proxy/t/zeros", srv.URL+"/proxy/t/zeros"
	client := benchClient()
	defer client.CloseIdleConnections()
	buf := make([]byte, 256<<10)
	download := func(u string) time.Duration {
		start := time.Now()
		res, err := client.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		// Hide io.Discard's ReaderFrom so that both sides read with buf.
		n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, res.Body, buf)
		res.Body.Close()
		if err != nil || n != size {
			b.Fatalf("got %d bytes, %v", n, err)
		}
		return time.Since(start)
	}
	// Direct and proxied downloads alternate, so that both see the same
	// machine: on a shared machine the rate drifts from second to second.
	var direct, proxied time.Duration
	b.SetBytes(size)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			direct += download(directURL)
			proxied += download(proxiedURL)
		} else {
			proxied += download(proxiedURL)
			direct += download(directURL)
		}
		i++
	}
	rate := func(d time.Duration) float64 { return float64(size) * float64(i) / d.Seconds() / 1e6 }
	b.ReportMetric(rate(proxied), "MB/s")
	b.ReportMetric(float64(proxied.Nanoseconds())/float64(i), "ns/op")
	b.ReportMetric(rate(direct), "direct-MB/s")
	b.ReportMetric(100*rate(proxied)/rate(direct), "proxied/direct-%")
	b.Logf("%d MiB × %d: direct %.0f MB/s, proxied %.0f MB/s, proxied/direct %.1f%% (target ≥ 90%%)",
		size>>20, i, rate(direct), rate(proxied), 100*rate(proxied)/rate(direct))
}

// BenchmarkProxyLatency sends small GETs one after another over keep-alive
// connections, alternating direct and proxied, and prints the latency the
// proxy adds at the median and the 99th percentile (target: p99 < 1 ms).
func BenchmarkProxyLatency(b *testing.B) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer backend.Close()
	srv := serve(b, proxy.New(tasks{"t": {URL: mustURL(b, backend.URL), State: proxy.Ready}}.lookup))
	client := benchClient()
	defer client.CloseIdleConnections()
	get := func(u string) time.Duration {
		start := time.Now()
		res, err := client.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(start)
	}
	directURL, proxiedURL := backend.URL+"/proxy/t/api/status", srv.URL+"/proxy/t/api/status"
	for range 200 { // warm up connections and pools
		get(directURL)
		get(proxiedURL)
	}
	var direct, proxied []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		direct = append(direct, get(directURL))
		proxied = append(proxied, get(proxiedURL))
	}
	slices.Sort(direct)
	slices.Sort(proxied)
	pct := func(d []time.Duration, q float64) float64 {
		return float64(d[int(q*float64(len(d)-1))].Nanoseconds()) / 1e3
	}
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		b.ReportMetric(pct(direct, q.q), "direct-"+q.name+"-µs")
		b.ReportMetric(pct(proxied, q.q), "proxied-"+q.name+"-µs")
		b.ReportMetric(pct(proxied, q.q)-pct(direct, q.q), "added-"+q.name+"-µs")
	}
	b.Logf("%s", fmt.Sprintf("%d requests each: added latency p50 %.0f µs, p99 %.0f µs (target p99 < 1000 µs)",
		len(direct), pct(proxied, 0.5)-pct(direct, 0.5), pct(proxied, 0.99)-pct(direct, 0.99)))
}
