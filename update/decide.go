package update

import (
	"fmt"

	"github.com/pkuinfo/harness/review"

	"golang.org/x/mod/semver"
)

// Verdict is what to do with a new version of an installed document.
type Verdict string

// The verdicts.
const (
	// Same: the content hash is unchanged; nothing to do.
	Same Verdict = "same"
	// Apply: the same or narrower access; take effect at once.
	Apply Verdict = "apply"
	// Pending: wider access; wait until the user accepts it.
	Pending Verdict = "pending"
	// Held: a downgrade (a lower version, or versions that cannot be
	// ordered); wait, with a warning, until the user accepts it.
	Held Verdict = "held"
)

// Decision is a verdict with its reasons.
type Decision struct {
	Verdict Verdict      `json:"verdict"`
	Delta   review.Delta `json:"delta"`
	// Warning explains a held update.
	Warning string `json:"warning,omitempty"`
	// Note is said of an update that is not held but worth a line in the
	// record: "content changed, version unchanged".
	Note string `json:"note,omitempty"`
}

// NoteSameVersion is the record's line for new content under the version
// already installed: the content hash is the identity, so it applies.
const NoteSameVersion = "content changed, version unchanged"

// CompareVersions orders two semantic versions ("1.2.0", no "v"): -1, 0 or
// +1. ok is false when either is not a semantic version.
func CompareVersions(a, b string) (cmp int, ok bool) {
	va, vb := "v"+a, "v"+b
	if !semver.IsValid(va) || !semver.IsValid(vb) || semver.Canonical(va) != va || semver.Canonical(vb) != vb {
		return 0, false
	}
	return semver.Compare(va, vb), true
}

// Decide applies the update policy to a new version of an installed one:
// the same hash is Same; a lower version, or versions that cannot be
// ordered, are Held (rollback protection); wider access is Pending;
// anything else is Apply. The content hash is the identity, not the version
// string: new content under the same version follows its access like any
// other update (the reference: "If the new content declares the same
// access, it takes effect at once"), noted as NoteSameVersion. d is
// Diff(installed, candidate).
func Decide(installedVersion, installedHash, newVersion, newHash string, d review.Delta) Decision {
	if installedHash != "" && installedHash == newHash {
		return Decision{Verdict: Same, Delta: d}
	}
	cmp, ok := CompareVersions(newVersion, installedVersion)
	note := ""
	if ok && cmp == 0 {
		note = NoteSameVersion
	}
	switch {
	case !ok:
		return Decision{Verdict: Held, Delta: d,
			Warning: fmt.Sprintf("versions %q and %q cannot be ordered: the update waits for your confirmation", installedVersion, newVersion)}
	case cmp < 0:
		return Decision{Verdict: Held, Delta: d,
			Warning: fmt.Sprintf("downgrade: version %s is lower than the installed %s", newVersion, installedVersion)}
	case d.Wider:
		return Decision{Verdict: Pending, Delta: d, Note: note}
	}
	return Decision{Verdict: Apply, Delta: d, Note: note}
}

// Lines are the record's lines for a decision: its note, then what changed.
func (d Decision) Lines() []string {
	lines := ChangeLines(d.Delta)
	if d.Note != "" {
		lines = append([]string{d.Note}, lines...)
	}
	return lines
}
