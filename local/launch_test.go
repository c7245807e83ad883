package local

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func intp(n int) *int { return &n }

func TestLaunchDeliversStartedLogsAndExited(t *testing.T) {
	tests := map[string]struct {
		shell      string
		entrypoint []string
		wantOut    []Log
		wantErr    []Log
		wantCode   int
	}{
		"a shell command runs with sh -c and its lines come in order with levels and ranks parsed": {
			shell: `echo 'INFO: [12] root: hello'; echo plain; echo 'ERROR: [12] root: bad' >&2; ` +
				`echo '[rank=2] WARNING: [7] y: careful'; echo '[rank=x] INFO: no rank'; exit 3`,
			wantOut: []Log{
				{Stream: Stdout, Level: "INFO", Line: "INFO: [12] root: hello", Message: "[12] root: hello"},
				{Stream: Stdout, Line: "plain", Message: "plain"},
				{Stream: Stdout, Level: "WARNING", Rank: intp(2), Line: "[rank=2] WARNING: [7] y: careful", Message: "[7] y: careful"},
				{Stream: Stdout, Line: "[rank=x] INFO: no rank", Message: "[rank=x] INFO: no rank"},
			},
			wantErr:  []Log{{Stream: Stderr, Level: "ERROR", Line: "ERROR: [12] root: bad", Message: "[12] root: bad"}},
			wantCode: 3,
		},
		"an argv entrypoint runs without a shell": {
			entrypoint: []string{"printf", `%s\n`, "a b", "$HOME"},
			wantOut: []Log{
				{Stream: Stdout, Line: "a b", Message: "a b"},
				{Stream: Stdout, Line: "$HOME", Message: "$HOME"},
			},
		},
		"a last line without a newline, a carriage return and invalid UTF-8 are cleaned up": {
			shell: `printf 'dos\r\n\377x\000y\npartial'`,
			wantOut: []Log{
				{Stream: Stdout, Line: "dos", Message: "dos"},
				{Stream: Stdout, Line: "\uFFFDxy", Message: "\uFFFDxy"},
				{Stream: Stdout, Line: "partial", Message: "partial"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, nil)
			s := spec(t, "a1", tc.shell)
			s.Entrypoint = tc.entrypoint
			launch(t, m, s)
			events := untilExit(t, m, "a1")
			started, ok := events[0].(Started)
			if !ok || started.PID <= 0 || started.Addr != "127.0.0.1" {
				t.Fatalf("first event = %#v, want Started with a PID and 127.0.0.1", events[0])
			}
			if diff := cmp.Diff(tc.wantOut, logs(events, Stdout)); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, logs(events, Stderr)); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if ex := exitOf(t, events); ex.ExitCode != tc.wantCode || ex.Signal != 0 || ex.Err != nil || ex.Killed {
				t.Errorf("Exited = %+v, want code %d", ex, tc.wantCode)
			}
		})
	}
}

func TestLaunchSplitsLongLines(t *testing.T) {
	m := newManager(t, nil)
	launch(t, m, spec(t, "long", `head -c 70000 /dev/zero | tr '\0' a; echo; echo short`))
	var lens []int
	for _, l := range logs(untilExit(t, m, "long"), Stdout) {
		lens = append(lens, len(l.Line))
	}
	if diff := cmp.Diff([]int{MaxLineBytes, 70000 - MaxLineBytes, 5}, lens); diff != "" {
		t.Errorf("line lengths (-want +got):\n%s", diff)
	}
}

func TestLaunchRunsPythonWithDeterminedLogFormat(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no " + python)
	}
	m := newManager(t, nil)
	s := spec(t, "py", "")
	s.Entrypoint = []string{python, "train.py"}
	s.PythonPath = []string{"harness"}
	s.Files = map[string][]byte{
		"harness/helper.py": []byte("NAME = 'from harness'\n"),
		"train.py": []byte(`import logging, sys, helper
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout,
    format="%(levelname)s: [%(process)s] %(name)s: %(message)s")
logging.getLogger("trial").info(helper.NAME)
logging.getLogger("trial").critical("boom")
sys.exit(7)
`),
	}
	launch(t, m, s)
	events := untilExit(t, m, "py")
	var got []string
	for _, l := range logs(events, Stdout) {
		got = append(got, l.Level+" "+l.Message[strings.Index(l.Message, "]")+2:])
	}
	if diff := cmp.Diff([]string{"INFO trial: from harness", "CRITICAL trial: boom"}, got); diff != "" {
		t.Errorf("levels and messages (-want +got):\n%s", diff)
	}
	if ex := exitOf(t, events); ex.ExitCode != 7 {
		t.Errorf("exit code = %d, want 7", ex.ExitCode)
	}
}

func TestLaunchSetsEnvironment(t *testing.T) {
	fourGPUs := func(context.Context) ([]GPU, error) {
		return []GPU{{Index: 3, UUID: "GPU-d"}, {Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-b"}, {Index: 2, UUID: "GPU-c"}}, nil
	}
	tests := map[string]struct {
		discover DiscoverFunc
		slots    []int
		want     map[string]string
		absent   []string
	}{
		"CPU slots hide all GPUs": {
			slots: []int{0, 2},
			want:  map[string]string{"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "void", "DET_SLOT_IDS": "[0,2]"},
		},
		"a zero-slot allocation on a GPU machine sees no GPU": {
			discover: fourGPUs,
			want:     map[string]string{"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "void", "DET_SLOT_IDS": "[]"},
		},
		"GPU slots set CUDA_VISIBLE_DEVICES to the chosen GPUs' indices": {
			discover: fourGPUs,
			slots:    []int{1, 3},
			want:     map[string]string{"CUDA_VISIBLE_DEVICES": "1,3", "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "DET_SLOT_IDS": "[1,3]"},
			absent:   []string{"NVIDIA_VISIBLE_DEVICES"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, func(o *Options) {
				o.BaseEnv = []string{"PATH=" + os.Getenv("PATH"), "PYTHONPATH=/base", "NVIDIA_VISIBLE_DEVICES=all"}
				if tc.discover != nil {
					o.GPUs = tc.discover
				}
			})
			s := spec(t, "env", "env")
			s.Slots = tc.slots
			s.Env = map[string]string{"DET_TASK_ID": "t-1", "WITH_SPACE": "a b", "CUDA_VISIBLE_DEVICES": "ignored"}
			s.PythonPath = []string{"/harness", "rel"}
			launch(t, m, s)
			env := envMap(untilExit(t, m, "env"))
			want := map[string]string{"DET_TASK_ID": "t-1", "WITH_SPACE": "a b", "DET_AGENT_ID": "test-agent",
				"PYTHONPATH": "/harness:" + s.WorkDir + "/rel:/base", "PATH": os.Getenv("PATH")}
			for k, v := range tc.want {
				want[k] = v
			}
			got := map[string]string{}
			for k := range want {
				got[k] = env[k]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			for _, k := range tc.absent {
				if v, ok := env[k]; ok {
					t.Errorf("env has %s=%q, want it absent", k, v)
				}
			}
		})
	}
}

// TestLaunchGivesTasksTheHarnessAndTheTaskPython: the harness directory goes
// first on PYTHONPATH, the bin directory first on PATH (before the task's own
// or a plain default), DET_PYTHON_EXECUTABLE is the task Python unless the
// task names one, DET_RESOURCES_TYPE says "process", and a trial's image is
// said to be unused right after it starts.
func TestLaunchGivesTasksTheHarnessAndTheTaskPython(t *testing.T) {
	tests := map[string]struct {
		env  map[string]string
		want map[string]string
	}{
		"the defaults": {
			want: map[string]string{"PYTHONPATH": "/h/lib:/base", "PATH": "/h/bin:/usr/local/bin:/usr/bin:/bin",
				"DET_PYTHON_EXECUTABLE": "/usr/bin/python3", "DET_RESOURCES_TYPE": "process"},
		},
		"the task's own PATH and Python": {
			env: map[string]string{"PATH": "/opt/bin:/usr/bin:/bin", "DET_PYTHON_EXECUTABLE": "/opt/py", "DET_RESOURCES_TYPE": "mine"},
			want: map[string]string{"PYTHONPATH": "/h/lib:/base", "PATH": "/h/bin:/opt/bin:/usr/bin:/bin",
				"DET_PYTHON_EXECUTABLE": "/opt/py", "DET_RESOURCES_TYPE": "process"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, func(o *Options) {
				o.BaseEnv = []string{"PATH=" + os.Getenv("PATH"), "PYTHONPATH=/base"}
				o.HarnessDir, o.BinDir, o.Python = "/h/lib", "/h/bin", "/usr/bin/python3"
			})
			s := spec(t, "env", "env")
			s.Env, s.TaskType, s.Image = tc.env, "TRIAL", "img:1"
			launch(t, m, s)
			events := untilExit(t, m, "env")
			env := envMap(events)
			got := map[string]string{}
			for k := range tc.want {
				got[k] = env[k]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			note, ok := events[1].(Log)
			if _, started := events[0].(Started); !started || !ok || !strings.Contains(note.Line, `environment.image "img:1" is recorded but not used`) {
				t.Errorf("events start with %+v, %+v; want Started, then the unused image", events[0], events[1])
			}
		})
	}
}

func TestLaunchChecksSlots(t *testing.T) {
	tests := map[string]struct {
		id       string
		slots    []int
		wantCode string
	}{
		"a slot another allocation holds is a conflict":  {id: "b", slots: []int{2, 1}, wantCode: "conflict"},
		"a slot the machine does not have is invalid":    {id: "b", slots: []int{4}, wantCode: "invalid"},
		"a slot listed twice is invalid":                 {id: "b", slots: []int{3, 3}, wantCode: "invalid"},
		"an allocation ID in use is a conflict":          {id: "holder", slots: []int{3}, wantCode: "conflict"},
		"an allocation ID that is not a file name fails": {id: "../x", wantCode: "invalid"},
		"free slots are fine":                            {id: "b", slots: []int{0, 3}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, nil)
			holder := spec(t, "holder", "")
			holder.Entrypoint, holder.Slots = []string{"sleep", "60"}, []int{1, 2}
			launch(t, m, holder)
			s := spec(t, tc.id, "true")
			s.Slots = tc.slots
			if got := code(m.Launch(context.Background(), s)); got != tc.wantCode {
				t.Errorf("Launch error code = %q, want %q", got, tc.wantCode)
			}
			if tc.wantCode == "" {
				untilExit(t, m, "b")
			}
			var holders []string
			for _, sl := range m.Capacity().Slots {
				holders = append(holders, sl.AllocationID)
			}
			if diff := cmp.Diff([]string{"", "holder", "holder", ""}, holders); diff != "" {
				t.Errorf("slot holders (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExitFreesSlots(t *testing.T) {
	m := newManager(t, nil)
	s := spec(t, "a", "exit 0")
	s.Slots = []int{0, 1}
	launch(t, m, s)
	untilExit(t, m, "a")
	snap := m.Capacity()
	if len(snap.Allocations) != 0 {
		t.Errorf("allocations after exit = %+v, want none", snap.Allocations)
	}
	for _, sl := range snap.Slots {
		if sl.AllocationID != "" || sl.Type != SlotCPU {
			t.Errorf("slot %+v: want a free CPU slot", sl)
		}
	}
	s2 := spec(t, "b", "exit 0")
	s2.Slots = []int{0, 1}
	launch(t, m, s2)
	untilExit(t, m, "b")
}

func TestLaunchFailsForMissingProgram(t *testing.T) {
	m := newManager(t, nil)
	s := spec(t, "a", "")
	s.Entrypoint = []string{"no-such-program-here"}
	if got := code(m.Launch(context.Background(), s)); got != "invalid" {
		t.Errorf("code = %q, want invalid", got)
	}
	if _, err := os.Stat(m.opts.StateDir + "/a"); !os.IsNotExist(err) {
		t.Errorf("state dir of a failed launch: %v, want removed", err)
	}
	if got := code(m.Kill(context.Background(), "a", 0)); got != "not_found" {
		t.Errorf("Kill after failed launch: %q, want not_found", got)
	}
}

func TestSlowConsumerNeverBlocksTasks(t *testing.T) {
	m := newManager(t, func(o *Options) { o.MaxQueuedLogs = 2 })
	launch(t, m, spec(t, "chatty", `i=0; while [ $i -lt 200 ]; do echo line $i; i=$((i+1)); done`))
	started := next(t, m, "chatty", func(e Event) bool { _, ok := e.(Started); return ok }).(Started)
	// Nobody reads events now; the task must finish anyway.
	eventually(t, "task exit with a full queue", func() bool { return processGone(started.PID) })
	events := untilExit(t, m, "chatty")
	out := logs(events, Stdout)
	if len(out) != 200 || out[0].Line != "line 0" || out[199].Line != "line 199" {
		t.Errorf("got %d lines (first %v), want line 0..199 in order", len(out), out[:min(1, len(out))])
	}
}

func TestTasksDoNotInheritTheMastersSecrets(t *testing.T) {
	t.Setenv("RESOLUTE_DB_PASSWORD", "hunter2")
	m := newManager(t, nil) // BaseEnv nil: InheritedEnv only
	launch(t, m, spec(t, "env", "env"))
	env := envMap(untilExit(t, m, "env"))
	if v, ok := env["RESOLUTE_DB_PASSWORD"]; ok {
		t.Errorf("the task sees RESOLUTE_DB_PASSWORD=%q", v)
	}
	if env["PATH"] != os.Getenv("PATH") {
		t.Errorf("PATH = %q, want the master's %q", env["PATH"], os.Getenv("PATH"))
	}
}
