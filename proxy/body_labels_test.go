package proxy

import (
	"strings"
	"testing"
)

// isUTF7 without a new string per label is the comparison of the lower-cased
// label it replaced, for every case of the labels, white space around them,
// other labels and runes outside ASCII that lower-case into it.
func TestIsUTF7AsLowerCase(t *testing.T) {
	old := func(label string) bool {
		switch strings.ToLower(strings.TrimSpace(label)) {
		case "utf-7", "utf7", "x-utf-7", "unicode-1-1-utf-7", "csunicode11utf7":
			return true
		}
		return false
	}
	var labels []string
	for _, l := range append(utf7Labels[:], "utf-8", "UTF-8", "gbk", "utf-77", "utf", "", "x-utf-8") {
		labels = append(labels, l, strings.ToUpper(l), " "+l+"\t", strings.ToUpper(l[:len(l)/2])+l[len(l)/2:])
	}
	labels = append(labels, "unİcode-1-1-utf-7", "csunİcode11utf7", "ſutf-7", "utf\u200b-7", "UTF-7\u00a0")
	n := 0
	for _, l := range labels {
		if got, want := isUTF7(l), old(l); got != want {
			t.Errorf("isUTF7(%q) = %v, want %v", l, got, want)
		} else if got {
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d labels were UTF-7", n)
	}
}
