package proxy

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A Finder finds its values as the redactor finds credentials: whole
// values and whole encodings of them (here HTML references, percent
// escapes, base64), never a part; a value shorter than MinFindLen is not
// taken.
func TestFinder(t *testing.T) {
	f := NewFinder("张测试", "2100012345", "abc")
	for _, tc := range []struct {
		text string
		want [][2]int
	}{
		{"<p>张测试</p>", [][2]int{{3, 12}}},
		{"<p>&#24352;&#27979;&#35797;</p>", [][2]int{{3, 27}}},
		{"n=%E5%BC%A0%E6%B5%8B%E8%AF%95&x=1", [][2]int{{2, 29}}},
		{"sno " + base64.StdEncoding.EncodeToString([]byte("2100012345")), [][2]int{{4, 18}}},
		{"210001234 张测 abc", [][2]int{}},
	} {
		assert.Equal(t, tc.want, f.Find(tc.text), tc.text)
	}
}
