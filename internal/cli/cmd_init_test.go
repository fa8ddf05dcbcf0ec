package cli

import (
	"strings"
	"testing"

	"github.com/pkuinfo/harness/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every service of the built-in catalogue that a step may request gets a
// scaffold that lints clean and passes its tests, as a folder and as one
// file; the ones with a login signal get a login_required case.
func TestInitEveryCatalogueService(t *testing.T) {
	cat := proxy.Builtin()
	for _, name := range cat.Names() {
		sc, err := campusScaffold("x", name, cat)
		if name == "iaaa" {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err, name)
		for _, single := range []bool{false, true} {
			assert.NoError(t, checkScaffold(sc.files(single)), "%s single=%v", name, single)
		}
		hasLogin := loginResponse(cat[name].Login) != ""
		assert.Equal(t, hasLogin, strings.Contains(sc.testYAML, "status: login_required"), name)
	}
}
