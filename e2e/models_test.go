package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// finishedExperiment submits the stdlib example through the API, as `det
// experiment create` does, and waits for it to complete.
func finishedExperiment(t *testing.T, m *handlerstest.Master, api *client.Client) int64 {
	t.Helper()
	config, err := os.ReadFile("../examples/core-api-stdlib/const.yaml")
	must(t, err)
	code := tgzDir(t, "../examples/core-api-stdlib")
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: string(config),
		Overrides: []string{"hyperparameters.max_steps=100"}}}
	created, err := api.CreateExperiment(t.Context(), req, bytes.NewReader(code), int64(len(code)), nil)
	must(t, err)
	deadline := time.Now().Add(90 * time.Second)
	for {
		e, err := api.Experiment(t.Context(), created.Experiment.ID)
		must(t, err)
		if e.State == resolute.StateCompleted {
			return e.ID
		} else if resolute.Terminal(e.State) || time.Now().After(deadline) {
			t.Fatalf("experiment %d: %s", e.ID, e.State)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// bestCheckpoint is the completed checkpoint with the lowest
// validation_loss.
func bestCheckpoint(t *testing.T, list []resolute.Checkpoint) resolute.Checkpoint {
	t.Helper()
	var best resolute.Checkpoint
	bestLoss := 0.0
	for _, c := range list {
		var v struct {
			Avg map[string]float64 `json:"avg_metrics"`
		}
		json.Unmarshal(c.Validation, &v)
		loss, ok := v.Avg["validation_loss"]
		if ok && c.State == "COMPLETED" && (best.UUID == "" || loss < bestLoss) {
			best, bestLoss = c, loss
		}
	}
	if best.UUID == "" {
		t.Fatalf("no checkpoint with a validation_loss among %d", len(list))
	}
	return best
}

func TestACheckpointIsRegisteredAliasedAndDescribedInTheModelRegistry(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	login, err := client.New(m.URL).Login(t.Context(), "admin", "")
	must(t, err)
	api := client.New(m.URL, client.WithToken(login.Token))
	expID := finishedExperiment(t, m, api)
	exp := strconv.FormatInt(expID, 10)
	cps, err := api.ExperimentCheckpoints(t.Context(), expID)
	must(t, err)
	best := bestCheckpoint(t, cps)

	// Version 1: the best checkpoint, registered from the experiment's
	// checkpoint table into a new model.
	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err = page.Goto(m.URL + "/experiments/" + exp + "?tab=checkpoints")
	must(t, err)
	register := page.Locator("#register-" + best.UUID)
	must(t, register.Locator("summary").Click())
	must(t, register.GetByLabel("Or a new model named").Fill("digits"))
	screenshot(t, page, "model-register")
	must(t, register.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Register"}).Click())
	must(t, playwright.NewPlaywrightAssertions(10000).Page(page).ToHaveURL(regexp.MustCompile(`/models/digits/versions/1$`)))
	must(t, expect(t, page.Locator("#flash")).ToContainText("as version 1 of model digits"))
	must(t, expect(t, page.Locator("#version-uuid")).ToHaveText(best.UUID))

	// Version 2 arrives through the API, as `det model register-version`.
	// (Another kept checkpoint when there is one: the others were deleted
	// by the checkpoint policy, which runs after the experiment ends: read
	// the list again until it stops changing.)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		again, err := api.ExperimentCheckpoints(t.Context(), expID)
		must(t, err)
		if reflect.DeepEqual(again, cps) {
			break
		}
		cps = again
	}
	other := best
	for _, c := range cps {
		if c.State == "COMPLETED" && c.UUID != best.UUID {
			other = c
		}
	}
	v2, err := api.RegisterModelVersion(t.Context(), "digits", resolute.ModelVersionRequest{CheckpointUUID: other.UUID})
	must(t, err)
	if v2.Version != 2 {
		t.Fatalf("the API registered version %d", v2.Version)
	}

	// On the model page: production points at version 1, and the
	// description is edited in place.
	must(t, page.Locator("#version-model").Click())
	must(t, expect(t, page.Locator("h1")).ToContainText("digits"))
	must(t, expect(t, page.Locator("#versions tbody tr")).ToHaveCount(2))
	must(t, page.Locator("#f-alias").Fill("production"))
	_, err = page.Locator("#f-version").SelectOption(playwright.SelectOptionValues{Values: &[]string{"1"}})
	must(t, err)
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Set alias"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Alias production now points at version 1."))
	must(t, expect(t, page.Locator("#alias-production")).ToContainText("version 1"))
	must(t, expect(t, page.Locator("#version-1")).ToContainText("production"))

	edit := page.Locator("#edit-description")
	must(t, edit.Locator("summary").Click())
	must(t, edit.GetByLabel("Description").Fill("Digits MLP, the best of its run"))
	must(t, edit.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Save"}).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Saved model digits."))
	must(t, expect(t, page.Locator("#description-text")).ToHaveText("Digits MLP, the best of its run"))
	screenshot(t, page, "model")

	// The version page shows its metrics and where it came from.
	must(t, page.Locator("#version-1 a").First().Click())
	must(t, expect(t, page.Locator("#version-metrics")).ToContainText("validation_loss"))
	must(t, expect(t, page.Locator("#validation-history tbody tr")).Not().ToHaveCount(0))
	must(t, expect(t, page.Locator("#version-experiment")).ToHaveAttribute("href", "/experiments/"+exp))
	must(t, expect(t, page.Locator("#version-trial")).ToHaveAttribute("href", "/trials/"+strconv.FormatInt(best.TrialID, 10)))
	must(t, expect(t, page.Locator("#download-checkpoint")).ToHaveAttribute("href", "/api/v1/checkpoints/"+best.UUID+"/download"))
	screenshot(t, page, "model-version")
	must(t, page.Locator("#version-experiment").Click())
	must(t, page.Locator("#tab-checkpoints").Click())
	must(t, expect(t, page.Locator("#checkpoint-"+best.UUID)).ToContainText("digits v"))

	// The API agrees: NAME@production is version 1's checkpoint.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", m.URL+"/api/v1/models/digits@production", nil)
	req.Header.Set("Authorization", "Bearer "+login.Token)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var got resolute.ModelVersionResponse
	must(t, json.NewDecoder(resp.Body).Decode(&got))
	if resp.StatusCode != 200 || got.ModelVersion.Version != 1 || got.ModelVersion.CheckpointUUID != best.UUID {
		t.Fatalf("GET /api/v1/models/digits@production: %d %+v", resp.StatusCode, got.ModelVersion)
	}

	// A phone scrolls only inside tables.
	phone := browser.NewPage(t, 390)
	signIn(t, phone, m.URL, "admin", "")
	must(t, expect(t, phone.Locator("h1")).ToHaveText("Welcome, admin"))
	for _, path := range []string{"/models", "/models/digits", "/models/digits/versions/1", "/experiments/" + exp + "?tab=checkpoints"} {
		_, err := phone.Goto(m.URL + path)
		must(t, err)
		must(t, expect(t, phone.Locator("main h1")).ToBeVisible())
		noWiderThan(t, phone, 390)
		screenshot(t, phone, "phone"+regexp.MustCompile(`[/@]`).ReplaceAllString(path, "-"))
	}
}
