package fetch

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// pktLine is one git pkt-line.
func pktLine(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// TestListRefsBounded: the daily update lists each repository's refs with
// ListRefs. A hostile server that advertises refs without end (here 48 MiB
// of branches, some 700 000) was read whole into memory, up to the 60 s
// deadline, eight repositories at once. The listing reads at most
// MaxRefListBytes.
func TestListRefsBounded(t *testing.T) {
	t.Parallel()
	srv := endlessRefs(t)
	_, err := ListRefs(context.Background(), srv.URL+"/evil/refs.git", nil)
	require.ErrorIs(t, err, ErrLimit)
	require.ErrorContains(t, err, fmt.Sprintf("more than %d bytes", MaxRefListBytes))
}

// TestFetchGitRefListingBounded: install's own ref listing has the same
// bound; the whole fetch's (64 MiB) let some 1.1 million refs in, each held
// twice, and a commit link asked the server for every one of them.
func TestFetchGitRefListingBounded(t *testing.T) {
	t.Parallel()
	srv := endlessRefs(t)
	for _, link := range []string{"https://github.com/evil/refs/tree/main/p", "https://github.com/evil/refs/tree/" + strings.Repeat("b", 40) + "/p"} {
		_, err := FetchGit(context.Background(), mustLink(t, link), GitOptions{Base: srv.URL})
		require.ErrorIs(t, err, ErrLimit, link)
		require.ErrorContains(t, err, fmt.Sprintf("more than %d bytes", MaxRefListBytes), link)
	}
}

// endlessRefs is a git server whose ref listing goes on for 48 MiB.
func endlessRefs(t *testing.T) *httptest.Server {
	const total = 48 << 20
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/info/refs") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		bw := bufio.NewWriterSize(w, 64<<10)
		defer bw.Flush()
		n := 0
		write := func(s string) bool {
			k, err := bw.WriteString(s)
			n += k
			sent.Add(int64(k))
			return err == nil && n < total
		}
		sha := strings.Repeat("a", 40)
		write(pktLine("# service=git-upload-pack\n") + "0000")
		write(pktLine(sha + " HEAD\x00multi_ack side-band-64k ofs-delta symref=HEAD:refs/heads/main\n"))
		for i := 0; ; i++ {
			if !write(pktLine(fmt.Sprintf("%s refs/heads/b%07d\n", sha, i))) {
				break
			}
		}
		write("0000")
	}))
	t.Cleanup(srv.Close)
	return srv
}
