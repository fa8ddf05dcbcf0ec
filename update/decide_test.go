package update

import (
	"testing"

	"github.com/pkuinfo/harness/review"
	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	wider := review.Delta{Wider: true, Changes: []review.Change{{Wider: true}}}
	narrow := review.Delta{Changes: []review.Change{{Kind: review.Removed}}}
	for _, c := range []struct {
		name          string
		oldV, newV    string
		oldH, newH    string
		d             review.Delta
		want          Verdict
		warningWanted bool
	}{
		{"same hash", "1.0.0", "1.0.0", "h1:a", "h1:a", review.Delta{}, Same, false},
		{"narrower newer", "1.0.0", "1.1.0", "h1:a", "h1:b", narrow, Apply, false},
		{"neutral newer", "1.0.0", "1.0.1", "h1:a", "h1:b", review.Delta{Changes: []review.Change{}}, Apply, false},
		{"wider newer", "1.0.0", "2.0.0", "h1:a", "h1:b", wider, Pending, false},
		{"lower version", "1.2.0", "1.1.9", "h1:a", "h1:b", narrow, Held, true},
		{"same version other content applies", "1.2.0", "1.2.0", "h1:a", "h1:b", narrow, Apply, false},
		{"same version wider waits", "1.2.0", "1.2.0", "h1:a", "h1:b", wider, Pending, false},
		{"prerelease is lower", "1.2.0", "1.2.0-rc.1", "h1:a", "h1:b", narrow, Held, true},
		{"wider downgrade is held", "1.2.0", "1.0.0", "h1:a", "h1:b", wider, Held, true},
		{"unorderable", "1.0", "1.1.0", "h1:a", "h1:b", narrow, Held, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.oldV, c.oldH, c.newV, c.newH, c.d)
			require.Equal(t, c.want, got.Verdict)
			require.Equal(t, c.warningWanted, got.Warning != "", got.Warning)
			if c.oldV == c.newV && c.oldH != c.newH {
				require.Equal(t, NoteSameVersion, got.Note)
				require.Equal(t, NoteSameVersion, got.Lines()[0], "the record says so")
			} else {
				require.Empty(t, got.Note)
			}
		})
	}
}
