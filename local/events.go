package local

import (
	"errors"
	"github.com/resolute-ml/resolute"
	"sync"
)

// Stream names of Log events.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// ErrExitUnknown is the Err of an Exited event of an adopted allocation: the
// manager is not the process's parent, so its exit status is lost.
var ErrExitUnknown = errors.New("exit status unknown: the allocation was adopted after a restart")

// Event is what Manager.Events delivers: a Started, Log or Exited value.
// The types are the resource-manager seam's, from the root package.
type Event = resolute.AllocationEvent

// Started reports that an allocation's process is running.
type Started = resolute.AllocationStarted

// Log is one line of a task's output.
type Log = resolute.AllocationLog

// Exited reports that an allocation's leader process ended. By then the rest
// of its process group and its exec'd processes have been killed, its slots
// are free and all its output has been delivered. ExitCode is -1 and Err is
// ErrExitUnknown for allocations adopted after a restart.
type Exited = resolute.AllocationExited

// queue delivers events in order without ever blocking Started and Exited:
// they are appended whatever the length. Log events wait while the queue
// holds max events or more (their writers are tailers of files, so waiting
// costs the tasks nothing).
type queue struct {
	mu     sync.Mutex
	items  []Event
	max    int
	wake   chan struct{} // an item was added
	space  chan struct{} // an item was taken
	done   chan struct{}
	out    chan Event
	closed sync.Once
}

func newQueue(max int) *queue {
	q := &queue{
		max:   max,
		wake:  make(chan struct{}, 1),
		space: make(chan struct{}, 1),
		done:  make(chan struct{}),
		out:   make(chan Event),
	}
	go q.pump()
	return q
}

// push queues e; it returns false when the queue is closed.
func (q *queue) push(e Event) bool {
	_, isLog := e.(Log)
	return q.add(e, isLog)
}

// add queues e, first waiting for room when wait is set; it returns false
// when the queue is closed.
func (q *queue) add(e Event, wait bool) bool {
	for {
		select {
		case <-q.done:
			return false
		default:
		}
		q.mu.Lock()
		if !wait || len(q.items) < q.max {
			q.items = append(q.items, e)
			q.mu.Unlock()
			notify(q.wake)
			return true
		}
		q.mu.Unlock()
		select {
		case <-q.space:
		case <-q.done:
			return false
		}
	}
}

func (q *queue) pump() {
	defer close(q.out)
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.mu.Unlock()
			select {
			case <-q.wake:
				continue
			case <-q.done:
				return
			}
		}
		e := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		if len(q.items) == 0 {
			q.items = nil // let the backing array go
		}
		q.mu.Unlock()
		select {
		case q.out <- e:
			notify(q.space)
		case <-q.done:
			return
		}
	}
}

// close stops delivery; queued events are dropped and out is closed.
func (q *queue) close() { q.closed.Do(func() { close(q.done) }) }

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
