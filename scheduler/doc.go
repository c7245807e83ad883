// Package scheduler owns the scheduling policy of Resolute: which pending
// task starts on which slots, which running task is asked to give its slots
// back, and why everything else waits.
//
// It owns resource-pool capacity accounting (free slots per agent), gang
// admission (a task gets all its slots at once or none), fitting (best: pack
// onto the fullest agent that fits; worst: spread onto the emptiest), the
// queue order of jobs and the three policies of Determined's agent resource
// manager: priority (with optional preemption and backfilling), fair share
// and round robin.
//
// The heart of the package is Decide, a pure function from a Snapshot to a
// Decision. It does no I/O, reads no clock (Snapshot.Now is the only time it
// sees), touches no database and keeps no state between calls: the same
// Snapshot always gives the same Decision, actions in the same order. Building
// Snapshots from the database and the resource manager, and carrying out the
// Starts and Preempts of a Decision, belong to the caller (control/ and the
// resource managers), which also owns the loop that calls Decide.
//
// One call of Decide is a scheduling pass; every pool is decided on its own,
// in these steps (numbered the same way in the code):
//
//  1. Capacity: free slots per agent, after the slots held by running tasks
//     (tasks already preempting still hold theirs).
//  2. Zero-slot tasks are scheduled apart from the rest and always start.
//  3. Gang admission and fitting of tasks that need slots.
//  4. Tasks that can never fit in the pool wait, saying so.
//  5. Job.MaxSlots caps the slots a job holds.
//  6. Priority policy, with preemption and backfilling.
//  7. Fair-share policy.
//  8. Round-robin policy.
//  9. JobsAhead, the queue position shown to users.
package scheduler
