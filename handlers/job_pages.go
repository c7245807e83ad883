package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/scheduler"
	"github.com/resolute-ml/resolute/views"
)

// Timings of the Job Queue's events stream.
const (
	queueCheckEvery = 500 * time.Millisecond
	queuePingEvery  = 15 * time.Second
	// queueStreamLife ends a stream now and then; browsers reconnect at
	// once, and a master shutting down waits less for open streams.
	queueStreamLife = 2 * time.Minute
)

// handleJobQueuePage serves GET /jobs: the queue of every pool.
func (s *Server) handleJobQueuePage(w http.ResponseWriter, r *http.Request) {
	l, err := s.jobQueueLive(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.page(w, r, views.JobQueuePage(views.JobQueue{Shell: s.shell(r, "Job Queue", "jobs"), Live: l}))
}

// handleJobQueueTable serves GET /jobs/table: the fragment of the tables,
// which jobs.js fetches when the events stream says the queue changed.
func (s *Server) handleJobQueueTable(w http.ResponseWriter, r *http.Request) {
	l, err := s.jobQueueLive(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.JobQueueView(l))
}

// jobQueueLive builds the tables: every pool with its jobs in queue order.
func (s *Server) jobQueueLive(r *http.Request) (views.JobQueueLive, error) {
	jobs, err := s.queue.JobsFor(r.Context(), actorFrom(r), "")
	if err != nil {
		return views.JobQueueLive{}, err
	}
	l := views.JobQueueLive{Version: queueVersion(jobs), Draggable: s.assets.Has("vendor/Sortable.min.js")}
	slots := map[string][2]int{}
	for _, p := range s.queue.ResourcePools() {
		slots[p.Name] = [2]int{p.SlotsUsed, len(p.Slots)}
	}
	configs := map[string]scheduler.Config{}
	for _, p := range s.queue.Pools() {
		l.PoolNames = append(l.PoolNames, p.Name)
		configs[p.Name] = p.Scheduler
	}
	// A job may sit in a pool the configuration no longer has; it still
	// shows, under its pool.
	names := slices.Clone(l.PoolNames)
	for _, j := range jobs {
		if !slices.Contains(names, j.ResourcePool) {
			names = append(names, j.ResourcePool)
		}
	}
	for _, name := range names {
		c, known := configs[name]
		p := views.JobPool{Name: name, SchedulerType: c.Type, Order: queueOrder(c), SlotsUsed: slots[name][0], SlotsTotal: slots[name][1]}
		if !known {
			p.SchedulerType, p.Order = "unknown", "This pool is not in the master's configuration; its jobs cannot run until they move to another pool."
		}
		var queue []resolute.Job
		for _, j := range jobs {
			if j.ResourcePool == name {
				queue = append(queue, j)
			}
		}
		for i, j := range queue {
			row := views.JobRow{Job: j, Position: i + 1, CanChange: authz.Can(actorFrom(r), authz.ChangeJob, authz.Job(j.JobID, j.UserID, j.Username, j.WorkspaceID)) == nil}
			if i > 0 {
				row.Prev = queue[i-1].JobID
			}
			if i+1 < len(queue) {
				row.Next = queue[i+1].JobID
			}
			p.Jobs = append(p.Jobs, row)
		}
		l.Pools = append(l.Pools, p)
	}
	return l, nil
}

// queueOrder says in words which way a pool's queue runs: the page never
// leaves the direction of priorities to guess.
func queueOrder(c scheduler.Config) string {
	switch c.Type {
	case scheduler.TypeFairShare:
		return "Fair share: running jobs share the slots in proportion to their weight; priority and order do not decide."
	case scheduler.TypeRoundRobin:
		return "Round robin: jobs take turns in queue order, top first."
	}
	if c.HigherFirst {
		return "Priority: a higher number runs first (99 before 1); among equal priorities, the top of the queue first."
	}
	return "Priority: a lower number runs first (1 before 99); among equal priorities, the top of the queue first."
}

// queueVersion identifies the state of the queue: the page carries it, and
// the events stream announces a new one when anything shown changes.
func queueVersion(jobs []resolute.Job) string {
	data, _ := json.Marshal(jobs)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// handleJobEvents serves GET /jobs/events, a stream of server-sent events:
// `event: queue` with the queue's version when it opens and whenever the
// queue changes (checked every 500 ms), and a comment every 15 s so that
// proxies keep it open. A stream ends after a while; browsers reconnect.
func (s *Server) handleJobEvents(w http.ResponseWriter, r *http.Request) {
	s.sseClients.Add(1)
	defer s.sseClients.Add(-1)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc.SetWriteDeadline(time.Time{}) // a server-wide write timeout would cut the stream
	ctx, cancel := context.WithTimeout(r.Context(), queueStreamLife)
	actor := actorFrom(r)
	defer cancel()
	check := time.NewTicker(queueCheckEvery)
	defer check.Stop()
	ping := time.NewTicker(queuePingEvery)
	defer ping.Stop()
	fmt.Fprint(w, "retry: 1000\n\n")
	last := ""
	for {
		jobs, err := s.queue.JobsFor(ctx, actor, "")
		if err != nil {
			if ctx.Err() == nil && !db.Unavailable(err) {
				s.logger.Error("job queue events", "err", err)
			}
			return
		}
		if v := queueVersion(jobs); v != last {
			last = v
			fmt.Fprintf(w, "event: queue\ndata: %s\n\n", v)
		}
		if rc.Flush() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
		case <-check.C:
		}
	}
}

// handleJobMoveForm serves POST /jobs/move (job, and ahead_of or
// behind_of): the move buttons of the Job Queue page.
func (s *Server) handleJobMoveForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	u := resolute.QueueControl{JobID: r.PostFormValue("job"), AheadOf: r.PostFormValue("ahead_of"), BehindOf: r.PostFormValue("behind_of")}
	var err error
	var done string
	switch {
	case u.AheadOf == "" && u.BehindOf == "":
		err = resolute.Errorf(resolute.EInvalid, "job %s is already at that end of its queue", u.JobID)
	case u.AheadOf != "":
		done = "Moved " + u.JobID + " ahead of " + u.AheadOf + "."
	default:
		done = "Moved " + u.JobID + " behind " + u.BehindOf + "."
	}
	if err == nil {
		err = s.svc.Queue.Update(r.Context(), actorFrom(r), []resolute.QueueControl{u})
	}
	s.queueFormDone(w, r, err, done)
}

// handleJobUpdateForm serves POST /jobs/update (job, priority, weight,
// resource_pool): the inline edits of a row. Only what differs from the job
// changes, so an untouched priority stays the pool's default.
func (s *Server) handleJobUpdateForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(r); err != nil {
		s.error(w, r, err)
		return
	}
	u, changes, err := s.readJobUpdateForm(r)
	if err == nil && len(changes) == 0 {
		redirect(w, r, "/jobs", "ok", "Nothing to change for "+u.JobID+".")
		return
	}
	if err == nil {
		err = s.svc.Queue.Update(r.Context(), actorFrom(r), []resolute.QueueControl{u})
	}
	s.queueFormDone(w, r, err, "Updated "+u.JobID+": "+strings.Join(changes, ", ")+".")
}

// readJobUpdateForm turns a row's form into a change of what differs from
// the job as it is, with those changes in words.
func (s *Server) readJobUpdateForm(r *http.Request) (resolute.QueueControl, []string, error) {
	u := resolute.QueueControl{JobID: r.PostFormValue("job")}
	jobs, err := s.queue.JobsFor(r.Context(), actorFrom(r), "")
	if err != nil {
		return u, nil, err
	}
	i := slices.IndexFunc(jobs, func(j resolute.Job) bool { return j.JobID == u.JobID })
	if i < 0 {
		return u, nil, resolute.Errorf(resolute.ENotFound, "%s is not in the queue; it may have ended", u.JobID)
	}
	j := jobs[i]
	var changes []string
	if v := strings.TrimSpace(r.PostFormValue("priority")); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil {
			return u, nil, resolute.Errorf(resolute.EInvalid, "priority: must be a whole number, got %q", v)
		}
		if p != j.Priority {
			u.Priority = &p
			changes = append(changes, "priority "+v)
		}
	}
	if v := strings.TrimSpace(r.PostFormValue("weight")); v != "" {
		wt, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return u, nil, resolute.Errorf(resolute.EInvalid, "weight: must be a number, got %q", v)
		}
		if wt != j.Weight {
			u.Weight = &wt
			changes = append(changes, "weight "+v)
		}
	}
	if v := r.PostFormValue("resource_pool"); v != "" && v != j.ResourcePool {
		u.ResourcePool = &v
		changes = append(changes, "resource pool "+v)
	}
	return u, changes, nil
}

// queueFormDone answers a Job Queue form: back to the queue with message,
// or with the reason a change was refused.
func (s *Server) queueFormDone(w http.ResponseWriter, r *http.Request, err error, message string) {
	switch resolute.ErrorCode(err) {
	case "":
		redirect(w, r, "/jobs", "ok", message)
	case resolute.EInvalid, resolute.ENotFound, resolute.EConflict:
		redirect(w, r, "/jobs", "error", sentence(resolute.ErrorMessage(err)))
	default:
		s.error(w, r, err)
	}
}
