package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A single-file document saved with a byte-order mark is still a document
// when harness test is given several paths; a README beside it is not.
func TestLooksLikeDocumentWithByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"bom.md":    "\ufeff---\nid: x\n",
		"crlf.md":   "\ufeff---\r\nid: x\r\n",
		"plain.md":  "---\nid: x\n",
		"README.md": "# notes\n",
		"short.md":  "\ufeff--",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	for name, want := range map[string]bool{"bom.md": true, "crlf.md": true, "plain.md": true, "README.md": false, "short.md": false} {
		require.Equal(t, want, looksLikeDocument(filepath.Join(dir, name)), name)
	}
}

// harness test on a single file names it as given, as lint does.
func TestTestCommandSingleFileNames(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.md")
	text := "---\nid: sf\nname: S\ndescription: d\nversion: 1.0.0\n---\nx\n\n```yaml tool one\ndescription: one\neffect: read\nsteps:\n  - return: '1'\n```\n\n```yaml test t\ncases:\n  - tool: one\n    expect: {output: 2}\n```\n"
	require.NoError(t, os.WriteFile(doc, []byte(text), 0o644))
	code, out, _ := harness(t, nil, "test", doc)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "--- FAIL: doc.md:18:5: ")
	require.NotContains(t, out, "PLUGIN.md")

	require.NoError(t, os.WriteFile(doc, []byte(strings.Replace(text, "tool: one", "tool: onee", 1)), 0o644))
	code, out, _ = harness(t, nil, "test", doc)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "doc.md:18:11: ")
	require.NotContains(t, out, "PLUGIN.md")
}
