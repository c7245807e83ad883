package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/masterconf"
	"github.com/resolute-ml/resolute/masterlog"
)

// TestTheDatabaseURLIsMadeFromEveryDBKey: db.host, db.port, db.name,
// db.user, db.password and db.ssl_mode all reach the external database's
// URL, over TCP and over a unix socket's directory.
func TestTheDatabaseURLIsMadeFromEveryDBKey(t *testing.T) {
	for host, want := range map[string]string{
		"db.example.com":  "postgres://ml:s%3Acret@db.example.com:6543/runs?sslmode=verify-full",
		"/run/postgresql": "postgres://ml:s%3Acret@/runs?host=%2Frun%2Fpostgresql&port=6543&sslmode=verify-full",
	} {
		cfg := masterconf.Default()
		cfg.DB = masterconf.DB{Host: host, Port: 6543, Name: "runs", User: "ml", Password: "s:cret", SSLMode: "verify-full"}
		got, pg, err := startDatabase(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil || pg != nil || got != want {
			t.Errorf("%s: %q, %v, %v; want %q", host, got, pg, err, want)
		}
	}
}

// TestTheLogHasTheConfiguredFormatAndLevel: log.format json writes JSON
// lines, text key=value ones, and log.level drops what is below it.
func TestTheLogHasTheConfiguredFormatAndLevel(t *testing.T) {
	for format, want := range map[string]string{"json": `{"time":`, "text": "time="} {
		var out strings.Builder
		logger := newLogger(masterconf.Log{Level: "warn", Format: format}, &out, masterlog.NewBuffer(10))
		logger.Info("dropped")
		logger.Warn("kept")
		if s := out.String(); !strings.HasPrefix(s, want) || strings.Contains(s, "dropped") || !strings.Contains(s, "kept") {
			t.Errorf("%s: %q", format, s)
		}
	}
}
