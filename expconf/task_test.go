package expconf_test

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

func TestParseTaskDefaults(t *testing.T) {
	tests := map[string]struct {
		taskType string
		yaml     string
		slots    int
	}{
		"a notebook gets one slot":                 {taskType: expconf.TaskNotebook, slots: 1},
		"a shell gets one slot":                    {taskType: expconf.TaskShell, slots: 1},
		"a command with an entrypoint gets a slot": {taskType: expconf.TaskCommand, yaml: "entrypoint: [sleep, '10']", slots: 1},
		"a TensorBoard gets no slot":               {taskType: expconf.TaskTensorBoard, slots: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := expconf.ParseTask([]byte(tc.yaml), tc.taskType)
			if err != nil {
				t.Fatal(err)
			}
			if c.Slots != tc.slots || c.NotebookIdleType != expconf.IdleKernelsOrTerminals || c.Resources.Weight != 1 || c.IdleTimeout != nil {
				t.Errorf("defaults wrong: %+v", c)
			}
		})
	}
}

func TestParseTaskNotebookFile(t *testing.T) {
	data, err := os.ReadFile("testdata/notebook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := expconf.ParseTask(data, expconf.TaskNotebook)
	if err != nil {
		t.Fatal(err)
	}
	thirty := 30 * time.Minute
	if diff := cmp.Diff(&thirty, c.IdleTimeout); diff != "" {
		t.Errorf("idle_timeout (-want +got):\n%s", diff)
	}
	if c.Slots != 2 || *c.Resources.Priority != 30 || c.NotebookIdleType != "activity" || c.Environment.Image.CUDA != "myorg/cuda:1" {
		t.Errorf("notebook config wrong: %+v", c)
	}
	y, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	again, err := expconf.ParseTask(y, expconf.TaskNotebook)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, y)
	}
	if diff := cmp.Diff(c, again); diff != "" {
		t.Errorf("round trip changed the task config (-first +again):\n%s", diff)
	}
}

func TestParseTaskRejects(t *testing.T) {
	tests := map[string]struct {
		taskType string
		yaml     string
		want     string
	}{
		"a command needs an entrypoint": {
			taskType: expconf.TaskCommand, yaml: "description: x",
			want: "entrypoint: required for a command (line 1)",
		},
		"work_dir is not supported": {
			taskType: expconf.TaskNotebook, yaml: "work_dir: /home/me",
			want: "work_dir: not supported: a task starts in its context directory; cd in its entrypoint (line 1)",
		},
		"is_single_node is not allowed": {
			taskType: expconf.TaskShell, yaml: "resources:\n  is_single_node: true",
			want: "resources.is_single_node: not allowed in a command, notebook, shell or TensorBoard config (line 2)",
		},
		"slots_per_trial is an experiment key": {
			taskType: expconf.TaskNotebook, yaml: "resources:\n  slots_per_trial: 1",
			want: "resources.slots_per_trial: unknown key (did you mean slots?) (line 2)",
		},
		"idle_timeout must be a duration": {
			taskType: expconf.TaskNotebook, yaml: "idle_timeout: 30",
			want: `idle_timeout: expected a duration like "30m", got "30" (line 1)`,
		},
		"notebook_idle_type is an enum": {
			taskType: expconf.TaskNotebook, yaml: "notebook_idle_type: never",
			want: `notebook_idle_type: must be one of kernels_or_terminals, kernel_connections or activity, got "never" (line 1)`,
		},
		"slots must not be negative": {
			taskType: expconf.TaskShell, yaml: "resources: {slots: -1}",
			want: "resources.slots: must be 0 or more, got -1 (line 1)",
		},
		"tensorboard_args are strings": {
			taskType: expconf.TaskTensorBoard, yaml: "tensorboard_args: [--samples_per_plugin, {a: 1}]",
			want: "tensorboard_args[1]: expected a string, got a map (line 1)",
		},
		"slurm is not supported": {
			taskType: expconf.TaskCommand, yaml: "entrypoint: x\nslurm: {}",
			want: "slurm: not supported by Resolute (a Determined Enterprise Edition HPC launcher key) (line 2)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := expconf.ParseTask([]byte(tc.yaml), tc.taskType)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error =\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
	if _, err := expconf.ParseTask(nil, "trial"); err == nil {
		t.Error("an unknown task type was accepted")
	}
}

func TestParseTaskLayers(t *testing.T) {
	c, err := expconf.ParseTaskLayers([][]byte{[]byte("environment: {image: base:1}\nresources: {resource_pool: aux}"), []byte("entrypoint: echo hi")},
		[]string{"resources.slots=0"}, expconf.TaskCommand)
	if err != nil {
		t.Fatal(err)
	}
	if c.Slots != 0 || c.Resources.ResourcePool != "aux" || c.Environment.Image.CPU != "base:1" || c.Entrypoint.Shell != "echo hi" {
		t.Errorf("merged task config wrong: %+v", c)
	}
}
