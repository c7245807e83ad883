package resolute

// StartupHookFile is the file at the top of a task's context directory (an
// experiment's model definition, a notebook's, shell's or TensorBoard's
// --context) that runs before the task's entrypoint, as in Determined,
// where users put `pip install ...` and downloads.
const StartupHookFile = "startup-hook.sh"

// RunsStartupHook says whether a task of type taskType (TRIAL for a trial)
// runs its context's startup hook: trials, notebooks, shells and
// TensorBoards do; commands and checkpoint GC do not, as in Determined,
// whose documentation says the hook does not apply to `det cmd`.
func RunsStartupHook(taskType string) bool {
	switch taskType {
	case "TRIAL", TaskNotebook, TaskShell, TaskTensorBoard:
		return true
	}
	return false
}

// startupHookScript sources ./startup-hook.sh, when the work directory has
// one, then execs the task's command ("$@"). Sourced, as Determined's
// entrypoints do (with bash; here with sh), so that what the hook exports,
// and a cd, reach the command. It runs with errexit, as in Determined, so
// that a failing command in the hook fails it; inside a function, so that
// a hook's `set --` or `shift` cannot change the command. A hook that
// exits (or fails) ends the task with its status, after a line saying so
// on stderr; the command never runs then.
const startupHookScript = `if [ -f ./` + StartupHookFile + ` ]; then
	resolute_startup_hook_failed() {
		echo "` + StartupHookFile + ` exited with status $?; the task's entrypoint did not run" >&2
	}
	resolute_startup_hook() {
		set -e
		. ./` + StartupHookFile + `
	}
	trap resolute_startup_hook_failed EXIT
	resolute_startup_hook
	set +e
	trap - EXIT
fi
exec "$@"
`

// WithStartupHook is argv run by sh after the work directory's
// startup-hook.sh (when it has one), in the same environment and directory
// and as the same user: its output goes where the command's does. A bare
// argv[0] is looked up in PATH once the hook has run, so the hook may
// install it.
func WithStartupHook(argv []string) []string {
	return append([]string{"sh", "-c", startupHookScript, "startup-hook"}, argv...)
}
