// Command backend is the task service of the proxy benchmarks: it answers
// every request with a small body, as a notebook's API does.
//
//	go run ./proxy/bench/backend -port 9001
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
)

func main() {
	port := flag.Int("port", 9001, "port to listen on, on 127.0.0.1")
	size := flag.Int("size", 64, "bytes in each response body")
	flag.Parse()
	body := []byte(strings.Repeat("x", *size))
	length := strconv.Itoa(len(body))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", length)
		w.Write(body)
	})
	addr := fmt.Sprintf("127.0.0.1:%d", *port)
	fmt.Fprintf(os.Stderr, "backend listening on %s\n", addr)
	log.Fatal(http.ListenAndServe(addr, h))
}
