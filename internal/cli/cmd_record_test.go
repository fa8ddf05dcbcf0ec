package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const recDoc = `---
id: rec
name: rec
description: For the record command's tests.
version: 1.0.0
requires: [campus-session]
access:
  campus: [card]
---
Tools for tests.
`

// The record command's refusals: each with its exit code, nothing written.
func TestRecordRefusals(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md": recDoc,
		"tools/card.yaml": "description: The card.\neffect: read\nsteps:\n" +
			"  - request: {service: card, path: /berserker-app/ykt/tsm/queryCard}\n  - return: '{status: .status}'\n",
		"tools/where.yaml": "description: Where the card answered from.\neffect: read\nsteps:\n" +
			"  - request: {service: card, path: /berserker-app/ykt/tsm/queryCard}\n  - return: '{url: .url}'\n",
		"tools/typed.yaml": "description: A count that is text.\neffect: read\noutput: {type: object, properties: {n: {type: integer}}}\nsteps:\n" +
			"  - request: {service: card, path: /berserker-app/ykt/tsm/queryCard}\n  - return: '{n: (.status | tostring)}'\n",
		"tools/mine.yaml": "description: Only the user.\neffect: read\nuserOnly: true\nsteps:\n  - return: '1'\n",
	})
	single := filepath.Join(t.TempDir(), "one.md")
	require.NoError(t, os.WriteFile(single, []byte(recDoc+"\n```yaml tool card\ndescription: x\neffect: read\nsteps:\n  - return: '1'\n```\n"), 0o644))
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"record", dir}, 2, "record needs PATH"},
		{[]string{"record", filepath.Join(dir, "nowhere"), "card"}, 2, "needs a local document"},
		{[]string{"record", dir, "crad", "--campus"}, 2, `document rec has no tool "crad"`},
		{[]string{"record", single, "card", "--campus"}, 2, "single-file document"},
		{[]string{"record", dir, "card", "--campus", "-o", "tests/x.json"}, 2, "a test file is NAME.yaml"},
		{[]string{"record", dir, "card", "--campus", "--scrub", "a"}, 2, "at least 2 characters"},
		{[]string{"record", dir, "card", "--campus", "--input", "[1]"}, 2, "--input must be a JSON object"},
		{[]string{"record", dir, "mine", "--actor", "agent"}, 3, "refused"},
		{[]string{"record", dir, "where", "--campus"}, 1, "does not pass when replayed, so nothing was written"},
		{[]string{"record", dir, "typed", "--campus"}, 1, "the result does not match the output schema of tool typed (tools/typed.yaml:3:9): refused by the schema's #/properties/n/type; nothing was written"},
	} {
		code, out, errs := runCLI(t, env, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errs)
		assert.Contains(t, errs, tc.msg, "%v", tc.args)
		if code != 0 {
			assert.Empty(t, out, "%v", tc.args)
		}
	}
	_, err := os.Stat(filepath.Join(dir, "tests"))
	assert.True(t, os.IsNotExist(err), "nothing written")

	// A single-file document records with -o, beside it, and says where
	// the case must go to run.
	code, _, errs := runCLI(t, env, "record", single, "card", "--campus", "-o", "one-card.yaml")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "is not one of them")
	b, err := os.ReadFile(filepath.Join(filepath.Dir(single), "one-card.yaml"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "# Recorded by harness record"))
}

// An agent's call that asks, recorded with --approve, writes a case that
// says the user approved, so that it replays (it could not be recorded:
// the case lacked approve and its replay was refused).
func TestRecordApprovedAsk(t *testing.T) {
	dir := writeDoc(t, t.TempDir(), map[string]string{
		"PLUGIN.md":       recDoc,
		"tools/note.yaml": "title: 记下\ndescription: Notes a thing.\neffect: write\nsteps:\n  - return: '{noted: true, grant: $grant}'\n",
	})
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	code, _, errs := runCLI(t, env, "record", dir, "note", "--actor", "agent")
	assert.Equal(t, 3, code, "without --approve the ask is refused: %s", errs)
	code, _, errs = runCLI(t, env, "record", dir, "note", "--actor", "agent", "--approve")
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile(filepath.Join(dir, "tests", "note.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "approve: true")
	assert.Contains(t, string(b), "grant: once")
	code, out, errs := runCLI(t, env, "test", dir)
	assert.Equal(t, 0, code, "the recorded case replays: %s%s", out, errs)
}
