package expconf_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
)

func TestTrialCommand(t *testing.T) {
	harness := []string{"python3", "-m", "determined.exec.harness", "model_def:MNistTrial"}
	for name, tc := range map[string]struct {
		in    expconf.Entrypoint
		slots int
		want  expconf.Entrypoint
	}{
		"a module:Class entrypoint runs the class through the harness": {
			in: expconf.Entrypoint{Shell: "model_def:MNistTrial"}, slots: 1,
			want: expconf.Entrypoint{Exec: harness},
		},
		"a module:Class entrypoint with several slots runs under torch_distributed": {
			in: expconf.Entrypoint{Shell: " model_def:MNistTrial\n"}, slots: 2,
			want: expconf.Entrypoint{Exec: append([]string{"python3", "-m", "determined.launch.torch_distributed"}, harness...)},
		},
		"a dotted module and class given as a list are a trial class too": {
			in: expconf.Entrypoint{Exec: []string{"pkg.model_def:Outer.Trial"}}, slots: 0,
			want: expconf.Entrypoint{Exec: []string{"python3", "-m", "determined.exec.harness", "pkg.model_def:Outer.Trial"}},
		},
		"a script is left alone": {
			in: expconf.Entrypoint{Shell: "python3 train.py --epochs 1"}, slots: 2,
			want: expconf.Entrypoint{Shell: "python3 train.py --epochs 1"},
		},
		"a command with a colon in an argument is left alone": {
			in: expconf.Entrypoint{Shell: "python3 -m determined.launch.torch_distributed --trial model_def:T"}, slots: 2,
			want: expconf.Entrypoint{Shell: "python3 -m determined.launch.torch_distributed --trial model_def:T"},
		},
		"a URL-like word is not a class": {
			in: expconf.Entrypoint{Shell: "http://x"}, slots: 1,
			want: expconf.Entrypoint{Shell: "http://x"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.in.TrialCommand(tc.slots)); diff != "" {
				t.Errorf("TrialCommand (-want +got):\n%s", diff)
			}
		})
	}
}
