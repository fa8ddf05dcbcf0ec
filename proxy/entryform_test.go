package proxy

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entryForm lower-cases ASCII as it writes the segments and the rest of a
// path past ASCII after: the same form as segments cut at ";", trimmed of
// trailing dots and spaces, and each letter the lower case of its upper
// case, on every path, in one allocation where the path is ASCII. A
// letter that a case-blind server takes for an ASCII one is that one.
func TestEntryFormIsTrimmedLowerCase(t *testing.T) {
	want := func(p string) string {
		var segs []string
		for _, sg := range strings.Split(p, "/") {
			if j := strings.IndexByte(sg, ';'); j >= 0 {
				sg = sg[:j]
			}
			segs = append(segs, strings.TrimRight(sg, ". "))
		}
		return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, strings.Join(segs, "/"))
	}
	alphabet := []string{"/", "a", "Q", "z", "Z", ";", ".", " ", "9", "-", "É", "é", "İ", "K", "ſ", "教", "\xff"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := r.IntN(24); n > 0; n-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		p := b.String()
		require.Equal(t, want(p), entryForm(p), "%q", p)
	}
	assert.Equal(t, "/berserker-app/ykt/tsm/querycard", entryForm("/berserker-app/ykt/tsm/queryCard"))
	for _, p := range []string{"/cas/tic\u212Aet", "/ca\u017F/ticket", "/cas/t\u0131cket", "/CAS/T\u0130CKET", "/cas/ticket"} {
		assert.Equal(t, "/cas/ticket", entryForm(p), "%q", p)
	}
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { entryForm("/berserker-app/ykt/tsm/queryCard;jsessionid=x") }))
}

// entryFormIn, which isEntry compares with, is entryForm on every path (a
// short ASCII one written into the caller's buffer, a long or non-ASCII
// one as entryForm makes it), and an entry point check of an ASCII path
// with upper-case letters allocates nothing.
func TestEntryFormInIsEntryForm(t *testing.T) {
	alphabet := []string{"/", "a", "Q", ";", ".", " ", "9", "É", "K", "教", "\xff", strings.Repeat("Ab", 40)}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := r.IntN(24); n > 0; n-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		p := b.String()
		var buf [256]byte
		require.Equal(t, entryForm(p), entryFormIn(p, &buf), "%q", p)
	}
	svc, err := compileService("card", &Service{Origin: "https://bdcard.pku.edu.cn", Entry: []string{"/berserker-auth/cas/login"}})
	require.NoError(t, err)
	assert.True(t, svc.isEntry("/Berserker-Auth/CAS/Login;x=1"))
	assert.False(t, svc.isEntry("/berserker-app/ykt/tsm/queryCard"))
	assert.Equal(t, 0.0, testing.AllocsPerRun(100, func() { svc.isEntry("/berserker-app/ykt/tsm/queryCard") }))
}
