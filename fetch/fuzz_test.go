package fetch

import (
	"strings"
	"testing"
)

// FuzzParseLink: no panic; an accepted link's canonical spelling parses to
// itself; a GitHub link never holds a '.' or '..' segment, and its clone URL
// is built from the owner and repository alone.
func FuzzParseLink(f *testing.F) {
	for _, s := range []string{
		"https://github.com/a/b/tree/main/x", "https://github.com/a/b/blob/v1/x/PLUGIN.md",
		"https://github.com.evil/a/b", "https://github.com@evil/a/b", "https://github.com/%2e%2e/b/tree/x",
		"https://example.com/PLUGIN.md", "http://127.0.0.1:1/PLUGIN.md", "./x", "https://github.com/a/b/tree/main/%E9%A3%9F",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		l, err := ParseLink(s)
		if err != nil || l.Kind == KindLocal {
			return
		}
		l2, err := ParseLink(l.String())
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", l.String(), s, err)
		}
		if l2.String() != l.String() {
			t.Fatalf("canonical spelling not stable: %q then %q", l.String(), l2.String())
		}
		if l.Kind == KindGitHub {
			for _, seg := range strings.Split(l.RefPath, "/") {
				if l.RefPath != "" && (seg == "." || seg == ".." || seg == "") {
					t.Fatalf("%q: segment %q in %q", s, seg, l.RefPath)
				}
			}
			u, err := l.CloneURL("")
			if err != nil || u != "https://github.com/"+l.Owner+"/"+l.Repo+".git" {
				t.Fatalf("clone URL %q, %v", u, err)
			}
		}
	})
}
