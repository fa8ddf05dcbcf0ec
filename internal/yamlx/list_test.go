package yamlx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A List's messages name its items when it says what they are (Items), and
// an empty list is told Empty when set; without them they stay generic.
func TestListMessages(t *testing.T) {
	named := &Decl{Name: "a file", Fields: []Field{
		{Name: "cases", Type: List{Of: String{}, Min: 1, Max: 2, Items: "test cases", Empty: "lists no test case: a file needs one"}},
	}}
	plain := &Decl{Name: "a file", Fields: []Field{{Name: "cases", Type: List{Of: String{}, Min: 1, Max: 2}}}}
	for name, tc := range map[string]struct {
		d         *Decl
		src, want string
	}{
		"named kind":  {named, "cases: {a: 1}\n", "f.yaml:1:8: cases must be a list of test cases, not a mapping"},
		"named empty": {named, "cases: []\n", "f.yaml:1:8: cases lists no test case: a file needs one"},
		"named many":  {named, "cases: [a, b, c]\n", "f.yaml:1:8: cases holds more than 2 test cases"},
		"plain kind":  {plain, "cases: {a: 1}\n", "f.yaml:1:8: cases must be a list, not a mapping"},
		"plain empty": {plain, "cases: []\n", "f.yaml:1:8: cases must not be an empty list"},
		"plain many":  {plain, "cases: [a, b, c]\n", "f.yaml:1:8: cases holds more than 2 items"},
	} {
		t.Run(name, func(t *testing.T) {
			_, ok, l := decode(t, tc.src, tc.d)
			assert.False(t, ok)
			assert.Equal(t, tc.want, l.Error())
		})
	}
}
