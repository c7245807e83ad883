package e2e

import (
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestAShellsTerminalRunsCommandsInTheBrowserForItsOwnerOnly(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	login, err := client.New(m.URL).Login(t.Context(), "admin", "")
	must(t, err)
	api := client.New(m.URL, client.WithToken(login.Token))
	_, err = api.CreateUser(t.Context(), resolute.UserSpec{Username: "bob"}, "s3cret-pw")
	must(t, err)
	shell, err := api.CreateTask(t.Context(), resolute.TaskShell, resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n"})
	must(t, err)
	for deadline := time.Now().Add(30 * time.Second); !shell.Ready; time.Sleep(100 * time.Millisecond) {
		shell, err = api.Task(t.Context(), resolute.TaskShell, shell.ID)
		must(t, err)
		if time.Now().After(deadline) {
			t.Fatalf("shell not ready: %+v", shell)
		}
	}

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("#user-menu")).ToBeVisible())
	_, err = page.Goto(m.URL + shell.ServiceAddress)
	must(t, err)
	must(t, expect(t, page.Locator("#terminal-task")).ToHaveText(shell.ID))
	must(t, expect(t, page.Locator("#terminal-status")).ToHaveText("connected"))
	must(t, expect(t, page.Locator("#new-terminal")).ToHaveAttribute("target", "_blank"))
	must(t, expect(t, page.Locator("#new-terminal")).ToHaveAttribute("href", shell.ServiceAddress))
	rows := page.Locator(".xterm-rows")
	must(t, expect(t, rows).ToContainText("$")) // the prompt: not root's
	must(t, page.Keyboard().Type("echo $((40+2))-done"))
	must(t, page.Keyboard().Press("Enter"))
	must(t, expect(t, rows).ToContainText("42-done"))
	if os.Geteuid() == 0 { // the master can switch users: admin's default uid, task_uid_base + 1
		must(t, page.Keyboard().Type("echo uid=$(id -u)"))
		must(t, page.Keyboard().Press("Enter"))
		must(t, expect(t, rows).ToContainText(fmt.Sprintf("uid=%d", m.TaskUIDBase+1)))
	}

	// The terminal follows the window: a narrower one has fewer columns.
	must(t, page.SetViewportSize(640, 480))
	time.Sleep(300 * time.Millisecond)
	must(t, page.Keyboard().Type("echo size=$(stty size | tr ' ' x)"))
	must(t, page.Keyboard().Press("Enter"))
	must(t, expect(t, rows).ToContainText(regexp.MustCompile(`size=\d+x[1-9]\d\D`))) // 150 columns before

	// Another user gets 403.
	other := browser.NewPage(t, 1280)
	signIn(t, other, m.URL, "bob", "s3cret-pw")
	must(t, expect(t, other.Locator("#user-menu")).ToBeVisible())
	resp, err := other.Goto(m.URL + shell.ServiceAddress)
	must(t, err)
	if resp.Status() != 403 {
		t.Fatalf("bob's terminal page: %d", resp.Status())
	}
}
