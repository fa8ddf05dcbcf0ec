package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium finds Debian's chromium (installed by .ci/run). Without it the
// browser test skips, except under CI, where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI must install chromium (.ci/run: apt-get install chromium)")
	}
	t.Skip("chromium is missing (apt-get install chromium, or run .ci/run once)")
	return ""
}

// The page's document: one read tool on the simulated campus's canteen
// service, with an enum, an integer and a boolean in its input.
const devPluginMD = `---
id: canteen-dev
name: 食堂 (dev)
description: How crowded the canteens are.
version: 0.1.0
requires: [campus-session]
access:
  campus:
    - service: canteen
      paths: [/api/crowd]
dataSources:
  busiest: {title: 最忙的食堂, tool: crowd, args: {order: busiest, limit: 3, openOnly: true}, ttlMs: 60000}
contributes:
  widgets:
    - {key: busiestCard, title: 人最多, dataSource: busiest, template: busiest}
---
Use crowd when the user asks where to eat.
`

const devCrowdTool = `title: Canteen crowds
description: People in each canteen now, quietest first.
effect: read
input:
  type: object
  properties:
    order: {type: string, enum: [quietest, busiest], description: "which come first"}
    limit: {type: integer, minimum: 1, maximum: 20, description: "how many canteens"}
    openOnly: {type: boolean, description: "leave out closed canteens"}
  required: [order]
steps:
  - request:
      service: canteen
      path: /api/crowd
    as: res
  - jq: '[$res.body.canteens[] | select(($input.openOnly // false | not) or .open) | {name, people: .current}]'
  - jq: 'sort_by(.people) | if $input.order == "busiest" then reverse else . end | .[:($input.limit // 8)]'
`

// The author's loop in a real browser: harness dev (built as the contract
// says) serves the page; the test fills the form, runs the tool and sees
// the result and the trace, takes the screenshot for docs/, edits the
// document on disk and sees the page reload with lint's problem at lint's
// position, and a request with a foreign Origin is refused.
func TestDevPageInBrowser(t *testing.T) {
	exe := chromium(t)
	dir := t.TempDir()
	doc := filepath.Join(dir, "canteen-dev")
	writeFiles(t, doc, map[string]string{"PLUGIN.md": devPluginMD, "tools/crowd.yaml": devCrowdTool,
		"widgets/busiest.json": `{"type": "list", "title": "人最多的食堂", "items": "${ . }", "item": {"title": "${ .name }", "value": "${ .people } 人"}}`})
	home := filepath.Join(dir, "home")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "dev", doc, "--campus", "--addr", "127.0.0.1:0")
	// The simulated campus's crowds follow its clock: breakfast in Beijing,
	// when six canteens are open and 佟园 and 新勺园 are closed.
	cmd.Env = append(os.Environ(), "HARNESS_HOME="+home, "NO_COLOR=1", "HARNESS_NOW=2026-12-01T23:42:00Z")
	cmd.Stderr = &testLog{t: t, prefix: "harness dev: "}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, out)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/[0-9a-f]{48}/`).FindString(line)
	require.NotEmpty(t, url, "harness dev printed %q", line)

	// A request with a foreign Origin, or a foreign Host (a rebound
	// name), is refused before anything else.
	for _, h := range []struct{ host, origin string }{{"", "http://attacker.example"}, {"attacker.example", ""}} {
		req, _ := http.NewRequest("POST", url+"api/run", strings.NewReader(`{"tool":"crowd","input":{"order":"quietest"}}`))
		req.Header.Set("Content-Type", "application/json")
		if h.origin != "" {
			req.Header.Set("Origin", h.origin)
		}
		if h.host != "" {
			req.Host = h.host + ":" + strings.Split(strings.TrimPrefix(url, "http://127.0.0.1:"), "/")[0]
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%+v", h)
	}

	bctx, bcancel := browser(t, ctx, exe)
	defer bcancel()
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err, sel)
		return v
	}
	require.NoError(t, chromedp.Do(bctx,
		chromedp.EmulateViewport(1400, 1000),
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`#tool-tabs button[data-tool="crowd"]`)),
	))
	assert.Contains(t, text(`#problems`), "No problems")
	// the form from the schema: an enum as a choice, an integer, a boolean
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SetValue(chromedp.ID("in-crowd-order"), `"busiest"`),
		chromedp.SetValue(chromedp.ID("in-crowd-limit"), "3"),
		chromedp.SetValue(chromedp.ID("in-crowd-openOnly"), "true"),
		chromedp.Click(chromedp.ID("run")),
		chromedp.WaitVisible(chromedp.CSS(`#trace li[data-kind="request"] .req`)),
	))
	result, trace := text(`#result`), text(`#trace`)
	var got []struct {
		Name   string
		People int
	}
	require.NoError(t, json.Unmarshal([]byte(result), &got), result)
	require.Len(t, got, 3, "limit 3: %s", result)
	assert.True(t, got[0].People >= got[1].People && got[1].People >= got[2].People, "busiest first: %s", result)
	assert.NotContains(t, result, "佟园", "closed canteens are left out")
	assert.Regexp(t, `step 1\s*request\s*tools/crowd\.yaml:12:5`, trace)
	assert.Regexp(t, `GET canteen /api/crowd → 200 http://127\.0\.0\.1:\d+/api/crowd`, trace, "the request as sent and its answer")
	assert.Regexp(t, `step 3\s*jq\s*tools/crowd\.yaml:17:5`, trace)
	assert.Regexp(t, `\d+(\.\d+)? ms`, trace)

	// the jq scratch pane, on the run's recorded answer, as you type
	require.NoError(t, chromedp.Do(bctx,
		chromedp.WaitReady(chromedp.CSS(`#scratch-source option:nth-child(2)`)),
		chromedp.SetValue(chromedp.ID("scratch-source"), "0"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`document.getElementById("scratch-source").dispatchEvent(new Event("change"))`)(ctx, tg)
			return err
		}),
		chromedp.SendKeys(chromedp.ID("scratch-expr"), `[.canteens[] | select(.open | not) | .name]`),
	))
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById("scratch-result").textContent.includes("佟园")`, chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "the scratch result: %s", text(`#scratch-result`))
	assert.Contains(t, text(`#scratch-result`), "新勺园")
	// the widget, rendered from its template with its data source's data
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(`[data-widget="busiestCard"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-widget="busiestCard"] .w-items li`)),
	))
	widget := text(`[data-widget="busiestCard"] .w-ui`)
	assert.Contains(t, widget, "人最多的食堂")
	assert.Equal(t, 3, strings.Count(widget, " 人"), widget)
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	// The screenshot is checked as a PNG on every run and written over
	// docs/dev-page.png only when asked (HARNESS_UPDATE_SCREENSHOT=1): a
	// test run leaves the checkout as it found it.
	png := pngOf(t, shot)
	if os.Getenv("HARNESS_UPDATE_SCREENSHOT") == "1" {
		require.NoError(t, os.WriteFile(filepath.Join("..", "docs", "dev-page.png"), png, 0o644))
	}

	// Edit the document on disk: the page reloads and shows lint's problem
	// at lint's own position.
	broken := strings.Replace(devCrowdTool, "sort_by(.people)", "sort_by(.people | $nope)", 1)
	require.NoError(t, os.WriteFile(filepath.Join(doc, "tools", "crowd.yaml"), []byte(broken), 0o644))
	lint := invocation{home: home, args: []string{"lint", doc}}.run(t)
	require.Equal(t, 1, lint.code, lint.stderr)
	want := regexp.MustCompile(`(?m)^(tools/crowd\.yaml:\d+:\d+): (.*)$`).FindStringSubmatch(lint.stderr)
	require.NotNil(t, want, lint.stderr)
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS(`#problems li.error a.pos`))))
	assert.Equal(t, want[1], text(`#problems li.error a.pos`), "the page shows lint's FILE:LINE:COL")
	assert.Contains(t, text(`#problems li.error`), want[2])
	assert.Equal(t, "invalid", text(`#doc-status`))
	assert.Contains(t, text(`#reloaded`), "reloaded")
	// the link opens the file at that line
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS(`#problems li.error a.pos`)),
		chromedp.WaitVisible(chromedp.CSS(`#viewer-text .ln.hit`)),
	))
	assert.Contains(t, text(`#viewer-text .ln.hit`), "$nope")
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.ID("viewer-close"))))

	// Fix it, run again (the form kept its values) and save the run as a
	// test case, which harness test then passes.
	require.NoError(t, os.WriteFile(filepath.Join(doc, "tools", "crowd.yaml"), []byte(devCrowdTool), 0o644))
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById("doc-status").textContent === "lint clean"`, chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "the page did not reload to lint clean")
	_, err = chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("run-status").textContent = ""`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.ID("run"))))
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById("run-status").textContent.startsWith("run ")`, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(bctx,
		chromedp.WaitVisible(chromedp.ID("save-button")),
		chromedp.SetValue(chromedp.ID("save-name"), "tests/busiest.yaml"),
		chromedp.Click(chromedp.ID("save-button")),
	))
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById("save-status").textContent !== ""`, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	assert.Contains(t, text(`#save-status`), "saved tests/busiest.yaml")
	saved, err := os.ReadFile(filepath.Join(doc, "tests", "busiest.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(saved), "order: busiest")
	test := invocation{home: home, args: []string{"test", "-v", doc}}.run(t)
	assert.Equal(t, 0, test.code, "harness test: %s %s", test.stdout, test.stderr)
	assert.Contains(t, test.stdout, "PASS: tests/busiest.yaml")
	// and the page offers the new case among the document's own
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById("files").textContent.includes("tests/busiest.yaml")`, chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.ID("run-tests"))))
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById("tests-meta").textContent.includes("passed")`, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	assert.Equal(t, "1 of 1 passed", text(`#tests-meta`))
}

// browser starts headless Chromium as the machine's notes say: no sandbox
// (root), no GPU, no QUIC, no background networking, a fresh profile.
func browser(t *testing.T, ctx context.Context, exe string) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	// The browser is started here, so that a start that fails (Chromium
	// now and then exits before it prints its DevTools address when the
	// machine is busy: "chrome failed to start") is retried, a few times,
	// rather than failing the page's test.
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
		bctx, bcancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
		if err = chromedp.Do(bctx); err == nil {
			return bctx, func() { bcancel(); acancel() }
		}
		bcancel()
		acancel()
		t.Logf("starting chromium, attempt %d: %v", attempt, err)
		if !strings.Contains(err.Error(), "chrome failed to start") {
			break
		}
	}
	require.NoError(t, err, "starting chromium")
	return nil, nil
}

// pngOf checks the screenshot is a PNG.
func pngOf(t *testing.T, b []byte) []byte {
	t.Helper()
	require.True(t, len(b) > 8 && string(b[1:4]) == "PNG", "the screenshot is not a PNG")
	return b
}
