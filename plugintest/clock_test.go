package plugintest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/plugintest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const todayTool = `description: Today's date in Beijing.
effect: read
steps:
  - return: '(now + 8*3600) | strftime("%Y-%m-%d")'
`

// TestCaseNow: a case's now: fixes jq's now for that case alone; a case
// without one gets the runner's clock (HARNESS_NOW in the CLI).
func TestCaseNow(t *testing.T) {
	files := manifest.Files{
		"PLUGIN.md":        []byte(demoPlugin),
		"tools/today.yaml": []byte(todayTool),
		"tests/today.yaml": []byte(`cases:
  - name: fixed
    tool: today
    now: 2026-04-27T23:30:00+08:00
    expect: {output: "2026-04-27"}
  - name: runner's clock
    tool: today
    expect: {output: "2031-01-02"}
  - name: fixed again
    tool: today
    now: 2026-12-31T16:30:00Z
    expect: {output: "2027-01-01"}
`)}
	at := time.Date(2031, 1, 2, 3, 0, 0, 0, time.UTC)
	rep := plugintest.RunFiles(context.Background(), files, plugintest.Options{Clock: func() time.Time { return at }})
	require.False(t, rep.Problems.HasErrors(), rep.Problems.Error())
	require.Len(t, rep.Cases, 3)
	for _, c := range rep.Cases {
		assert.Empty(t, c.Failures, c.Name)
	}

	// A case's now that is not a time is a problem at its position.
	files["tests/today.yaml"] = []byte("cases:\n  - tool: today\n    now: tomorrow\n    expect: {output: x}\n")
	rep = plugintest.RunFiles(context.Background(), files, plugintest.Options{})
	require.True(t, rep.Problems.HasErrors())
	assert.True(t, strings.Contains(rep.Problems.Error(), "tests/today.yaml:3:10"), rep.Problems.Error())
	assert.Contains(t, rep.Problems.Error(), "RFC 3339")
}
