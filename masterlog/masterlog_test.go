package masterlog

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

func TestBufferKeepsTheLastLinesInOrder(t *testing.T) {
	b := NewBuffer(3)
	for i, m := range []string{"a", "b", "c", "d", "e"} {
		b.Add(time.Unix(int64(i), 0), "INFO", m)
	}
	lines, _ := b.Since(0, 0)
	var got []string
	for _, l := range lines {
		got = append(got, l.Message)
	}
	if len(got) != 3 || got[0] != "c" || got[2] != "e" || lines[0].ID != 3 {
		t.Fatalf("lines = %+v", lines)
	}
	if lines, _ := b.Since(4, 0); len(lines) != 1 || lines[0].Message != "e" {
		t.Fatalf("since 4 = %+v", lines)
	}
	if lines, _ := b.Since(0, 2); len(lines) != 2 || lines[0].Message != "d" {
		t.Fatalf("limit 2 = %+v", lines)
	}
}

func TestFollowersAreWokenByNewLines(t *testing.T) {
	b := NewBuffer(10)
	_, changed := b.Since(0, 0)
	go b.Add(time.Now(), "INFO", "x")
	select {
	case <-changed:
	case <-time.After(time.Second):
		t.Fatal("not woken")
	}
}

func TestHandlerRecordsAttrs(t *testing.T) {
	b := NewBuffer(10)
	log := slog.New(NewHandler(slog.NewTextHandler(io.Discard, nil), b)).With("component", "db")
	log.Info("migrated", "version", 3)
	lines, _ := b.Since(0, 0)
	if len(lines) != 1 || lines[0].Message != "migrated component=db version=3" || lines[0].Level != "INFO" {
		t.Fatalf("lines = %+v", lines)
	}
}

func TestChangedIsClosedByTheNextLine(t *testing.T) {
	b := NewBuffer(10)
	changed := b.Changed()
	select {
	case <-changed:
		t.Fatal("closed before any line")
	default:
	}
	b.Add(time.Now(), "INFO", "hello")
	select {
	case <-changed:
	default:
		t.Fatal("still open after a line")
	}
}
