package handlers_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
)

// BenchmarkConcurrentUploadsRSS sends three context directories of about
// 94 MiB (just under the 96 MiB limit, incompressible) at once, as `det
// experiment create` does (client.CreateExperiment's streamed multipart), to
// a master running as a process of its own, and prints the master's peak
// RSS while it takes them (VmHWM, reset first) and its RSS before. The
// master is built from this tree, or is RESOLUTE_BENCH_MASTER (another
// build, to compare); either gets an empty database it migrates itself.
func BenchmarkConcurrentUploadsRSS(b *testing.B) {
	bin := os.Getenv("RESOLUTE_BENCH_MASTER")
	if bin == "" {
		bin = mastertest.Build(b)
	}
	m := mastertest.New(b, bin, append([]string{"--data-dir", filepath.Join(mastertest.TempDir(b), "data")}, emptyDatabase(b)...)...)
	m.Start()
	token := m.Login("admin")
	archive, size := incompressibleContext(b, 94<<20)
	api := client.New(m.URL, client.WithToken(token))
	cfg := "name: upload\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n"
	paused := false
	for range max(b.N, 1) {
		before := masterKiB(b, m.PID(), "VmRSS")
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", m.PID()), []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the master's peak RSS: %v", err)
		}
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f, err := os.Open(archive)
				if err != nil {
					errs <- err
					return
				}
				defer f.Close()
				req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}, Activate: &paused}
				_, err = api.CreateExperiment(context.Background(), req, f, size, nil)
				errs <- err
			}()
		}
		wg.Wait()
		took := time.Since(start)
		peak := masterKiB(b, m.PID(), "VmHWM")
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatalf("upload: %v\n%s", err, m.Output())
			}
		}
		b.ReportMetric(float64(peak)/1024, "peak-rss-MiB")
		b.ReportMetric(float64(before)/1024, "rss-before-MiB")
		b.ReportMetric(took.Seconds(), "seconds")
		b.Logf("3 × %.1f MiB uploads at once in %s: the master's RSS %.0f MiB before, peak %.0f MiB",
			float64(size)/(1<<20), took.Round(time.Millisecond), float64(before)/1024, float64(peak)/1024)
	}
	// The uploads were kept whole.
	var list resolute.ExperimentsResponse
	m.Call("GET", "/api/v1/experiments", token, nil, &list)
	if len(list.Experiments) == 0 {
		b.Fatal("no experiments")
	}
	if got := int64(len(m.Get(fmt.Sprintf("/api/v1/experiments/%d/model_def", list.Experiments[0].ID), token))); got != size {
		b.Fatalf("model_def is %d bytes, want the %d uploaded", got, size)
	}
}

// emptyDatabase makes an empty database on the test server, dropped at the
// end, and returns the master's flags for it.
func emptyDatabase(b *testing.B) []string {
	b.Helper()
	u, err := url.Parse(dbtest.NewURL(b)) // a database on the test server, to reach it
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("bench_uploads_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if conn, err := pgx.Connect(ctx, u.String()); err == nil {
			conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			conn.Close(ctx)
		}
	})
	host, port := u.Query().Get("host"), u.Port()
	if host == "" {
		host = u.Hostname()
	}
	args := []string{"--db-host", host, "--db-name", name, "--db-ssl-mode", "disable", "--db-user", u.User.Username()}
	if port != "" {
		args = append(args, "--db-port", port)
	}
	if pw, ok := u.User.Password(); ok {
		args = append(args, "--db-password", pw)
	}
	return args
}

// incompressibleContext writes a tar.gz of random files taking about n
// bytes and returns its path and size.
func incompressibleContext(b *testing.B, n int64) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "context.tar.gz")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "train.py", Mode: 0o644, Size: 9})
	tw.Write([]byte("print(1)\n"))
	const files = 4
	for i := range files {
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("data/%d.bin", i), Mode: 0o644, Size: n / files})
		if _, err := io.CopyN(tw, rand.Reader, n/files); err != nil {
			b.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	return path, fi.Size()
}

// masterKiB reads a field of the master's /proc/<pid>/status, in KiB.
func masterKiB(b *testing.B, pid int, field string) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
