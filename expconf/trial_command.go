package expconf

import (
	"regexp"
	"strings"
)

// trialClassRE matches Determined's legacy trial-class entrypoint,
// `module:Class` (a dotted module, a dotted class, no spaces).
var trialClassRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_.]*$`)

// TrialClass returns the `module:Class` of an entrypoint written in
// Determined's form before 0.38 (`entrypoint: model_def:MNistTrial`), or "".
func (e Entrypoint) TrialClass() string {
	if len(e.Exec) == 1 && trialClassRE.MatchString(e.Exec[0]) {
		return e.Exec[0]
	}
	if s := strings.TrimSpace(e.Shell); trialClassRE.MatchString(s) {
		return s
	}
	return ""
}

// TrialCommand is the command a trial runs for this entrypoint: the
// entrypoint itself, except that a `module:Class` entrypoint runs the class
// through the harness's PyTorch Trainer (`python3 -m determined.exec.harness
// module:Class`), under the torch_distributed launcher when the trial has
// more than one slot, as Determined ran such classes.
func (e Entrypoint) TrialCommand(slotsPerTrial int) Entrypoint {
	class := e.TrialClass()
	if class == "" {
		return e
	}
	run := []string{"python3", "-m", "determined.exec.harness", class}
	if slotsPerTrial > 1 {
		run = append([]string{"python3", "-m", "determined.launch.torch_distributed"}, run...)
	}
	return Entrypoint{Exec: run}
}
