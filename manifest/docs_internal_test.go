package manifest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/stretchr/testify/require"
)

// referenceTables are the sections of docs/plugin-format.md generated from
// the front matter's and the tool file's declarations.
var referenceTables = map[string]string{
	"frontmatter":  frontMatterDecl.Table(),
	"access":       yamlx.Tables(accessDecl, campusDecl),
	"dataSources":  dataSourceDecl.Table(),
	"preferences":  preferenceDecl.Table(),
	"contributes":  yamlx.Tables(contributesDecl, widgetDecl, screenDecl, settingDecl, commandDecl),
	"i18n":         yamlx.Tables(i18nDecl.Fields[0].Type.(yamlx.Object).Decl, toolI18nDecl),
	"legacy":       legacyDecl.Table(),
	"defaultModes": modesDecl.Table(),
	"tool":         toolDecl.Table(),
}

// TestReferenceTablesCurrent: the key tables of docs/plugin-format.md are
// the declarations' (go test ./manifest -run TestReferenceTablesCurrent
// -update rewrites them).
func TestReferenceTablesCurrent(t *testing.T) {
	path := filepath.Join("..", "docs", "plugin-format.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(b)
	for name, table := range referenceTables {
		var ok bool
		doc, ok = yamlx.Between(doc, name, table)
		require.True(t, ok, "docs/plugin-format.md lacks the %s markers", name)
	}
	update := flag.Lookup("update").Value.String() == "true"
	require.NoError(t, yamlx.CheckFile(path, []byte(doc), update, "go test ./manifest -run TestReferenceTablesCurrent -update"))
}
