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
	"frontmatter":    frontMatterDecl.Table(),
	"access":         yamlx.Tables(accessDecl, campusDecl),
	"dataSources":    dataSourceDecl.Table(),
	"oldDataSources": oldDataSourceDecl.Table(),
	"preferences":    yamlx.Tables(preferenceDecl, optionDecl),
	"contributes":    yamlx.Tables(contributesDecl, widgetDecl, screenDecl, settingDecl, commandDecl),
	"i18n":           i18nTables(),
	"legacy":         legacyDecl.Table(),
	"defaultModes":   modesDecl.Table(),
	"tool":           toolDecl.Table(),
}

// i18nTables are i18n.en's table and its sections' items'.
func i18nTables() string {
	en := i18nDecl.Fields[0].Type.(yamlx.Object).Decl
	decls := []*yamlx.Decl{en}
	for _, f := range en.Fields {
		if c, ok := f.Type.(yamlx.Container); ok {
			decls = append(decls, c.Decls()...)
		}
	}
	return yamlx.Tables(decls...)
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
