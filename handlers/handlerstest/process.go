package handlerstest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// TrainProcess is the pid of the `python ... train.py` process this master
// launched whose environment holds key=value (DET_TRIAL_ID=7,
// DET_ALLOCATION_ID=1.1.1), or 0. Ids repeat across test masters (each
// database starts at 1) and their tests run at once, so the process must
// also name this master in DET_MASTER: a test that kills a trial must never
// kill another test's.
func (m *Master) TrainProcess(key, value string) int {
	want := [][]byte{[]byte(key + "=" + value + "\x00"), []byte("DET_MASTER=" + m.URL + "\x00")}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		argv0 := filepath.Base(string(bytes.SplitN(cmd, []byte{0}, 2)[0]))
		if err != nil || !bytes.HasPrefix([]byte(argv0), []byte("python")) || !bytes.Contains(cmd, []byte("train.py")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, want[0]) || !bytes.Contains(env, want[1]) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		return pid
	}
	return 0
}
