// Command ourproxy serves Resolute's proxy in front of one service, for the
// benchmarks against configurable-http-proxy: every task ID goes to -target.
//
//	go run ./proxy/bench/ourproxy -port 9002 -target http://127.0.0.1:9001
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"time"

	"github.com/resolute-ml/resolute/proxy"
)

func main() {
	port := flag.Int("port", 9002, "port to listen on, on 127.0.0.1")
	target := flag.String("target", "http://127.0.0.1:9001", "the service every task goes to")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the first -profile-seconds to this file")
	profileSeconds := flag.Int("profile-seconds", 10, "how long -cpuprofile records")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		time.AfterFunc(time.Duration(*profileSeconds)*time.Second, func() { pprof.StopCPUProfile(); f.Close() })
	}
	u, err := url.Parse(*target)
	if err != nil {
		log.Fatalf("-target: %v", err)
	}
	lookup := func(context.Context, string) (proxy.Target, error) {
		return proxy.Target{URL: u, State: proxy.Ready}, nil
	}
	p := proxy.New(lookup, proxy.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	addr := fmt.Sprintf("127.0.0.1:%d", *port)
	fmt.Fprintf(os.Stderr, "proxy listening on %s, to %s\n", addr, u)
	log.Fatal(http.ListenAndServe(addr, p))
}
