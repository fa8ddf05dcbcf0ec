package plugintest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/stretchr/testify/require"
)

// TestReferenceTablesCurrent: the test format's key tables in
// docs/plugin-format.md are the declarations' (go test ./plugintest -run
// TestReferenceTablesCurrent -update rewrites them).
func TestReferenceTablesCurrent(t *testing.T) {
	path := filepath.Join("..", "docs", "plugin-format.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(b)
	for name, table := range map[string]string{
		"test-file":     fileDecl.Table(),
		"test-case":     caseDecl.Table(),
		"test-exchange": yamlx.Tables(exchangeDecl, requestDecl, responseDecl),
		"test-expect":   yamlx.Tables(expectDecl, assertionDecl),
	} {
		var ok bool
		doc, ok = yamlx.Between(doc, name, table)
		require.True(t, ok, "docs/plugin-format.md lacks the %s markers", name)
	}
	require.NoError(t, yamlx.CheckFile(path, []byte(doc), *UpdateGolden, "go test ./plugintest -run TestReferenceTablesCurrent -update"))
}
