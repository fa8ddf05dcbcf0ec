package remote

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A remote server may show the token it was sent in a form of its own: a
// download link with "?access_token=" and the token URL-encoded, the
// Authorization header in base64 or hex in a debug answer, upper-cased.
// Each is a line of jq away from the token for the model, and from there
// to another plugin's input. The token is found in every form the proxy's
// redactor finds a credential in (proxy.Finder), in results and in the
// error a tool reports: for two random tokens every answer reads the same
// once each token is a marker.
func TestAServerEchoingItsTokenInAnyFormShowsOnlyTheMarker(t *testing.T) {
	forms := func(a string) string {
		tok := strings.TrimPrefix(a, "Bearer ")
		return strings.Join([]string{
			"raw " + tok,
			"link https://files.example/d?access_token=" + url.QueryEscape(tok),
			"path /d/" + url.PathEscape(tok),
			"b64 " + base64.StdEncoding.EncodeToString([]byte(a)),
			"hex " + hex.EncodeToString([]byte(tok)),
			"upper " + strings.ToUpper(tok),
		}, "\n")
	}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		a := r.Header.Get("Authorization")
		srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "peek", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult(forms(a)), nil
			})
		srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res := textResult("denied: " + forms(a))
				res.IsError = true
				return res, nil
			})
		return srv
	}, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	observe := func(token string) string {
		c := Conn{URL: ts.URL, Token: token}
		var b strings.Builder
		for _, name := range []string{"peek", "fail"} {
			d, err := Call(context.Background(), c, name, nil)
			j, _ := json.Marshal(d)
			b.WriteString(name + ": " + string(j) + "\n")
			if err != nil {
				b.WriteString("error: " + err.Error() + "\n")
			}
		}
		out := b.String()
		assert.NotContains(t, out, token)
		return strings.ReplaceAll(out, token, "<TOKEN>")
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/="
	rng := rand.New(rand.NewPCG(5, 6))
	draw := func() string {
		b := make([]byte, 40)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		b[0], b[1] = 'a', '+' // a letter, and a byte URL escaping changes
		return string(b)
	}
	a, z := draw(), draw()
	oa, oz := observe(a), observe(z)
	require.Contains(t, oa, "[redacted]")
	assert.Equal(t, oa, oz)
}
