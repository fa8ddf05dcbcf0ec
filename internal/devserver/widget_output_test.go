package devserver_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A widget preview whose data source's result does not match the tool's
// output schema shows no widget: the error names the tool's FILE:LINE:COL
// and the schema's keyword; a result that matches renders as before.
func TestWidgetPreviewChecksTheOutputSchema(t *testing.T) {
	f := newFixture(t, nil)
	withOutput := func(balanceType string) {
		text := strings.Replace(balanceTool, "steps:\n", "output:\n  type: object\n  properties:\n    balance: {type: "+balanceType+"}\n  required: [balance]\nsteps:\n", 1)
		require.NoError(t, os.WriteFile(filepath.Join(f.dir, "tools/balance.yaml"), []byte(text), 0o644))
		require.True(t, f.srv.Check())
	}
	preview := func() (ui map[string]any, errText string) {
		code, body := f.post(t, "api/widget", `{"key":"balanceCard"}`)
		require.Equal(t, http.StatusOK, code, body)
		var wa struct {
			UI    map[string]any `json:"ui"`
			Error string         `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &wa))
		return wa.UI, wa.Error
	}

	withOutput("string")
	ui, errText := preview()
	assert.Nil(t, ui, "nothing is shown")
	assert.Contains(t, errText, "the result of wallet-dev.balance does not match its tool's output schema (tools/balance.yaml:1:1), refused by the schema's #/properties/balance/type: it is not shown")

	withOutput("integer")
	ui, errText = preview()
	assert.Empty(t, errText)
	assert.Equal(t, "1234 分", ui["value"])
}
