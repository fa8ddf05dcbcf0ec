package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every HARNESS_ variable the command reads is named where users look:
// harness --help, the README's environment table and install.md's.
func TestEnvironmentVariablesDocumented(t *testing.T) {
	re := regexp.MustCompile(`Getenv\("(HARNESS_[A-Z_]+)"\)`)
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var vars []string
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(vars, m[1]) {
				vars = append(vars, m[1])
			}
		}
	}
	require.Subset(t, vars, []string{"HARNESS_HOME", "HARNESS_NOW", "HARNESS_GIT_BASE", "HARNESS_BUNDLED_UPDATES"})

	code, help, errs := runCLI(t, nil, "--help")
	require.Equal(t, 0, code, errs)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	install, err := os.ReadFile(filepath.Join("..", "..", "docs", "install.md"))
	require.NoError(t, err)
	row := func(doc []byte, v string) bool {
		return regexp.MustCompile("(?m)^\\| `" + v + "` \\| ").Match(doc)
	}
	for _, v := range vars {
		assert.Contains(t, help, "\n  "+v+" ", "harness --help's environment list names %s", v)
		assert.True(t, row(readme, v), "README.md's environment table has a row for %s", v)
		assert.True(t, row(install, v), "docs/install.md's environment table has a row for %s", v)
	}
}
