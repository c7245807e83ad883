package proxy_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"syscall"
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
// default, with a Content-Length) from a service directly over loopback,
// through a plain TCP relay and through the proxy, and prints the rates and
// the ratios (target: proxied ≥ 90% of direct). MB/s and ns/op are the
// proxied download's; the three alternate within each op.
//
// The relay copies bytes between two TCP connections with 1 MiB buffers and
// knows no HTTP: it is the most that any proxy which reads and writes each
// byte gets from the machine. The CPU time per GiB (of the whole process:
// service, client and proxy) says why: the proxy's extra read and write cost
// the kernel about as much again as the direct download, so where the
// direct download keeps a core busy, the proxied one needs two.
func BenchmarkProxyThroughput(b *testing.B) { benchThroughput(b, true) }

// BenchmarkProxyThroughputChunked is BenchmarkProxyThroughput with a
// service that sends no Content-Length, as one does that zips a folder on
// the fly: the body comes chunked.
func BenchmarkProxyThroughputChunked(b *testing.B) { benchThroughput(b, false) }

func benchThroughput(b *testing.B, withLength bool) {
	size := benchBytes(b)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if withLength {
			w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		}
		io.CopyN(w, zeros{}, size)
	}))
	defer backend.Close()
	srv := serve(b, proxy.New(tasks{"t": {URL: mustURL(b, backend.URL), State: proxy.Ready}}.lookup))
	relayURL := relay(b, backend.Listener.Addr().String())

	const path = "/proxy/t/zeros"
	paths := []struct {
		name string
		url  string
		wall time.Duration
		cpu  time.Duration
	}{{name: "direct", url: backend.URL + path}, {name: "relay", url: relayURL + path}, {name: "proxied", url: srv.URL + path}}
	client := benchClient()
	defer client.CloseIdleConnections()
	buf := make([]byte, 256<<10)
	download := func(u string) {
		res, err := client.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		// Hide io.Discard's ReaderFrom so that all read with buf.
		n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, res.Body, buf)
		res.Body.Close()
		if err != nil || n != size {
			b.Fatalf("got %d bytes, %v", n, err)
		}
	}
	// The three take turns in a rotating order, so that all see the same
	// machine: on a shared machine the rate drifts from second to second.
	b.SetBytes(size)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for k := range paths {
			p := &paths[(i+k)%len(paths)]
			start, cpu := time.Now(), cpuTime(b)
			download(p.url)
			p.wall += time.Since(start)
			p.cpu += cpuTime(b) - cpu
		}
		i++
	}
	direct, relayed, proxied := paths[0], paths[1], paths[2]
	rate := func(d time.Duration) float64 { return float64(size) * float64(i) / d.Seconds() / 1e6 }
	cpuPerGiB := func(d time.Duration) float64 {
		return d.Seconds() * 1e3 / float64(i) / (float64(size) / (1 << 30))
	}
	b.ReportMetric(rate(proxied.wall), "MB/s")
	b.ReportMetric(float64(proxied.wall.Nanoseconds())/float64(i), "ns/op")
	b.ReportMetric(rate(direct.wall), "direct-MB/s")
	b.ReportMetric(rate(relayed.wall), "relay-MB/s")
	b.ReportMetric(100*rate(proxied.wall)/rate(direct.wall), "proxied/direct-%")
	b.ReportMetric(100*rate(proxied.wall)/rate(relayed.wall), "proxied/relay-%")
	b.ReportMetric(cpuPerGiB(direct.cpu), "direct-cpu-ms/GiB")
	b.ReportMetric(cpuPerGiB(proxied.cpu), "proxied-cpu-ms/GiB")
	b.Logf("%d MiB × %d: direct %.0f MB/s, relay %.0f MB/s, proxied %.0f MB/s; proxied/direct %.1f%% (target ≥ 90%%), proxied/relay %.1f%%",
		size>>20, i, rate(direct.wall), rate(relayed.wall), rate(proxied.wall),
		100*rate(proxied.wall)/rate(direct.wall), 100*rate(proxied.wall)/rate(relayed.wall))
	b.Logf("CPU per GiB (service, client and proxy): direct %.0f ms, relay %.0f ms, proxied %.0f ms",
		cpuPerGiB(direct.cpu), cpuPerGiB(relayed.cpu), cpuPerGiB(proxied.cpu))
}

// relay starts a TCP relay to backend that copies each connection both ways
// with 1 MiB buffers, and returns its URL.
func relay(b *testing.B, backend string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	// Hiding ReaderFrom and WriterTo keeps the copy in user space, as the
	// proxy's is: splice(2) measured no better here.
	pipe := func(dst, src net.Conn) {
		io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 1<<20))
		dst.Close()
		src.Close()
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			go pipe(s, c)
			go pipe(c, s)
		}
	}()
	return "http://" + ln.Addr().String()
}

// cpuTime returns the CPU time, user and system, the process used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
