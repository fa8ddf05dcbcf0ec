package noninterference

import (
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Runner runs `harness` with args and the home folder home, and returns
// its exit code, stdout and stderr: in-process (cli.Main) or the built
// binary (e2e).
type Runner func(t *testing.T, home string, args []string) (code int, stdout, stderr string)

// Root is testdata/hostile, found from the calling test's folder.
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "hostile")
}

// RunAll is the property over every case of testdata/hostile: one
// subtest per case, run and pairing (CASE/RUN/PAIRING), each drawing
// fresh random credentials. With every false (a slower driver's budget),
// each case takes one of its runs and one pairing, in turn; else every run
// takes all three pairings. A case in
// KnownFailing is skipped naming its issue item, unless
// NONINTERFERENCE_ALL=1 (to see whether it passes).
func RunAll(t *testing.T, run Runner, every bool) {
	cases, err := Cases(Root(t))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorld()
	defer w.Close()
	turn := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			SkipKnown(t, c.Name)
			runs := c.Runs
			if !every {
				runs = []Run{c.Runs[turn%len(c.Runs)]}
			}
			for _, r := range runs {
				t.Run(r.Name, func(t *testing.T) {
					SkipKnown(t, c.Name+"/"+r.Name)
					pairings := Pairings
					if !every {
						pairings = []Pairing{Pairings[turn%len(Pairings)]}
						turn++
					}
					for _, p := range pairings {
						t.Run(p.String(), func(t *testing.T) {
							s, err := NewSetup(t.TempDir(), c, w)
							if err != nil {
								t.Fatal(err)
							}
							a, b := NewPair(NewRand(), p)
							CheckPair(t, s, r, a, b, run)
						})
					}
				})
			}
		})
	}
}

// SkipKnown skips a case (NAME) or one run of a case (NAME/RUN) of
// KnownFailing.
func SkipKnown(t testing.TB, name string) {
	t.Helper()
	if why, ok := KnownFailing[name]; ok && os.Getenv("NONINTERFERENCE_ALL") != "1" {
		t.Skip("known to fail on main: " + why)
	}
}

// NewRand is a generator seeded from crypto/rand: the credentials are
// random in every run of the test.
func NewRand() *mrand.Rand {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])))
}

// CheckPair runs r twice, against a and against b, and fails t with each
// difference Compare finds.
func CheckPair(t *testing.T, s *Setup, r Run, a, b Creds, run Runner) {
	t.Helper()
	var obs [2]Observation
	var pieces [2][]string
	for i, c := range []Creds{a, b} {
		args, err := s.Prepare(c, r)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(t, s.Home, args)
		t.Logf("run %d: exit %d\nstdout: %s\nstderr: %s", i+1, code, clip(stdout, 600), clip(stderr, 1500))
		if invalid := strings.Contains(stderr, "is not a valid document"); invalid != s.Case.Invalid {
			t.Fatalf("%s: the document compiles: %v, want %v:\n%s", s.Case.Name, !invalid, !s.Case.Invalid, clip(stderr, 2000))
		}
		if refused := code == 3; refused != s.Case.Refused {
			t.Fatalf("%s: refused by the permission rules: %v, want %v:\n%s", s.Case.Name, refused, s.Case.Refused, clip(stderr, 2000))
		}
		o, err := s.Observe(c, code, stdout, stderr)
		if err != nil {
			t.Fatal(err)
		}
		obs[i], pieces[i] = o, s.World.Pieces()
	}
	if fails := Compare(obs[0], obs[1], a, b, pieces[0], pieces[1]); len(fails) > 0 {
		t.Errorf("%s/%s: what the plugin observes depends on the credentials (session %s vs %s):\n%s",
			s.Case.Name, r.Name, a["session"], b["session"], strings.Join(fails, "\n"))
	}
}
