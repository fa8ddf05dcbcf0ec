package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLintSteps is the golden test of step diagnostics through harness lint.
func TestLintSteps(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "lint_steps.txtar"))
	require.NoError(t, err)
	dir := t.TempDir()
	var want string
	for _, f := range ar.Files {
		if f.Name == "want" {
			want = string(f.Data)
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, f.Data, 0o644))
	}
	code, out, errs := runCLI(t, nil, "lint", dir)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, want, errs)
}

// TestLintSkeleton: the contract's skeleton stays valid. Its only output is
// the warnings for the access it declares and no step uses (the web origin
// and the kv ability): it declares them to show the format.
func TestLintSkeleton(t *testing.T) {
	code, _, errs := runCLI(t, nil, "lint", skeletonPath())
	assert.Equal(t, 0, code, errs)
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		assert.Contains(t, line, ": warning: access.", "only the unused-access warnings: %s", errs)
	}
	assert.Contains(t, errs, "access.web declares https://news.example.edu.cn, but no step sends a request to it")
	assert.Contains(t, errs, "access.abilities declares kv, but no step uses it")
}

// TestLintServiceAuthHeader: a header of a built-in service's session is refused.
func TestLintServiceAuthHeader(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md": "---\nid: a\nname: A\ndescription: A.\nversion: 1.0.0\naccess:\n  campus: [" + builtinWithHeader(t) + "]\n---\nI.\n",
		"tools/x.yaml": "description: X.\neffect: read\nsteps:\n  - request:\n      service: " + builtinWithHeader(t) +
			"\n      path: /x\n      headers:\n        " + builtinHeader(t) + ": v\n",
	})
	code, _, errs := runCLI(t, nil, "lint", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "tools/x.yaml:8:9: header "+builtinHeader(t)+" carries the "+builtinWithHeader(t)+" session")
}

// TestLintLinesAreTerminalSafe: a message that quotes the document (a CSS
// selector's parse error) carries no escape sequence to the terminal, and
// each problem stays one FILE:LINE:COL line.
func TestLintLinesAreTerminalSafe(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":    "---\nid: a\nname: A\ndescription: A.\nversion: 1.0.0\n---\nI.\n",
		"tools/x.yaml": "description: X.\neffect: read\nsteps:\n  - html:\n      select: \"\\e]0;owned\\a\\e[34m[\"\n",
	})
	code, out, errs := runCLI(t, nil, "lint", dir)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.NotContains(t, errs, "\x1b")
	assert.NotContains(t, errs, "\a")
	lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
	require.NotEmpty(t, lines)
	for _, ln := range lines {
		assert.Regexp(t, `^tools/x\.yaml:\d+:\d+: `, ln)
	}
}

// TestLintWarnsEffectiveWrite: a read tool that sends an unsafe method
// (outside a query endpoint) is valid, with a warning per request that
// says it will be treated as write.
func TestLintWarnsEffectiveWrite(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md": "---\nid: a\nname: A\ndescription: A.\nversion: 1.0.0\naccess:\n  campus: [card, portal]\n  web: [https://news.example.org]\n---\nI.\n",
		"tools/x.yaml": "description: X.\neffect: read\nsteps:\n  - request:\n      service: card\n      path: /x\n      method: POST\n      json: {}\n" +
			"  - request: {url: 'https://news.example.org/a', method: DELETE}\n" +
			"  - request: {service: portal, path: /portal2017/notice/retrAllSchoolNotice.do, method: POST, form: {a: b}}\ntitle: X\n",
		"tools/w.yaml": "description: W.\neffect: write\nsteps:\n  - request: {service: card, path: /x, method: POST, json: {}}\ntitle: W\n",
	})
	code, _, errs := runCLI(t, nil, "lint", dir)
	assert.Equal(t, 0, code, errs)
	assert.Equal(t, "tools/x.yaml:1:1: warning: tool x declares effect read but step at tools/x.yaml:7:15 sends POST to card /x; it will be treated as write\n"+
		"tools/x.yaml:1:1: warning: tool x declares effect read but step at tools/x.yaml:9:58 sends DELETE to https://news.example.org; it will be treated as write\n", errs)
}
