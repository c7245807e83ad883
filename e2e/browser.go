// Package e2e holds browser tests (playwright-go driving Debian's Chromium)
// and whole-system tests. The helpers here start a browser the way this
// machine allows: the Playwright driver from npm, no browser download.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Browser is a running Chromium for one test binary.
type Browser struct {
	pw      *playwright.Playwright
	browser playwright.Browser
}

// StartBrowser starts Chromium headless. It fails (not skips) when the
// driver or Chromium is missing, naming the fix: `make test` installs both.
func StartBrowser() (*Browser, error) {
	if os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		out, err := exec.Command("../scripts/playwright-driver.sh").Output()
		if err != nil {
			return nil, err
		}
		os.Setenv("PLAYWRIGHT_DRIVER_PATH", strings.TrimSpace(string(out)))
	}
	if os.Getenv("PLAYWRIGHT_NODEJS_PATH") == "" {
		if node, err := exec.LookPath("node"); err == nil {
			os.Setenv("PLAYWRIGHT_NODEJS_PATH", node)
		}
	}
	pw, err := playwright.Run(&playwright.RunOptions{SkipInstallBrowsers: true, Verbose: false})
	if err != nil {
		return nil, wrap("start the Playwright driver (run `make test`, which installs it)", err)
	}
	b, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(chromiumPath()),
		Headless:       playwright.Bool(true),
		Args: []string{"--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"},
	})
	if err != nil {
		pw.Stop()
		return nil, wrap("launch Chromium (apt-get install chromium; `make test` does it)", err)
	}
	return &Browser{pw: pw, browser: b}, nil
}

func chromiumPath() string {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// Stop closes the browser and the driver.
func (b *Browser) Stop() {
	b.browser.Close()
	b.pw.Stop()
}

// NewPage opens a page in a fresh context (its own cookies) of the given
// width; a failed test leaves a screenshot in e2e/screenshots/.
func (b *Browser) NewPage(t *testing.T, width int) playwright.Page {
	t.Helper()
	ctx, err := b.browser.NewContext(playwright.BrowserNewContextOptions{
		Viewport: &playwright.Size{Width: width, Height: 900},
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(10000)
	t.Cleanup(func() {
		if t.Failed() {
			os.MkdirAll("screenshots", 0o755)
			name := filepath.Join("screenshots", strings.ReplaceAll(t.Name(), "/", "_")+".png")
			page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(name), FullPage: playwright.Bool(true)})
			t.Logf("screenshot: e2e/%s", name)
		}
		ctx.Close()
	})
	return page
}

type wrapped struct {
	what string
	err  error
}

func (w wrapped) Error() string { return w.what + ": " + w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

func wrap(what string, err error) error { return wrapped{what, err} }

// navLink is the main navigation's link named name (the breadcrumbs may
// hold a link of the same name).
func navLink(page playwright.Page, name string) playwright.Locator {
	return page.GetByRole("navigation", playwright.PageGetByRoleOptions{Name: "Main"}).
		GetByRole("link", playwright.LocatorGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
}
