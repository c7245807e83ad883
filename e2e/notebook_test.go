package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestACellRunsInARealNotebookThroughTheProxy opens Debian's Jupyter in
// Chromium on the task origin, by an old link to the master's /proxy/
// (which goes through the open route), and runs a cell that prints a
// value: on the one task origin, and on the notebook's own host.
func TestACellRunsInARealNotebookThroughTheProxy(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import notebook").Run() != nil {
		t.Skip("Debian's jupyter-notebook is not installed (make test installs it)")
	}
	t.Run("one task origin for all", func(t *testing.T) { runACell(t, handlerstest.Options{}, "notebook-cell") })
	t.Run("a host per task", func(t *testing.T) { runACell(t, handlerstest.Options{TaskHosts: true}, "notebook-cell-own-host") })
}

func runACell(t *testing.T, opts handlerstest.Options, shot string) {
	m := handlerstest.Start(t, opts)
	ctx := context.Background()
	admin, err := m.DB.UserByUsername(ctx, "admin")
	must(t, err)
	task, err := m.Tasks.Create(ctx, authz.User(admin.User), control.TaskRequest{Type: resolute.TaskNotebook, ConfigYAML: "resources: {slots: 0}\n"})
	must(t, err)
	deadline := time.Now().Add(60 * time.Second)
	for {
		task, err = m.DB.Task(ctx, task.ID)
		must(t, err)
		if task.Ready {
			break
		}
		if task.State == resolute.TaskTerminated || time.Now().After(deadline) {
			t.Fatalf("the notebook did not start: %+v", task)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A notebook with one cell, written through Jupyter's API with its token.
	nb := map[string]any{"type": "notebook", "content": map[string]any{
		"nbformat": 4, "nbformat_minor": 5, "metadata": map[string]any{},
		"cells": []any{map[string]any{"cell_type": "code", "source": "print(6 * 7)", "metadata": map[string]any{},
			"outputs": []any{}, "execution_count": nil, "id": "c1"}},
	}}
	body, _ := json.Marshal(nb)
	req, _ := http.NewRequest("PUT", m.TaskOrigin(task.ID)+"/proxy/"+task.ID+"/api/contents/answer.ipynb?token="+task.ServiceToken, bytes.NewReader(body))
	resp, err := (&http.Client{Transport: handlerstest.LocalhostTransport()}).Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 201 && resp.StatusCode != 200 {
		t.Fatalf("write the notebook: %d", resp.StatusCode)
	}

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err = page.Goto(m.URL + "/proxy/" + task.ID + "/notebooks/answer.ipynb")
	must(t, err)
	must(t, playwright.NewPlaywrightAssertions(15000).Page(page).ToHaveURL(m.TaskOrigin(task.ID)+"/proxy/"+task.ID+"/notebooks/answer.ipynb"))
	cell := page.Locator(".code_cell").First()
	must(t, cell.WaitFor())
	// Wait for the kernel, then run the cell.
	must(t, expect(t, page.Locator("#kernel_indicator_icon.kernel_idle_icon")).ToBeAttached(playwright.LocatorAssertionsToBeAttachedOptions{Timeout: playwright.Float(45000)}))
	must(t, cell.Locator(".CodeMirror").Click())
	must(t, page.Keyboard().Press("Shift+Enter"))
	must(t, playwright.NewPlaywrightAssertions(45000).Locator(cell.Locator(".output_subarea")).ToContainText("42"))
	screenshot(t, page, shot)
}
