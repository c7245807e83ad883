package masterconf

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/configkeys"
	"github.com/resolute-ml/resolute/expconf"
)

// masterKeys lists every key master.yaml accepts, read from Config's yaml
// tags the way decode reads them: items of lists as [], maps as one key
// (their contents are checked by expconf, see the experiment key audit).
func masterKeys(t reflect.Type, prefix string) []string {
	var out []string
	for key, i := range fieldsByKey(t) {
		p := join(prefix, key)
		out = append(out, p)
		ft := t.Field(i).Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == durationType:
		case ft.Kind() == reflect.Struct:
			out = append(out, masterKeys(ft, p)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, masterKeys(ft.Elem(), p+"[]")...)
		}
	}
	sort.Strings(out)
	return out
}

// TestEveryMasterConfigKeyHasItsEffectOrIsRefused: every key of master.yaml
// (Config's yaml tags) and of its task_container_defaults (expconf's table)
// is in configkeys.Master, and every key there is one of them.
func TestEveryMasterConfigKeyHasItsEffectOrIsRefused(t *testing.T) {
	keys := masterKeys(reflect.TypeOf(Config{}), "")
	accepted, refused := expconf.TaskContainerDefaultKeys()
	for _, k := range append(accepted, refused...) {
		keys = append(keys, "task_container_defaults."+k)
	}
	if os.Getenv("KEYAUDIT_PRINT") != "" {
		t.Log("\n" + strings.Join(keys, "\n"))
	}
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
		if !configkeys.Covers(configkeys.Master, k) {
			t.Errorf("%s is accepted but not in configkeys.Master: give it its effect (and the test that proves it) or refuse it saying it is not supported", k)
		}
	}
	for _, k := range refused {
		if e, _ := configkeys.Lookup(configkeys.Master, "task_container_defaults."+k); e.Status != configkeys.Refused {
			t.Errorf("task_container_defaults.%s is refused at start-up but the table says %s", k, e.Status)
		}
	}
	for _, k := range configkeys.Master {
		if !known[k.Path] {
			t.Errorf("configkeys.Master has %s, which master.yaml does not have", k.Path)
		}
	}
}
