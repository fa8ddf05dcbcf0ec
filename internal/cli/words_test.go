package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const coreDoc = `---
id: selfcore
name: 自封核心
description: A community document that says core.
version: 1.0.0
core: true
maxAgentSteps: 8
icon: mic
---
Use look.
`

const coreTool = "title: 看\ndescription: Looks.\neffect: read\nsteps:\n  - return: '1'\n"

// TestLintCoreOnCommunity: a community document's core: true is warned
// about at the key (it has no effect); an official one's is not.
func TestLintCoreOnCommunity(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{"PLUGIN.md": coreDoc, "tools/look.yaml": coreTool})
	code, _, stderr := runCLI(t, nil, "lint", dir)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "PLUGIN.md:6:1: warning: core: true has no effect on a community document")
	code, _, stderr = runCLI(t, nil, "lint", "--trust", "official", dir)
	assert.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "core: true")

	// the review sheet shows icon and maxAgentSteps
	code, stdout, stderr := runCLI(t, nil, "review", "--json", dir)
	require.Equal(t, 0, code, stderr)
	var sheet map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &sheet))
	assert.Equal(t, "mic", sheet["icon"])
	assert.Equal(t, float64(8), sheet["maxAgentSteps"])

	// installed, harness list --json shows them too
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	code, _, stderr = runCLI(t, env, "install", dir, "--yes")
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = runCLI(t, env, "list", "--json")
	require.Equal(t, 0, code, stderr)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &list))
	require.Len(t, list, 1)
	assert.Equal(t, "mic", list[0]["icon"])
	assert.Equal(t, float64(8), list[0]["maxAgentSteps"])
}

// TestLintOldSpellings: the old spellings lint (exit 0) with a warning at
// each, naming the new one.
func TestLintOldSpellings(t *testing.T) {
	doc := strings.Replace(coreDoc, "core: true\n", "dataSources:\n  - {name: s, tool: look, ttl: 60}\nlegacy: {ids: [old-core]}\n", 1)
	dir := writeDoc(t, t.TempDir(), map[string]string{"PLUGIN.md": doc, "tools/look.yaml": strings.TrimPrefix(coreTool, "title: 看\n")})
	code, _, stderr := runCLI(t, nil, "lint", dir)
	assert.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"PLUGIN.md:7:3: warning: dataSources as a list of {name, …} is the old spelling: write a mapping keyed by name (name: {…})",
		"PLUGIN.md:7:27: warning: a data source.ttl is the old spelling of ttlMs (ttl is in seconds): write ttlMs",
		"PLUGIN.md:8:10: warning: legacy.ids is the old spelling of pluginIds: write pluginIds",
		"tools/look.yaml:1:1: warning: tool look has no title: the reference requires one; people see the name instead",
	} {
		assert.Contains(t, stderr, want)
	}
}
