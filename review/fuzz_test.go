package review

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/pkuinfo/harness/manifest"
)

// FuzzDiff parses two documents and checks the diff's invariants: no panic,
// a document against itself is empty, the same answer twice, and a sheet
// renders.
func FuzzDiff(f *testing.F) {
	seeds := []string{
		"---\nid: a\nname: A\ndescription: d\nversion: 1.0.0\naccess:\n  campus: [card]\n---\nx\n",
		"---\nid: a\nname: A\ndescription: d\nversion: 1.1.0\naccess:\n  campus:\n    - service: card\n      paths: [/api/]\n  web: [https://a.example.edu.cn:8443]\n  abilities: [kv]\n---\nx\n",
		"---\nid: a\nname: A\ndescription: d\nversion: 2.0.0\nrequires: [network]\n---\n```yaml tool pay\ntitle: Pay\ndescription: Pays.\neffect: money\ninput: {type: object}\nsteps:\n  - return: '1'\n```\n",
	}
	for _, a := range seeds {
		for _, b := range seeds {
			f.Add([]byte(a), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > 4096 || len(b) > 4096 {
			return
		}
		pa, _ := manifest.Parse(manifest.Files{"PLUGIN.md": a})
		pb, _ := manifest.Parse(manifest.Files{"PLUGIN.md": b})
		if d := Diff(pa, pa); len(d.Changes) != 0 {
			t.Fatalf("self diff not empty: %+v", d.Changes)
		}
		d1, d2 := Diff(pa, pb), Diff(pa, pb)
		if !reflect.DeepEqual(d1, d2) {
			t.Fatal("diff is not deterministic")
		}
		wider := false
		for _, c := range d1.Changes {
			wider = wider || c.Wider
			if c.Message == "" || c.Path == "" {
				t.Fatalf("change without message or path: %+v", c)
			}
		}
		if wider != d1.Wider {
			t.Fatal("Wider disagrees with the changes")
		}
		s := NewSheet(pb, Info{Trust: "community"})
		s.Mark(d1, pa.Version, "")
		if err := s.WriteText(io.Discard, true); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := s.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
	})
}
