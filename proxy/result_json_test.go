package proxy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Item 7 of issue 12: a credential equal to a number in a result made the
// result (and so stdout) invalid JSON, the number replaced by a bare
// marker. Results are redacted value by value: the number becomes the
// marker string, and a key, a string or a part of one keeps the text JSON.
// Today's main fails every case but the string ones.
func TestResultWithCredentialNumberStaysJSON(t *testing.T) {
	const cred = "12345678901234567"
	files := manifest.Files{"PLUGIN.md": []byte("---\nid: t\nname: T\ndescription: A test document.\nversion: 1.0.0\n" +
		"access:\n  campus: [portal]\n---\nInstructions.\n")}
	cases := map[string]string{
		"number":  cred,
		"array":   "[" + cred + ", 1]",
		"key":     `{"` + cred + `": 1}`,
		"string":  `"x` + cred + `y"`,
		"nested":  `{"a": [{"b": ` + cred + `}], "c": "` + cred + `"}`,
		"longer":  "1" + cred,
		"negated": "-" + cred,
	}
	for name, jq := range cases {
		files["tools/"+name+".yaml"] = []byte("description: A test tool.\neffect: read\ninput:\n  type: object\nsteps:\n  - return: '" + jq + "'\n")
	}
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), "%s", l.Error())
	prog, l := interpreter.Compile(p)
	require.False(t, l.HasErrors(), "%s", l.Error())
	px := proxy.New(proxy.Config{Catalogue: proxy.Catalogue{"portal": {Name: "portal", Origin: "http://127.0.0.1:1",
		Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}}},
		Keystore: proxy.MemKeystore(proxy.Secrets{"portal": {Cookies: map[string]string{"JSESSIONID": cred}}})})
	call := px.NewCall(p.ID, p.Access)
	want := map[string]string{
		"number":  `"[redacted]"`,
		"array":   `["[redacted]",1]`,
		"key":     `{"[redacted]":1}`,
		"string":  `"x[redacted]y"`,
		"nested":  `{"a":[{"b":"[redacted]"}],"c":"[redacted]"}`,
		"longer":  `"1[redacted]"`,
		"negated": `"-[redacted]"`,
	}
	for name := range cases {
		res, err := prog.Run(context.Background(), name, map[string]any{}, interpreter.WithRedact(call.Redact))
		require.NoError(t, err, name)
		out := call.Redact(string(res.JSON)) // as harness run writes it
		assert.True(t, json.Valid([]byte(out)), "%s: %s", name, out)
		assert.JSONEq(t, want[name], out, name)
	}
}
