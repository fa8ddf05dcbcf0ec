package noninterference_test

import (
	"bytes"
	mrand "math/rand/v2"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/internal/cli"
	ni "github.com/pkuinfo/harness/internal/noninterference"
)

// inProcess runs `harness` in this process: the real command, proxy and
// interpreter, against the world's loopback servers.
func inProcess(t *testing.T, home string, args []string) (int, string, string) {
	var out, errb bytes.Buffer
	env := map[string]string{"HARNESS_HOME": home, "NO_COLOR": "1", "HARNESS_NOW": "2026-03-02T09:00:00+08:00"}
	code := cli.Main(args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

// TestNonInterference runs every hostile document of testdata/hostile
// twice per pairing, against two random credential sets of the same
// shape, and finds everything it could observe the same once each whole
// credential is masked.
func TestNonInterference(t *testing.T) {
	ni.RunAll(t, inProcess, true)
}

// FuzzNonInterference is the property with credentials drawn from the
// fuzzer's seeds: each input picks one run of one hostile document (those
// not known to fail) and a pairing, and draws the pair of credential sets.
func FuzzNonInterference(f *testing.F) {
	cases, err := ni.Cases(ni.Root(f))
	if err != nil {
		f.Fatal(err)
	}
	type pick struct {
		c ni.Case
		r ni.Run
	}
	var runs []pick
	for _, c := range cases {
		for _, r := range c.Runs {
			if _, ok := ni.KnownFailing[c.Name]; ok {
				continue
			}
			if _, ok := ni.KnownFailing[c.Name+"/"+r.Name]; ok {
				continue
			}
			runs = append(runs, pick{c, r})
		}
	}
	w := ni.NewWorld()
	f.Cleanup(w.Close)
	f.Add(uint64(1), uint64(2), uint8(0), uint16(0))
	f.Add(uint64(3), uint64(4), uint8(1), uint16(7))
	f.Add(uint64(5), uint64(6), uint8(2), uint16(21))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, pairing uint8, index uint16) {
		p := runs[int(index)%len(runs)]
		s, err := ni.NewSetup(t.TempDir(), p.c, w)
		if err != nil {
			t.Fatal(err)
		}
		a, b := ni.NewPair(mrand.New(mrand.NewPCG(s1, s2)), ni.Pairings[int(pairing)%len(ni.Pairings)])
		ni.CheckPair(t, s, p.r, a, b, inProcess)
	})
}
