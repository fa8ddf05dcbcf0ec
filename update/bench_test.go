package update

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"
)

// benchFleet is 50 installed, unchanged documents from 10 repositories of
// one git server.
func benchFleet(tb testing.TB) (*gitServer, []Installed, []string) {
	s := newGitServer(tb)
	var list []Installed
	var remotes []string // one per document, as a per-document check would ask
	for r := 0; r < 10; r++ {
		name := fmt.Sprintf("owner%d/plugins", r)
		dir := s.repo(name)
		files := map[string]string{}
		for p := 0; p < 5; p++ {
			id := fmt.Sprintf("p%d-%d", r, p)
			files = merge(files, plugin(id, id, "1.0.0", "", nil))
		}
		commit := s.commit(dir, "main", files)
		for p := 0; p < 5; p++ {
			id := fmt.Sprintf("p%d-%d", r, p)
			list = append(list, Installed{ID: id, Link: link(name, "main", id), Commit: commit, Ref: "refs/heads/main", Hash: "h1:x", Version: "1.0.0"})
			remotes = append(remotes, s.srv.URL+"/"+name+".git")
		}
	}
	return s, list, remotes
}

func checkFleet(tb testing.TB, s *gitServer, list []Installed) {
	res := (&Checker{Now: now0, Force: true, GitBase: s.srv.URL}).Check(context.Background(), list)
	for _, r := range res {
		if r.Status != StatusUnchanged {
			tb.Fatalf("%s: %s %v", r.ID, r.Status, r.Err)
		}
	}
}

func lsRemoteFleet(tb testing.TB, s *gitServer, remotes []string) {
	for _, u := range remotes {
		cmd := exec.Command("git", "ls-remote", u, "refs/heads/main")
		cmd.Env = s.env
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git ls-remote: %v\n%s", err, out)
		}
	}
}

// BenchmarkCheck50 checks 50 unchanged GitHub documents from 10 repositories.
func BenchmarkCheck50(b *testing.B) {
	s, list, _ := benchFleet(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		checkFleet(b, s, list)
	}
}

// BenchmarkLsRemote50 is the baseline: 50 sequential git ls-remote calls.
func BenchmarkLsRemote50(b *testing.B) {
	s, _, remotes := benchFleet(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lsRemoteFleet(b, s, remotes)
	}
}

// TestCheckSpeedRatio measures the median ratio of the two above, side by
// side on the same server, when HARNESS_BENCH=1. It asserts only that both
// finish with the right answers; the ratio is logged.
func TestCheckSpeedRatio(t *testing.T) {
	if os.Getenv("HARNESS_BENCH") == "" {
		t.Skip("set HARNESS_BENCH=1 to measure")
	}
	s, list, remotes := benchFleet(t)
	checkFleet(t, s, list) // warm up
	lsRemoteFleet(t, s, remotes)
	var ours, theirs, ratios []float64
	for round := 0; round < 9; round++ {
		t0 := time.Now()
		s.reset()
		checkFleet(t, s, list)
		a := time.Since(t0).Seconds()
		if s.listings.Load() != 10 || s.fetches.Load() != 0 {
			t.Fatalf("%d listings, %d fetches", s.listings.Load(), s.fetches.Load())
		}
		t0 = time.Now()
		lsRemoteFleet(t, s, remotes)
		b := time.Since(t0).Seconds()
		ours, theirs, ratios = append(ours, a), append(theirs, b), append(ratios, a/b)
	}
	t.Logf("check 50 (10 repositories): median %.1f ms; 50 sequential git ls-remote: median %.1f ms; median ratio %.3f",
		median(ours)*1000, median(theirs)*1000, median(ratios))
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
