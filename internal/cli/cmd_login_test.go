package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// login refuses what it cannot do before asking anything, with exit 1 as
// the contract says; logout on an empty home forgets nothing.
func TestLoginRefusalsAndEmptyLogout(t *testing.T) {
	env := map[string]string{"HARNESS_HOME": t.TempDir()}
	code, _, errs := runCLI(t, env, "login", "nosuch")
	require.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, `no login is known for service "nosuch"`)
	assert.NotContains(t, errs, "Password")

	code, _, errs = runCLI(t, env, "login", "--user", "2100012345", "--ca", "x.pem", "portal")
	require.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "--resolve")

	// stdin ends before the password: a failure, nothing stored.
	code, _, errs = runCLI(t, env, "login", "--user", "2100012345", "portal")
	require.Equal(t, ExitFailed, code)
	assert.Contains(t, errs, "stdin ended")
	_, err := os.Stat(filepath.Join(env["HARNESS_HOME"], "keystore.json"))
	assert.True(t, os.IsNotExist(err), "nothing is written")

	code, out, _ := runCLI(t, env, "logout")
	require.Equal(t, 0, code)
	assert.Equal(t, "no session to forget\n", out)
}

// The prompter reads one line per answer, a bounded one.
func TestPrompterLines(t *testing.T) {
	app := &App{Stdin: strings.NewReader("pass word \r\n123456\n" + strings.Repeat("x", 5000) + "\n"), Stderr: &strings.Builder{}}
	p := newPrompter(app)
	s, err := p.Secret("Password: ")
	require.NoError(t, err)
	assert.Equal(t, "pass word ", s, "a password keeps its spaces")
	s, err = p.Secret("code: ")
	require.NoError(t, err)
	assert.Equal(t, "123456", s)
	_, err = p.Secret("long: ")
	require.ErrorContains(t, err, "longer than")
	_, err = p.Secret("none: ")
	require.Error(t, err)
	assert.Equal(t, "Password: code: long: none: ", app.Stderr.(*strings.Builder).String())
}

func TestNormaliseTOTP(t *testing.T) {
	s, err := normaliseTOTP(" jbsw y3dp ehpk 3pxp ")
	require.NoError(t, err)
	assert.Equal(t, "JBSWY3DPEHPK3PXP", s)
	for _, bad := range []string{"", "short", "JBSWY3DPEHPK3PX1", strings.Repeat("A", 200)} {
		_, err := normaliseTOTP(bad)
		require.Error(t, err, bad)
		if bad != "" {
			assert.NotContains(t, err.Error(), bad)
		}
	}
}
