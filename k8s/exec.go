package k8s

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/resolute-ml/resolute"
)

// Stream is a process started in an allocation's first pod through the exec
// API: its input, its output (stdout and stderr together), its terminal
// size, and its exit status.
type Stream struct {
	in     *io.PipeWriter
	out    *io.PipeReader
	sizes  chan remotecommand.TerminalSize
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	code   int
	err    error
}

// Read reads the process's output.
func (s *Stream) Read(p []byte) (int, error) { return s.out.Read(p) }

// Write writes to the process's input.
func (s *Stream) Write(p []byte) (int, error) { return s.in.Write(p) }

// Resize sets the terminal's size; a resize while the last one is still
// unread replaces nothing and is dropped.
func (s *Stream) Resize(cols, rows uint16) error {
	select {
	case s.sizes <- remotecommand.TerminalSize{Width: cols, Height: rows}:
	default:
	}
	return nil
}

// Close ends the process's input and the connection.
func (s *Stream) Close() error {
	s.once.Do(func() {
		s.in.Close()
		s.cancel()
	})
	return nil
}

// Wait waits for the process to end and returns its exit status.
func (s *Stream) Wait() (int, error) {
	<-s.done
	return s.code, s.err
}

var exitStatus = regexp.MustCompile(`exit status (\d+)$`)

// sizeQueue feeds terminal sizes to remotecommand until ctx ends.
type sizeQueue struct {
	c   chan remotecommand.TerminalSize
	ctx context.Context
}

func (q sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s := <-q.c:
		return &s
	case <-q.ctx.Done():
		return nil
	}
}

// Exec starts argv in the task container of an allocation's first pod, with
// a terminal when tty is set. It tries the exec API over websockets first
// and falls back to SPDY for older API servers.
func (m *Manager) Exec(ctx context.Context, id string, argv []string, tty bool) (resolute.Stream, error) {
	m.mu.Lock()
	a, ok := m.allocs[id]
	if !ok || a.ended || len(a.pods) == 0 {
		m.mu.Unlock()
		return nil, resolute.Errorf(resolute.ENotFound, "allocation %s is not running", id)
	}
	ns, pod := a.namespace, a.pods[0].name
	m.mu.Unlock()
	if m.opts.Config == nil {
		return nil, errors.New("k8s: exec needs the client's REST configuration")
	}
	req := m.opts.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: TaskContainerName, Command: argv,
			Stdin: true, Stdout: true, Stderr: !tty, TTY: tty}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(m.opts.Config, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	ws, err := remotecommand.NewWebSocketExecutor(m.opts.Config, "GET", req.URL().String())
	if err != nil {
		return nil, err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return nil, err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Stream{in: inW, out: outR, sizes: make(chan remotecommand.TerminalSize, 1), cancel: cancel, done: make(chan struct{})}
	opts := remotecommand.StreamOptions{Stdin: inR, Stdout: outW, Tty: tty}
	if tty {
		opts.TerminalSizeQueue = sizeQueue{c: s.sizes, ctx: sctx}
	} else {
		opts.Stderr = outW
	}
	go func() {
		err := exec.StreamWithContext(sctx, opts)
		var exit utilexec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			s.code = exit.ExitStatus()
		case exitStatus.MatchString(err.Error()):
			// Some kubelets (kwok's) report the status only in words.
			m := exitStatus.FindStringSubmatch(err.Error())
			s.code, _ = strconv.Atoi(m[1])
		default:
			s.code, s.err = -1, err
		}
		outW.Close()
		inR.Close()
		cancel()
		close(s.done)
	}()
	return s, nil
}
