package cli

import (
	"os"
	"path/filepath"
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
