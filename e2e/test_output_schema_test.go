package e2e

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTestChecksTheOutputSchema runs `harness test` on a document whose
// tool's result breaks the tool's output schema: the case fails in the
// text report, --json and --junit, with the schema's FILE:LINE:COL and the
// keywords that refused the result, and none of the result's text.
func TestTestChecksTheOutputSchema(t *testing.T) {
	home := t.TempDir()
	doc := writeFiles(t, filepath.Join(t.TempDir(), "doc"), map[string]string{
		"PLUGIN.md": "---\nid: schema-doc\nname: Schema\ndescription: A tool with an output schema.\nversion: 1.0.0\n---\nUse it.\n",
		"tools/count.yaml": "title: Count\ndescription: A count.\neffect: read\noutput:\n  type: object\n  properties:\n    count: {type: integer}\n  required: [count]\n" +
			"steps:\n  - return: '{count: \"SECRET-LOOKING TEXT\"}'\n",
		"tests/count.yaml": "cases:\n  - name: counts\n    tool: count\n    expect:\n      jq: ['.count | type == \"string\"']\n",
	})
	const want = "the result does not match the output schema of tool count (tools/count.yaml:5:3): refused by the schema's #/properties/count/type"

	r := harness(t, home, nil, "test", doc)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "--- FAIL: tests/count.yaml:2:5: counts (tool count, ")
	require.Contains(t, r.stdout, "    "+want+"\n")
	require.Contains(t, r.stdout, "FAIL schema-doc: 1 of 1 case failed")
	require.NotContains(t, r.stdout, "SECRET-LOOKING")

	junit := filepath.Join(t.TempDir(), "report.xml")
	r = harness(t, home, nil, "test", "--json", "--junit", junit, doc)
	require.Equal(t, 1, r.code, r.stderr)
	var rep struct {
		OK        bool
		Documents []struct {
			Cases []struct {
				Passed   bool
				Failures []string
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.False(t, rep.OK)
	require.Len(t, rep.Documents, 1)
	require.Len(t, rep.Documents[0].Cases, 1)
	require.False(t, rep.Documents[0].Cases[0].Passed)
	require.Equal(t, []string{want}, rep.Documents[0].Cases[0].Failures)
	require.NotContains(t, r.stdout, "SECRET-LOOKING")

	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var x struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &x), "%s", b)
	require.Equal(t, 1, x.Failures)
	require.Len(t, x.Suites, 1)
	require.Len(t, x.Suites[0].Cases, 1)
	f := x.Suites[0].Cases[0].Failure
	require.NotNil(t, f)
	require.Contains(t, f.Message+"\n"+f.Text, want)
	require.False(t, strings.Contains(string(b), "SECRET-LOOKING"), "%s", b)
}
