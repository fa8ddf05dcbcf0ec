package plugintest

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Placeholders keep a value's shape: digits stay digits (a number stays a
// valid number), letters letters in their case, Han characters Han, other
// characters as they are; distinct values get distinct placeholders.
func TestPlaceholderShapes(t *testing.T) {
	s, err := newScrubber([]string{"2100012345", "张测试", "li.lei@pku.edu.cn", "Li Lei", "A1"}, "")
	require.NoError(t, err)
	seen := map[string]string{}
	for v, p := range s.place {
		assert.NotEqual(t, v, p)
		assert.Equal(t, len([]rune(v)), len([]rune(p)), v)
		if o, dup := seen[p]; dup {
			t.Errorf("%q and %q share the placeholder %q", v, o, p)
		}
		seen[p] = v
	}
	assert.Regexp(t, `^9\d{9}$`, s.place["2100012345"])
	assert.Regexp(t, `^[某甲乙丙丁戊己庚辛壬癸]{3}$`, s.place["张测试"])
	assert.Regexp(t, `^[a-z]{2}\.[a-z]{3}@[a-z]{3}\.[a-z]{3}\.[a-z]{2}$`, s.place["li.lei@pku.edu.cn"])
	assert.Regexp(t, `^X[a-z] X[a-z]{2}$`, s.place["Li Lei"])
	assert.Regexp(t, `^[A-Z]\d$`, s.place["A1"])
}

// The same value is replaced everywhere by the same placeholder: in text,
// in its URL and \u escapes, in numbers and in keys; a placeholder is
// never replaced again.
func TestScrubEverywhere(t *testing.T) {
	s, err := newScrubber([]string{"张测试", "2100012345"}, "")
	require.NoError(t, err)
	name, sno := s.place["张测试"], s.place["2100012345"]
	assert.Equal(t, "<p>"+name+"</p>", s.str("<p>张测试</p>"))
	assert.Equal(t, "/u/"+url.PathEscape(name), s.str("/u/"+url.PathEscape("张测试")))
	assert.Equal(t, "q="+url.QueryEscape(name), s.str("q="+url.QueryEscape("张测试")))
	assert.Equal(t, `{"n":"`+jsonEscape(name, false)+`"}`, s.str(`{"n":"\u5f20\u6d4b\u8bd5"}`))
	assert.Equal(t, `{"n":"`+jsonEscape(name, true)+`"}`, s.str(`{"n":"\u5F20\u6D4B\u8BD5"}`))
	v := s.value(map[string]any{"2100012345": []any{json.Number("2100012345"), "张测试张测试", json.Number("12")}})
	assert.Equal(t, map[string]any{sno: []any{json.Number(sno), name + name, json.Number("12")}}, v)
	assert.Equal(t, s.str(s.str("张测试")), s.str("张测试"), "placeholders are not scrubbed again")
}

// A placeholder never collides with text the recording already holds.
func TestPlaceholderAvoidsText(t *testing.T) {
	first := placeholder("2100012345", 1)
	s, err := newScrubber([]string{"2100012345"}, "the text holds "+first)
	require.NoError(t, err)
	assert.NotEqual(t, first, s.place["2100012345"])
	_, err = newScrubber([]string{"--"}, "")
	assert.ErrorContains(t, err, "letter or a digit")
}
