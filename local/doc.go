// Package local is Resolute's resource manager for one machine: it runs each
// allocation as a process group on the host, hands out slots (one per GPU
// when NVML finds GPUs, CPU slots otherwise; the GPUs interface in gpu.go
// keeps that decision testable without a GPU), reads each GPU's usage every
// few seconds for Agents, captures the tasks' output as log
// events, opens terminals (PTYs) into running allocations, and adopts the
// allocations that survived a master restart.
//
// It owns processes, slots, work directories and its own state directory. It
// does not decide what runs where (the scheduler picks the slots), does not
// touch the database, and knows nothing of experiments or trials: control/
// turns its events into state changes.
//
// # Users
//
// Each allocation runs as the Unix user its launch names (LaunchSpec.RunAs),
// never as root: its processes and terminals get that uid and gid and no
// supplementary groups of the master's, a home of their own, and the work
// directory, mode 0700. The master's state directory stays its own: the
// leader's exit status comes back through a descriptor the master opened.
// A master that is not root cannot switch users; it runs every task as
// itself and says so (users.go).
//
// # What outlives an allocation
//
// When an allocation ends its process group is killed, and its terminals'.
// A process of its task that left them (setsid(), a double fork into a
// group of its own) is out of that kill's reach. For an allocation that ran
// as its owner's default uid (task_uid_base + user id, which no person logs
// in as and only that user's tasks use, as the credential it was launched
// with says), the manager then kills every process of the uid, unless
// another of its allocations still runs as it: each whose real, effective
// or saved uid it is in /proc, round after round until a round finds none
// it has not killed, at most maxSweepRounds (a task may fork as fast as it
// is killed; it logs what may be left). Recover does the same, once it
// knows which adopted allocations still run, for the default uids of
// allocations that ended while no master ran. A linked uid may be a
// person's account, with their logins: only the groups are killed, and what
// a linked user's task detaches from its group outlives it. Root's uid and
// the master's own are never swept (strays.go). No other master on the
// machine may use the same default uids: its tasks would be swept too.
//
// # Output capture
//
// A task's stdout and stderr go to files in the manager's state directory,
// never to pipes held by the master, so a task keeps running (and never gets
// SIGPIPE) when the master stops or restarts. The manager tails those files
// line by line and emits Log events; consumed parts of the files are freed
// (hole punching) where the file system allows, and the files are removed
// when the allocation ends.
//
// # Work directories
//
// An allocation runs in its work directory, which Launch fills with its
// context (unpacked by package contextdir's rules, the ones its upload was
// checked with) and its files, in a directory made anew and the master's
// until filled (one left by an earlier launch belongs to a task's user, who
// may have filled it with links: it is removed, not reused), then handed to
// the task's user. When the allocation ends the directory is removed,
// unless Options.KeepWorkDirs keeps it for debugging; its output is not in
// it. Recover removes the work directories of allocations that
// ended while no master ran, and any other entry of Options.WorkRoot that
// belongs to no allocation the manager has.
//
// # Startup hooks
//
// A launch that asks for it (LaunchSpec.StartupHook) and whose context put
// a startup-hook.sh at the top of the work directory runs its command
// through resolute.WithStartupHook: sh sources the hook, then execs the
// command, in the same process, user, directory and environment, with the
// same output files. The command's program is then looked up by that sh,
// after the hook, not by Launch. Tasks get PIP_BREAK_SYSTEM_PACKAGES=1 so
// that a hook's pip install reaches the task user's home under Debian's
// Python.
//
// # Events
//
// Events of one allocation come in order: Started, its Log lines (each stream
// in order, the two streams interleaved as read; a trial's first says that
// its environment.image is not used), then Exited. Started and
// Exited are always queued; Log events are queued up to Options.MaxQueuedLogs
// and past that the tailers wait for the consumer. Because output goes to
// files, a slow consumer delays log delivery but never blocks a task.
//
// # Restarts
//
// Each allocation has a state file (pid, process group, start time). After a
// restart, Recover adopts the allocations whose leader process is still alive
// (its /proc start time guards against PID reuse). Adopted allocations can be
// killed and exec'd into; their log tailing resumes from the end of their
// output files (lines written while no master was running stay in the files
// but are not emitted), and since the new master is not their parent, their
// Exited event carries ErrExitUnknown instead of an exit code. Recover also
// reports the allocations that ended while no master ran, with the exit
// status their leader recorded.
package local
