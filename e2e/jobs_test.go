package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// rowOrder is the job ids of a pool's table, top first.
func rowOrder(t *testing.T, page playwright.Page, pool string) []string {
	t.Helper()
	ids, err := page.Locator("#queue-" + pool + " tr").EvaluateAll("rows => rows.map(r => r.dataset.jobId)")
	must(t, err)
	var out []string
	for _, id := range ids.([]any) {
		out = append(out, id.(string))
	}
	return out
}

// waitOrder waits until a pool's table shows the jobs in this order.
func waitOrder(t *testing.T, page playwright.Page, pool string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := rowOrder(t, page, pool); !slices.Equal(got, want); got = rowOrder(t, page, pool) {
		if time.Now().After(deadline) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dragAbove drags a row by its handle with the mouse and drops it on the
// upper part of another row, moving a few pixels at a time as a hand would:
// SortableJS ignores moves while a row is still sliding aside.
func dragAbove(t *testing.T, page playwright.Page, handle, target playwright.Locator) {
	t.Helper()
	// A live refresh may swap the table while we look: ask again until both
	// rows are on screen.
	box := func(l playwright.Locator) *playwright.Rect {
		deadline := time.Now().Add(10 * time.Second)
		for {
			must(t, l.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}))
			if b, err := l.BoundingBox(); err == nil && b != nil {
				return b
			}
			if time.Now().After(deadline) {
				t.Fatal("no bounding box for a row")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The rows are draggable once the page's script has made them so.
	must(t, page.Locator("#job-queue[data-sortable]").WaitFor())
	from, to := box(handle), box(target)
	x, y := from.X+from.Width/2, from.Y+from.Height/2
	mouse := page.Mouse()
	must(t, mouse.Move(x, y))
	must(t, mouse.Down())
	for end := to.Y + to.Height/4; y > end; y -= 4 {
		must(t, mouse.Move(x, y))
		time.Sleep(15 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	must(t, mouse.Move(x, to.Y+to.Height/4))
	must(t, mouse.Up())
}

func TestJobsAreReorderedByDraggingAndEveryViewerSeesIt(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	// Each needs two slots of a one-slot master: all three wait.
	var jobs []string
	for _, name := range []string{"first", "second", "third"} {
		e, err := m.Experiments.Create(t.Context(), authz.User(admin.User), control.CreateRequest{ConfigYAML: "name: " + name + "\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\nresources: {slots_per_trial: 2}\n"})
		must(t, err)
		jobs = append(jobs, control.JobID(e.ID))
	}
	a, b, c := jobs[0], jobs[1], jobs[2]

	// Someone else watches the queue from another browser.
	watcher := browser.NewPage(t, 1280)
	signIn(t, watcher, m.URL, "admin", "")
	must(t, expect(t, watcher.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err = watcher.Goto(m.URL + "/jobs")
	must(t, err)
	_, err = watcher.Evaluate("window.notReloaded = true")
	must(t, err)

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	must(t, navLink(page, "Job Queue").Click())
	must(t, expect(t, page.Locator("h1")).ToHaveText("Job Queue"))
	must(t, expect(t, page.Locator("#order-default")).ToContainText("lower number runs first"))
	must(t, expect(t, page.Locator("#reason-"+c)).ToContainText("can never run"))
	waitOrder(t, page, "default", a, b, c)
	screenshot(t, page, "job-queue")

	// A move the master refuses goes back, with its message.
	refuse := func(route playwright.Route) {
		route.Fulfill(playwright.RouteFulfillOptions{Status: playwright.Int(400), ContentType: playwright.String("application/json"),
			Body: `{"error":{"code":"invalid","message":"the queue is closed for the test"}}`})
	}
	must(t, page.Route("**/api/v1/job-queues", refuse))
	dragAbove(t, page, page.Locator("#job-"+c+" .drag-handle"), page.Locator("#job-"+a))
	must(t, expect(t, page.Locator("#queue-message")).ToHaveText("The queue is closed for the test."))
	waitOrder(t, page, "default", a, b, c)
	must(t, page.Unroute("**/api/v1/job-queues"))

	// Drag the third job above the first.
	dragAbove(t, page, page.Locator("#job-"+c+" .drag-handle"), page.Locator("#job-"+a))
	waitOrder(t, page, "default", c, a, b)
	must(t, expect(t, page.Locator("#job-"+c+" td.num").First()).ToHaveText("1")) // the table came back from the master
	must(t, expect(t, page.Locator("#queue-message")).ToBeHidden())

	// The watcher sees it without reloading.
	waitOrder(t, watcher, "default", c, a, b)
	still, err := watcher.Evaluate("window.notReloaded === true")
	must(t, err)
	if still != true {
		t.Fatal("the watcher's page reloaded to show the move")
	}

	// It persisted: after a reload, and in what `det job list --json` reads.
	_, err = page.Reload()
	must(t, err)
	waitOrder(t, page, "default", c, a, b)
	api := client.New(m.URL)
	login, err := api.Login(t.Context(), "admin", "")
	must(t, err)
	queue, err := client.New(m.URL, client.WithToken(login.Token)).JobQueue(t.Context(), "")
	must(t, err)
	var order []string
	for _, j := range queue {
		order = append(order, j.JobID)
	}
	if !slices.Equal(order, []string{c, a, b}) {
		t.Fatalf("the API's queue: %v", order)
	}

	// The buttons do the same without dragging: the watcher moves the first
	// job down, and the page follows.
	must(t, watcher.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Move " + c + " down"}).Click())
	must(t, expect(t, watcher.Locator("#flash")).ToContainText("Moved "+c+" behind "+a+"."))
	waitOrder(t, page, "default", a, c, b)
	screenshot(t, page, "job-queue-moved")

	// Both pages fit a phone: wide tables scroll inside their box.
	phone := browser.NewPage(t, 390)
	signIn(t, phone, m.URL, "admin", "")
	must(t, expect(t, phone.Locator("h1")).ToHaveText("Welcome, admin"))
	for _, path := range []string{"/jobs", "/cluster"} {
		_, err := phone.Goto(m.URL + path)
		must(t, err)
		must(t, expect(t, phone.Locator("#pool-default")).ToBeVisible())
		noWiderThan(t, phone, 390)
		screenshot(t, phone, "phone"+strings.ReplaceAll(path, "/", "-"))
	}
}

// TestATaskIsDraggedBetweenExperimentsAndAMoveKeepsPriorities: commands,
// notebooks and shells are jobs of the same queue as experiments; a drag
// moves one among them without touching any priority, and a move the
// master refuses shows its reason as a sentence.
func TestATaskIsDraggedBetweenExperimentsAndAMoveKeepsPriorities(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{Slots: 1})
	admin, err := m.DB.UserByUsername(t.Context(), "admin")
	must(t, err)
	me := authz.User(admin.User)
	// The running experiment holds the only slot: what follows waits.
	var jobs []string
	for _, name := range []string{"running", "waiting"} {
		e, err := m.Experiments.Create(t.Context(), me, control.CreateRequest{
			ConfigYAML: "name: " + name + "\nentrypoint: sleep 60\nsearcher: {name: single, metric: loss}\n"})
		must(t, err)
		jobs = append(jobs, control.JobID(e.ID))
	}
	cmd, err := m.Tasks.Create(t.Context(), me, control.TaskRequest{Type: resolute.TaskCommand, Entrypoint: []string{"sleep", "60"}})
	must(t, err)
	running, waiting := jobs[0], jobs[1]

	page := browser.NewPage(t, 1280)
	signIn(t, page, m.URL, "admin", "")
	must(t, expect(t, page.Locator("h1")).ToHaveText("Welcome, admin"))
	_, err = page.Goto(m.URL + "/jobs")
	must(t, err)
	waitOrder(t, page, "default", running, waiting, cmd.ID)

	// The command goes ahead of the waiting experiment, and back behind it.
	dragAbove(t, page, page.Locator("#job-"+cmd.ID+" .drag-handle"), page.Locator("#job-"+waiting))
	waitOrder(t, page, "default", running, cmd.ID, waiting)
	must(t, expect(t, page.Locator("#queue-message")).ToBeHidden())
	dragAbove(t, page, page.Locator("#job-"+waiting+" .drag-handle"), page.Locator("#job-"+cmd.ID))
	waitOrder(t, page, "default", running, waiting, cmd.ID)
	queue, err := m.Runner.Queue.Jobs(t.Context(), "")
	must(t, err)
	for _, j := range queue {
		if j.Priority != 42 {
			t.Errorf("%s has priority %d after the moves, want 42", j.JobID, j.Priority)
		}
	}

	// Next to a job of another priority the move changes nothing in a
	// priority pool: the master refuses, and the page says why in words.
	must(t, page.Locator("#job-"+waiting+` input[name="priority"]`).Fill("10"))
	must(t, page.Locator("#set-"+waiting).Click())
	must(t, expect(t, page.Locator("#flash")).ToContainText("Updated "+waiting+": priority 10."))
	dragAbove(t, page, page.Locator("#job-"+cmd.ID+" .drag-handle"), page.Locator("#job-"+waiting))
	must(t, expect(t, page.Locator("#queue-message")).ToHaveText("Job "+cmd.ID+" has priority 42 and "+waiting+
		` priority 10; pool "default" runs jobs by priority, so a move between them would change nothing: change `+cmd.ID+"'s priority instead."))
	waitOrder(t, page, "default", running, waiting, cmd.ID)
	if task, err := m.DB.Task(t.Context(), cmd.ID); err != nil || task.Priority != nil {
		t.Fatalf("the refused move set the command's priority: %v, %v", task.Priority, err)
	}
	screenshot(t, page, "job-queue-task-moves")
}
