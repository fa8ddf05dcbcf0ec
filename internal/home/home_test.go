package home

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDirPrecedence: --home, then HARNESS_HOME, then $XDG_DATA_HOME (only
// when absolute), then ~/.local/share.
func TestDirPrecedence(t *testing.T) {
	t.Setenv("HARNESS_HOME", "/tmp/from-env")
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg")
	t.Setenv("HOME", "/tmp/user")
	d, err := Dir("/tmp/flag")
	require.NoError(t, err)
	require.Equal(t, "/tmp/flag", d)
	d, err = Dir("")
	require.NoError(t, err)
	require.Equal(t, "/tmp/from-env", d)
	t.Setenv("HARNESS_HOME", "")
	d, err = Dir("")
	require.NoError(t, err)
	require.Equal(t, filepath.Join("/tmp/xdg", "pku-harness"), d)
	t.Setenv("XDG_DATA_HOME", "relative/xdg")
	d, err = Dir("")
	require.NoError(t, err)
	require.Equal(t, filepath.Join("/tmp/user", ".local", "share", "pku-harness"), d)
	rel, err := Dir("rel")
	require.NoError(t, err)
	require.True(t, filepath.IsAbs(rel), "a relative --home becomes absolute")
}
