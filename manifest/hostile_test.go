package manifest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/dirhash"
)

const header = "---\nid: hostile\nname: x\ndescription: y\nversion: 1.0.0\n"

// parseQuick parses files and requires the result within a second (the
// issue's bound; the time is reported, not asserted as a benchmark).
func parseQuick(t *testing.T, files manifest.Files) string {
	t.Helper()
	start := time.Now()
	done := make(chan string, 1)
	go func() {
		_, l := manifest.Parse(files)
		done <- l.Error()
	}()
	select {
	case msg := <-done:
		t.Logf("rejected in %v", time.Since(start))
		return msg
	case <-time.After(5 * time.Second):
		t.Fatal("parse did not finish: a hostile document must fail fast")
	}
	return ""
}

func TestHostileHugeFile(t *testing.T) {
	dir := t.TempDir()
	big := header + "---\n" + strings.Repeat("x", 10<<20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "PLUGIN.md"), []byte(big), 0o644))
	start := time.Now()
	_, err := manifest.ReadDir(dir)
	require.Error(t, err)
	require.Contains(t, err.Error(), "more than the limit")
	require.Less(t, time.Since(start), time.Second)
	// In memory, too.
	msg := parseQuick(t, manifest.Files{"PLUGIN.md": []byte(big)})
	require.Contains(t, msg, "more than the limit")
}

func TestHostileBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + "]\n")
		prev = n
	}
	b.WriteString("---\n")
	msg := parseQuick(t, manifest.Files{"PLUGIN.md": []byte(b.String())})
	require.Contains(t, msg, "anchors (&a) are not allowed")
}

func TestHostileDeepNesting(t *testing.T) {
	for name, yaml := range map[string]string{
		"flow":  "deep: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n",
		"block": deepBlock(10000),
		"map":   "deep: " + strings.Repeat("{a: ", 10000) + "1" + strings.Repeat("}", 10000) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			msg := parseQuick(t, manifest.Files{"PLUGIN.md": []byte(header + yaml + "---\n")})
			require.Contains(t, msg, "PLUGIN.md:")
			require.True(t, strings.Contains(msg, "nest") || strings.Contains(msg, "more than the limit"), msg)
		})
	}
}

func deepBlock(n int) string {
	var b strings.Builder
	for i := 0; i < n && b.Len() < 60<<10; i++ {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	return b.String()
}

func TestHostileManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(header + "x:\n")
	for i := 0; b.Len() < 60<<10; i++ {
		b.WriteString("  k" + strings.Repeat("a", i%7) + ": 1\n")
	}
	msg := parseQuick(t, manifest.Files{"PLUGIN.md": []byte(b.String() + "---\n")})
	require.NotEmpty(t, msg)
}

func TestFileRules(t *testing.T) {
	for _, bad := range []string{"../x", "/abs", "a//b", ".git/config", "tools/.hidden", "GIT~1/x", ".GIT/x", "a\\b", "c:d", "a/./b",
		"tools/x\u200b.yaml", "a/b/c/d/e/f/g", strings.Repeat("x", 300)} {
		require.Error(t, manifest.CheckPath(bad), bad)
	}
	for _, good := range []string{"PLUGIN.md", "tools/crowd.yaml", "widgets/card.json", "tests/a.yaml", "README.md"} {
		require.NoError(t, manifest.CheckPath(good), good)
	}
	err := manifest.Files{"PLUGIN.md": nil, "tools/A.yaml": nil, "tools/a.yaml": nil}.Check()
	require.ErrorContains(t, err, "differ only in case")
	err = manifest.Files{"PLUGIN.md": nil, "caf\u00e9.md": nil, "cafe\u0301.md": nil}.Check()
	require.Error(t, err)
}

func TestReadDirRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "PLUGIN.md"), []byte(header+"---\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tools"), 0o755))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "tools", "x.yaml")))
	_, err := manifest.ReadDir(dir)
	require.ErrorContains(t, err, "symbolic link")
}

// TestHashMatchesDirhash: the document hash is dirhash's own result for a
// folder holding only the files that count.
func TestHashMatchesDirhash(t *testing.T) {
	src := "../testdata/skeleton"
	files, err := manifest.ReadDir(src)
	require.NoError(t, err)
	got, err := files.Hash()
	require.NoError(t, err)
	want, err := dirhash.HashDir(src, "", dirhash.Hash1)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.True(t, strings.HasPrefix(got, "h1:"))

	// Hidden files do not count: a copy with .git and .DS_Store hashes the same.
	dir := t.TempDir()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".DS_Store"), []byte("x"), 0o644))
	files2, err := manifest.ReadDir(dir)
	require.NoError(t, err)
	got2, err := files2.Hash()
	require.NoError(t, err)
	require.Equal(t, got, got2)
	// A changed byte changes the hash.
	files2["tools/free.yaml"] = append([]byte{}, files2["tools/free.yaml"]...)
	files2["tools/free.yaml"][0] ^= 1
	got3, _ := files2.Hash()
	require.NotEqual(t, got, got3)
}
