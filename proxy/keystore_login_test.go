package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The login section (user, name, TOTP secret) lives beside the sessions:
// it survives session changes, other processes' changes keep it, and the
// zero value removes it. The proxy never lists it as a service.
func TestKeystoreLoginSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keystore.json")
	ks, err := OpenKeystore(path)
	require.NoError(t, err)
	assert.Equal(t, LoginInfo{}, ks.Login())
	li := LoginInfo{User: "2100012345", Name: "张测试", TOTP: "JBSWY3DPEHPK3PXPJBSWY3DP"}
	require.NoError(t, ks.SetLogin(li))
	require.NoError(t, ks.Put("card", &ServiceSecrets{Headers: map[string]string{"synjones-auth": "bearer abcdefgh"}}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	other, err := OpenKeystore(path) // another process
	require.NoError(t, err)
	assert.Equal(t, li, other.Login())
	require.NoError(t, other.Update("card", map[string]string{"SESSION": "fresh-cookie"}))
	require.NoError(t, other.Delete("card"))
	assert.Equal(t, li, other.Login(), "session changes keep the login section")
	assert.Empty(t, other.Services())

	require.NoError(t, ks.Put("portal", &ServiceSecrets{Cookies: map[string]string{"JSESSIONID": "ABCDEF0123"}}))
	assert.Equal(t, []string{"portal"}, ks.Services(), "the other process's delete is kept; login is no service")
	var raw map[string]any
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &raw))
	assert.Equal(t, "2100012345", raw["login"].(map[string]any)["user"])

	require.NoError(t, ks.SetLogin(LoginInfo{User: "2100012345"}))
	again, err := OpenKeystore(path)
	require.NoError(t, err)
	assert.Equal(t, LoginInfo{User: "2100012345"}, again.Login())
	require.NoError(t, ks.SetLogin(LoginInfo{}))
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"login"`)

	require.Error(t, ks.SetLogin(LoginInfo{User: "a\nb"}))
	bad := filepath.Join(t.TempDir(), "keystore.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version":1,"services":{},"login":{"totp":"x\u0001y"}}`), 0o600))
	_, err = OpenKeystore(bad)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "x\x01y")
}

// The TOTP secret of the login section is never sent, attached or shown,
// and only the host's IAAA login reads it; were any path to carry it to
// a step (a campus page that echoes it, a value a step was given), it is
// redacted as every credential is.
func TestKeystoreTOTPSecretIsRedacted(t *testing.T) {
	const secret = "JBSWY3DPEHPK3PXPKRSXG5BAMFZW4ZLS"
	path := filepath.Join(t.TempDir(), "keystore.json")
	ks, err := OpenKeystore(path)
	require.NoError(t, err)
	require.NoError(t, ks.SetLogin(LoginInfo{User: "2100012345", TOTP: secret}))
	ks, err = OpenKeystore(path) // as the next command opens it
	require.NoError(t, err)
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "otp secret: "+secret+" ("+strings.ToLower(secret)+")")
	})
	cat := Catalogue{"portal": &Service{Name: "portal", Origin: srv.URL, Auth: Auth{Cookies: []string{"SESSION"}}}}
	require.NoError(t, cat.Validate())
	require.NoError(t, ks.Put("portal", &ServiceSecrets{Cookies: map[string]string{"SESSION": "0123456789abcdef"}}))
	call := New(Config{Catalogue: cat, Keystore: ks}).NewCall("d", access("portal"))
	assert.Equal(t, Marker, call.Redact(secret))
	resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: "/otp"})
	require.NoError(t, err)
	assert.NotContains(t, string(resp.Body), secret)
	assert.Equal(t, "otp secret: "+Marker+" ("+Marker+")", string(resp.Body), "in either letter case (base32)")
}
