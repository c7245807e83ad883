package local

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/resolute-ml/resolute"
	"golang.org/x/sys/unix"
)

const (
	// MaxLineBytes is the longest Log line; longer lines come in pieces.
	MaxLineBytes = 64 << 10
	// punchEvery is how much output is read between freeing what was read.
	punchEvery = 16 << 20
	minPoll    = 5 * time.Millisecond
	maxPoll    = 200 * time.Millisecond
)

// startTailers starts one tailer per output file of a, from the given
// offsets. Their end is awaited with a.tails.
func (m *Manager) startTailers(a *allocation, outOffset, errOffset int64) {
	for stream, off := range map[string]int64{Stdout: outOffset, Stderr: errOffset} {
		// Read-write so that read parts can be punched out of the file.
		f, err := os.OpenFile(filepath.Join(a.dir, stream), os.O_RDWR, 0)
		if err != nil {
			m.log.Warn("cannot read task output", "allocation", a.id, "stream", stream, "error", err)
			continue
		}
		a.tails.Add(1)
		ok := m.goReader(func() {
			defer a.tails.Done()
			defer f.Close()
			m.tail(a, stream, f, off)
		})
		if !ok {
			a.tails.Done()
			f.Close()
		}
	}
}

// goReader runs f in a goroutine that Close waits for, unless the manager
// is closed already.
func (m *Manager) goReader(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.readers.Add(1)
	go func() {
		defer m.readers.Done()
		f()
	}()
	return true
}

// tail reads f from off as it grows and emits its lines, until the
// allocation has exited and f is read to its end, or the manager is closed.
func (m *Manager) tail(a *allocation, stream string, f *os.File, off int64) {
	buf := make([]byte, 64<<10)
	var pending []byte
	read, punched := off, int64(0)
	wait := minPoll
	emit := func(line []byte) bool {
		l := resolute.NewAllocationLog(a.id, stream, line, time.Now())
		// The allocation's process group is its container, named as its
		// DET_CONTAINER_ID names it.
		l.Agent, l.Container = AgentName, a.id
		return m.events.push(l)
	}
	for {
		exited := isClosed(a.exited) // checked before reading: all output is in f then
		for {
			n, err := f.ReadAt(buf, read)
			read += int64(n)
			pending = append(pending, buf[:n]...)
			for {
				i := bytes.IndexByte(pending, '\n')
				if i < 0 && len(pending) < MaxLineBytes {
					break
				}
				cut, skip := i, 1
				if i < 0 || i > MaxLineBytes {
					cut, skip = MaxLineBytes, 0
				}
				if !emit(pending[:cut]) {
					return
				}
				pending = pending[cut+skip:]
			}
			if err != nil && err != io.EOF {
				m.log.Warn("cannot read task output", "allocation", a.id, "stream", stream, "error", err)
				return
			}
			if n > 0 {
				wait = minPoll
			}
			if n < len(buf) {
				break
			}
		}
		if cap(pending) > 4*MaxLineBytes {
			pending = append([]byte(nil), pending...) // don't pin consumed buffers
		}
		if read-punched >= punchEvery {
			// Free the disk blocks already read; the file keeps its size.
			_ = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, read)
			punched = read
		}
		if exited {
			if len(pending) > 0 {
				emit(pending)
			}
			return
		}
		select {
		case <-a.exited:
		case <-m.stop:
			return
		case <-time.After(wait):
			wait = min(wait*2, maxPoll)
		}
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
