package fetch

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pkuinfo/harness/manifest"
)

// The benchmark repository: 200 plugin folders and about 5 MB of history,
// built once per test binary run (only when a benchmark asks for it).
var (
	benchOnce sync.Once
	benchSrv  *gitServer
	benchErr  error
	benchRoot string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchSrv != nil {
		benchSrv.srv.Close()
	}
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// benchServer builds the 200-plugin repository behind a git server.
func benchServer(b *testing.B) *gitServer {
	benchOnce.Do(func() {
		root, err := os.MkdirTemp("", "fetch-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchRoot = root
		// A gitServer whose temporary folders outlive the first benchmark.
		s := newGitServerAt(b, root)
		dir := s.repo("acme/plugins200", true)
		rng := rand.New(rand.NewSource(1))
		word := func() string {
			const letters = "abcdefghijklmnopqrstuvwxyz"
			n := 3 + rng.Intn(8)
			w := make([]byte, n)
			for i := range w {
				w[i] = letters[rng.Intn(len(letters))]
			}
			return string(w)
		}
		text := func(n int) string {
			var t bytes.Buffer
			for t.Len() < n {
				t.WriteString(word())
				if rng.Intn(12) == 0 {
					t.WriteString("\n")
				} else {
					t.WriteString(" ")
				}
			}
			return t.String()
		}
		var st bytes.Buffer
		for c := 0; c < 50; c++ {
			fmt.Fprintf(&st, "commit refs/heads/main\ncommitter t <t@example.com> %d +0000\ndata 7\nchange\n", 1767225600+c*3600)
			for p := 0; p < 200; p++ {
				if c > 0 && (p+c)%5 != 0 {
					continue // each commit touches a fifth of the plugins
				}
				id := fmt.Sprintf("p%03d", p)
				files := map[string]string{
					"PLUGIN.md":        fmt.Sprintf("---\nid: %s\nname: %s\nversion: 1.%d.0\n---\n%s\n", id, id, c, text(1500)),
					"tools/query.yaml": "title: q\ndescription: " + text(600) + "\neffect: read\ninput: {type: object}\nsteps:\n  - return: '1'\n",
					"tools/list.yaml":  "title: l\ndescription: " + text(600) + "\neffect: read\ninput: {type: object}\nsteps:\n  - return: '2'\n",
				}
				for name, v := range files {
					fmt.Fprintf(&st, "M 100644 inline plugins/%s/%s\ndata %d\n%s\n", id, name, len(v), v)
				}
			}
		}
		s.git(dir, st.Bytes(), "fast-import", "--quiet")
		s.git(dir, nil, "repack", "-adq")
		b.Logf("benchmark repository: 200 plugins, %d bytes of packed history", dirBytes(filepath.Join(dir, "objects")))
		benchSrv = s
	})
	if benchErr != nil || benchSrv == nil {
		b.Fatal("no benchmark repository", benchErr)
	}
	return benchSrv
}

func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkInstallFolder fetches one plugin folder with FetchGit, hashes it
// and stores it in a fresh store.
func BenchmarkInstallFolder(b *testing.B) { benchInstall(b, false) }

// BenchmarkInstallFolderDepth1 is the fallback for servers without partial
// fetches: a depth-1 fetch of the whole tip.
func BenchmarkInstallFolderDepth1(b *testing.B) { benchInstall(b, true) }

func benchInstall(b *testing.B, noFilter bool) {
	s := benchServer(b)
	l := mustLink(b, "https://github.com/acme/plugins200/tree/main/plugins/p100")
	var disk int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		home := b.TempDir()
		res, err := FetchGit(context.Background(), l, GitOptions{Base: s.Base(), NoFilter: noFilter})
		if err != nil {
			b.Fatal(err)
		}
		st, err := OpenStore(home)
		if err != nil {
			b.Fatal(err)
		}
		h, err := manifest.Files(res.Files).Hash()
		if err != nil {
			b.Fatal(err)
		}
		e := Entry{ID: "p100", Link: l.String(), Kind: KindGitHub, Commit: res.Commit, Hash: h, Trust: TrustCommunity, Enabled: true}
		if err := st.Install(context.Background(), e, res.Files, false); err != nil {
			b.Fatal(err)
		}
		disk = dirBytes(filepath.Join(home, StoreDir))
	}
	b.ReportMetric(float64(disk), "disk-bytes")
}

// BenchmarkInstallFolderGitCLI does the same with the git command line: a
// blobless sparse depth-1 clone, sparse-checkout of the folder, and hashing.
func BenchmarkInstallFolderGitCLI(b *testing.B) {
	s := benchServer(b)
	url := s.Base() + "/acme/plugins200.git"
	var disk int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "c")
		for _, args := range [][]string{
			{"clone", "-q", "--depth", "1", "--filter=blob:none", "--sparse", url, dir},
			{"-C", dir, "sparse-checkout", "set", "plugins/p100"},
		} {
			cmd := exec.Command("git", args...)
			cmd.Env = s.env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		files, err := manifest.ReadDir(filepath.Join(dir, "plugins", "p100"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := files.Hash(); err != nil {
			b.Fatal(err)
		}
		disk = dirBytes(dir)
	}
	b.ReportMetric(float64(disk), "disk-bytes")
}
