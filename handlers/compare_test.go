package handlers_test

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// createCompared creates a paused experiment named name with the given
// learning rate and a batch size every compared one shares.
func createCompared(t *testing.T, m *handlerstest.Master, token, name, lr string) int64 {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte("pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paused := false
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{
		Config: "name: " + name + "\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\n" +
			"hyperparameters: {lr: " + lr + ", batch_size: 32}\n"},
		ContextTgz: tgz(t, dir), Activate: &paused}
	var e resolute.ExperimentResponse
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &e); code != 200 {
		t.Fatalf("create: %d", code)
	}
	return e.Experiment.ID
}

func TestTheComparePageShowsExperimentsSideBySideAndLaunchesOneTensorBoard(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	a, b := createCompared(t, m, admin, "alpha", "0.1"), createCompared(t, m, admin, "beta", "0.01")
	c := signInPages(t, m, "admin", "")

	_, body := get(t, c, m, "/experiments")
	wants(t, "the experiment list", body, `id="experiment-batch"`, `form="experiment-batch" name="experiments" value="`+itoa(a)+`"`, `name="action" value="compare"`)

	// A comma list and repeated fields are the same comparison.
	for _, q := range []string{itoa(a) + "," + itoa(b), itoa(a) + "&experiments=" + itoa(b)} {
		resp, body := get(t, c, m, "/compare?experiments="+q)
		if resp.StatusCode != 200 {
			t.Fatalf("compare %s: %d\n%s", q, resp.StatusCode, body)
		}
		wants(t, "the compare page", body, ">alpha<", ">beta<", `id="config-hyperparameters.lr.val"`, "0.01",
			`id="config-name"`, "single · loss (smaller is better)", `name="experiments" value="`+itoa(b)+`"`)
		if strings.Contains(body, `id="config-hyperparameters.batch_size.val"`) {
			t.Errorf("an equal hyperparameter is shown:\n%s", body)
		}
	}
	_, body = get(t, c, m, "/compare?experiments="+itoa(a)+","+itoa(b)+"&all=1")
	wants(t, "every key", body, `id="config-hyperparameters.batch_size.val"`, `id="config-hyperparameters.lr.val" class="differ"`)

	for q, want := range map[string]struct {
		code int
		says string
	}{
		"experiments=" + itoa(a):          {400, "choose at least two experiments"},
		"":                                {400, "choose at least two experiments"},
		"experiments=" + itoa(a) + ",x1":  {400, `&#34;x1&#34; is not an ID`},
		"experiments=" + itoa(a) + ",999": {404, "experiment 999"},
	} {
		resp, body := get(t, c, m, "/compare?"+q)
		if resp.StatusCode != want.code || !strings.Contains(body, want.says) {
			t.Errorf("compare?%s: %d, want %d saying %q\n%s", q, resp.StatusCode, want.code, want.says, body)
		}
	}

	resp, body := post(t, c, m, "/compare/tensorboard", url.Values{"experiments": {itoa(a), itoa(b)}})
	loc := regexp.MustCompile(`^/tasks/(tensorboard-\d+)$`).FindStringSubmatch(resp.Header.Get("Location"))
	if resp.StatusCode != 303 || loc == nil {
		t.Fatalf("launch: %d %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	var tr resolute.TaskResponse
	api(t, m, "GET", "/api/v1/tasks/"+loc[1], admin, "", &tr)
	if len(tr.Task.ExperimentIDs) != 2 || tr.Task.ExperimentIDs[0] != a || tr.Task.ExperimentIDs[1] != b {
		t.Fatalf("the launched TensorBoard %+v", tr.Task)
	}
	if resp, _ := post(t, c, m, "/compare/tensorboard", url.Values{"experiments": {itoa(a), "999"}}); resp.StatusCode != 404 {
		t.Fatalf("an unknown experiment: %d", resp.StatusCode)
	}

	// Trials compare by their own hyperparameters.
	var trials []string
	for i, e := range []int64{a, b} {
		tr, err := m.DB.CreateTrial(t.Context(), e, 100+i, resolute.StateActive, []byte(`{"lr":0.`+strings.Repeat("0", i)+`1,"batch_size":32}`), 1)
		if err != nil {
			t.Fatal(err)
		}
		trials = append(trials, itoa(tr.ID))
	}
	resp, body = get(t, c, m, "/compare?trials="+strings.Join(trials, ","))
	if resp.StatusCode != 200 {
		t.Fatalf("compare trials: %d\n%s", resp.StatusCode, body)
	}
	wants(t, "the trials compared", body, `href="/trials/`+trials[1]+`"`, `id="config-hyperparameters.lr"`, ">alpha<",
		`name="trials" value="`+trials[0]+`"`)
	if strings.Contains(body, `id="config-hyperparameters.batch_size"`) || strings.Contains(body, `id="compare-trials"`) {
		t.Errorf("an equal hyperparameter or the trials count is shown:\n%s", body)
	}
	if resp, body := get(t, c, m, "/compare?trials="+trials[0]+",999"); resp.StatusCode != 404 || !strings.Contains(body, "trial 999") {
		t.Errorf("an unknown trial: %d\n%s", resp.StatusCode, body)
	}
	resp, body = post(t, c, m, "/compare/tensorboard", url.Values{"trials": trials})
	loc = regexp.MustCompile(`^/tasks/(tensorboard-\d+)$`).FindStringSubmatch(resp.Header.Get("Location"))
	if resp.StatusCode != 303 || loc == nil {
		t.Fatalf("launch over trials: %d %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	var overTrials resolute.TaskResponse
	api(t, m, "GET", "/api/v1/tasks/"+loc[1], admin, "", &overTrials)
	if got := overTrials.Task; len(got.TrialIDs) != 2 || len(got.ExperimentIDs) != 0 || itoa(got.TrialIDs[1]) != trials[1] {
		t.Fatalf("the TensorBoard over trials %+v", got)
	}
}
