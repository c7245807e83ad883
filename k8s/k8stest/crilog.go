package k8stest

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"
)

// criLog is a container log file in the CRI format kubelets write and kwok
// reads: one "TIMESTAMP STREAM TAG TEXT" line per line of output, TAG F for a
// full line and P for a part of a longer one.
type criLog struct {
	mu   sync.Mutex
	file *os.File
}

// maxLogLine is the longest part of a line written as one entry, as in the
// kubelet.
const maxLogLine = 16 * 1024

func openCRILog(path string) (*criLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &criLog{file: f}, nil
}

func (l *criLog) write(stream string, tag byte, text []byte) {
	line := make([]byte, 0, len(text)+48)
	line = time.Now().UTC().AppendFormat(line, time.RFC3339Nano)
	line = append(line, ' ')
	line = append(line, stream...)
	line = append(line, ' ', tag, ' ')
	line = append(line, text...)
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.file.Write(line)
}

func (l *criLog) Close() error { return l.file.Close() }

// stream returns a writer for one of the container's streams ("stdout" or
// "stderr"); Flush writes what is left of an unfinished line.
func (l *criLog) stream(name string) *criStream { return &criStream{log: l, name: name} }

type criStream struct {
	log  *criLog
	name string
	buf  []byte
}

var _ io.Writer = (*criStream)(nil)

func (s *criStream) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		s.emit('F', s.buf[:i])
		s.buf = s.buf[i+1:]
	}
	for len(s.buf) >= maxLogLine {
		s.log.write(s.name, 'P', s.buf[:maxLogLine])
		s.buf = s.buf[maxLogLine:]
	}
	s.buf = append([]byte(nil), s.buf...)
	return len(p), nil
}

func (s *criStream) emit(tag byte, line []byte) {
	for len(line) > maxLogLine {
		s.log.write(s.name, 'P', line[:maxLogLine])
		line = line[maxLogLine:]
	}
	s.log.write(s.name, tag, line)
}

// Flush writes an unfinished last line as a partial one, so that it reads
// back without a newline it never had.
func (s *criStream) Flush() {
	if len(s.buf) > 0 {
		s.log.write(s.name, 'P', s.buf)
		s.buf = nil
	}
}
