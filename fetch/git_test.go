package fetch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustLink(t testing.TB, s string) *Link {
	t.Helper()
	l, err := ParseLink(s)
	require.NoError(t, err)
	return l
}

func TestFetchGitBranchFolder(t *testing.T) {
	for _, filter := range []bool{true, false} {
		t.Run(map[bool]string{true: "partial", false: "depth1"}[filter], func(t *testing.T) {
			s := newGitServer(t)
			dir := s.repo("acme/plugins", filter)
			c := s.commit(dir, "main", map[string]string{
				"README.md":                "top",
				"canteen/PLUGIN.md":        doc("canteen"),
				"canteen/tools/crowd.yaml": "title: x\n",
				"canteen/.hidden":          "not counted",
				"other/PLUGIN.md":          doc("other"),
				"big/blob.bin":             string(make([]byte, 300000)),
			})
			res, err := FetchGit(context.Background(), mustLink(t, "https://github.com/acme/plugins/tree/main/canteen"), GitOptions{Base: s.Base()})
			require.NoError(t, err)
			assert.Equal(t, c, res.Commit)
			assert.Equal(t, "refs/heads/main", res.Ref)
			assert.Equal(t, "canteen", res.Path)
			assert.Equal(t, filter, res.Stats.Partial)
			assert.Equal(t, map[string][]byte{"PLUGIN.md": []byte(doc("canteen")), "tools/crowd.yaml": []byte("title: x\n")}, res.Files)
			t.Logf("requests %d, wire bytes %d", res.Stats.Requests, res.Stats.WireBytes)
		})
	}
}
