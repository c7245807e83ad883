package scheduler

// roundRobin does step 8: every job is treated alike, whatever its priority.
// Rounds go over the jobs in queue order (Position, Submitted, ID); in each
// round a job starts at most one pending task, its first that fits in the
// free slots. A task that does not fit waits and is not tried again in this
// pass (free slots only shrink). Rounds go on while some job has pending
// tasks left to try. There is no preemption.
func (pp *poolPass) roundRobin() {
	type cursor struct{ qi, next int }
	rot := make([]cursor, 0, len(pp.q))
	for qi := range pp.q {
		rot = append(rot, cursor{qi: qi})
	}
	for len(rot) > 0 {
		keep := rot[:0]
		for _, c := range rot {
			q := &pp.q[c.qi]
			tasks := q.job.Tasks
			for c.next < len(tasks) {
				t := &tasks[c.next]
				c.next++
				if t.Running || t.Slots <= 0 || pp.never(t) || pp.capped(q, t) {
					continue
				}
				if pp.tryStart(q, t) {
					break
				}
				pp.wait(t, pp.unfitReason(t))
			}
			if c.next < len(tasks) {
				keep = append(keep, c)
			}
		}
		rot = keep
	}
}
