package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/simcampus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func harness(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func officialDoc(id string) string { return filepath.Join("..", "..", "plugins-official", id) }

var officialIDs = []string{"campus-events", "canteen", "classrooms", "grades", "notices", "shuttle", "wallet"}

func TestTestCommandOfficialDocuments(t *testing.T) {
	// As a shell expands plugins-official/*: the README and Go files beside
	// the documents are passed over.
	all, err := filepath.Glob(filepath.Join("..", "..", "plugins-official", "*"))
	require.NoError(t, err)
	code, out, errs := harness(t, nil, append([]string{"test"}, all...)...)
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "skip "+filepath.Join("..", "..", "plugins-official", "README.md")+": not a plugin document")
	for _, id := range officialIDs {
		assert.Contains(t, out, "ok   "+id+": ")
	}
	assert.NotContains(t, out, "FAIL")
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	}))
}

// countCases counts the cases of one test file of a document (its "  - name:" lines), so
// the expected totals follow the document as cases are added.
func countCases(t *testing.T, dir, file string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tests", file))
	require.NoError(t, err)
	n := bytes.Count(b, []byte("\n  - name: "))
	require.NotZero(t, n)
	return n
}

func TestTestCommandFailsAndFilters(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, officialDoc("wallet"), dir)
	p := filepath.Join(dir, "tests", "balance.yaml")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte("balanceYuan: 123.45"), []byte("balanceYuan: 123.4"), 1), 0o644))

	code, out, _ := harness(t, nil, "test", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "--- FAIL: tests/balance.yaml:6:5: balance, today's spending and limit (tool cardBalance")
	assert.Contains(t, out, `-   "balanceYuan": 123.4,`)
	assert.Contains(t, out, `+   "balanceYuan": 123.45,`)
	assert.Contains(t, out, fmt.Sprintf("FAIL wallet: 1 of %d cases failed", countCases(t, dir, "balance.yaml")+countCases(t, dir, "transactions.yaml")))

	code, out, _ = harness(t, nil, "test", "-v", "--run", "transactions/", dir)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, fmt.Sprintf("ok   wallet: %d cases passed", countCases(t, dir, "transactions.yaml")))
	assert.Contains(t, out, "--- PASS: tests/transactions.yaml:7:5: spending of one day")

	code, _, errs := harness(t, nil, "test", "--run", "(", dir)
	assert.Equal(t, ExitUsage, code, errs)
	code, _, _ = harness(t, nil, "test", filepath.Join(dir, "missing"))
	assert.Equal(t, 1, code)
}

// campusFor starts the simulated campus at a fixed time and writes its
// services and secrets files.
func campusFor(t *testing.T, opts ...simcampus.Option) (services, secrets string) {
	t.Helper()
	now := time.Date(2026, 4, 27, 20, 0, 0, 0, time.FixedZone("CST", 8*3600)) // a Monday evening
	c, err := simcampus.Start(append([]simcampus.Option{simcampus.WithClock(func() time.Time { return now })}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	dir := t.TempDir()
	services, secrets = filepath.Join(dir, "services.yaml"), filepath.Join(dir, "secrets.yaml")
	require.NoError(t, os.WriteFile(services, c.ServicesYAML(), 0o600))
	require.NoError(t, os.WriteFile(secrets, c.SecretsYAML(), 0o600))
	return services, secrets
}

// The official documents run end to end on the simulated campus through
// `harness run --services --secrets`: real loopback servers that check the
// session as the real services do.
func TestOfficialDocumentsOnSimulatedCampus(t *testing.T) {
	services, secrets := campusFor(t)
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	run := func(id, tool, input string, extra ...string) (int, string, string) {
		args := append([]string{"run", officialDoc(id), tool, "--input", input, "--services", services, "--secrets", secrets}, extra...)
		return harness(t, env, args...)
	}

	// The card fixture's ledger up to 20:00 today: 8650 fen opening balance,
	// then the records of fixtures/card/turnover.json.tmpl; today 4.50 + 12.50
	// + 6.00 yuan spent.
	code, out, errs := run("wallet", "cardBalance", "{}")
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"balanceYuan":326.7,"todaySpentYuan":23,"dailyLimitYuan":300,"lost":false,"frozen":false,"expiresOn":"2028-07-31"}`, out)

	code, out, errs = run("wallet", "transactions", `{"from":"2026-04-27","to":"2026-04-27","kind":"spending"}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"pageSpentYuan":23`)
	assert.Contains(t, out, `{"amountYuan":-6,"balanceAfterYuan":326.7,"kind":"消费","place":"燕南食堂","time":"2026-04-27 17:48"}`)

	code, out, errs = run("shuttle", "myBookings", "{}")
	require.Equal(t, 0, code, errs)
	// The seeded booking is tomorrow's 12:10 run, not the 07:30 that is the first
	// bookable run every evening (simcampus fixtures/wproc/bookings.json.tmpl).
	assert.Contains(t, out, `"time":"2026-04-28 12:10"`)

	code, out, errs = run("shuttle", "departures", `{"routeId":7,"at":"2026-04-27 20:00","limit":2}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `{"minutesUntil":80,`)
	assert.Contains(t, out, `"time":"2026-04-27 21:20"`)

	code, out, errs = run("grades", "grades", `{"term":"24-25-2"}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"name":"示例线性代数"`)

	code, out, errs = run("notices", "deanNotices", `{"limit":1}`)
	require.Equal(t, 0, code, errs)
	assert.JSONEq(t, `{"notices":[{"id":"1321","title":"关于2026年春季学期选课安排的通知","date":"2026-04-27"}]}`, out)

	code, out, errs = run("canteen", "crowd", `{"canteen":"家园"}`)
	require.Equal(t, 0, code, errs)
	// 家园 closes from 20:00 to 20:30 (the synthetic fixture's hours).
	assert.JSONEq(t, `{"canteens":[{"crowdPercent":0,"id":"jiayuan","level":"关门","name":"家园","open":false,"people":0,"seats":900}],"favourite":null,"updated":"2026-04-27 20:00"}`, out)

	code, out, errs = run("campus-events", "addReminder", `{"title":"示例音乐会","start":"2026-04-28 19:30"}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"remindAt":"2026-04-28 19:00"`)
	code, out, errs = run("campus-events", "reminders", "{}")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"title":"示例音乐会"`, "the reminder was stored in the home folder")

	for _, sec := range []string{secrets, services} {
		b, err := os.ReadFile(sec)
		require.NoError(t, err)
		assert.NotEmpty(t, b)
	}
}

func TestOfficialDocumentsSessionStates(t *testing.T) {
	services, secrets := campusFor(t, simcampus.WithExpired(simcampus.Card), simcampus.WithExpired(simcampus.Wproc),
		simcampus.WithVerification(simcampus.Treehole))
	run := func(id, tool, input string) (int, string, string) {
		return harness(t, nil, "run", officialDoc(id), tool, "--input", input, "--services", services, "--secrets", secrets)
	}
	code, out, errs := run("wallet", "cardBalance", "{}")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"status":"login_required"`)
	code, out, errs = run("shuttle", "departures", `{"at":"2026-04-27 20:00"}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"status":"login_required"`)
	code, out, errs = run("grades", "grades", "{}")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"status":"verification_required"`)
	code, out, errs = run("campus-events", "events", `{"from":"2026-04-27"}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"status":"verification_required"`)

	// The user verifies with the demo code; then the grades answer.
	code, out, errs = run("grades", "verifyGrades", `{"code":"`+simcampus.SMSDemoCode+`"}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"verified":true`)
	code, out, errs = run("grades", "grades", `{"limit":1}`)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"gpa":3.551`)
}

func TestLintReportsTestFileProblems(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, officialDoc("wallet"), dir)
	p := filepath.Join(dir, "tests", "transactions.yaml")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte("    expect:\n      error: is after"), []byte("    expct:\n      error: is after"), 1), 0o644))
	code, _, errs := harness(t, nil, "lint", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `tests/transactions.yaml:64:5: unknown key "expct" in case "dates in the wrong order fail before any request" (did you mean "expect"?)`)
}

// TestTestCommandClock: HARNESS_NOW is jq's now in a case without its own
// now:, so an author's date-dependent cases pass on any day.
func TestTestCommandClock(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":    "---\nid: today\nname: T\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/d.yaml": "description: d\neffect: read\nsteps:\n  - return: '(now + 8*3600) | strftime(\"%Y-%m-%d\")'\n",
		"tests/d.yaml": "cases:\n  - tool: d\n    expect: {output: \"2030-05-06\"}\n",
	})
	code, out, errs := runCLI(t, map[string]string{"HARNESS_NOW": "2030-05-06T09:00:00+08:00"}, "test", dir)
	require.Equal(t, 0, code, out+errs)
	code, out, _ = runCLI(t, map[string]string{"HARNESS_NOW": "2030-05-07T09:00:00+08:00"}, "test", dir)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "2030-05-07")
}
