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
	// Held: a downgrade (a lower version, or the same version with other
	// content); wait, with a warning, until the user accepts it.
	Held Verdict = "held"
)

// Decision is a verdict with its reasons.
type Decision struct {
	Verdict Verdict      `json:"verdict"`
	Delta   review.Delta `json:"delta"`
	// Warning explains a held update.
	Warning string `json:"warning,omitempty"`
}

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
// the same hash is Same; a lower version, or the same version with other
// content, or versions that cannot be ordered, are Held; wider access is
// Pending; anything else is Apply. d is Diff(installed, candidate).
func Decide(installedVersion, installedHash, newVersion, newHash string, d review.Delta) Decision {
	if installedHash != "" && installedHash == newHash {
		return Decision{Verdict: Same, Delta: d}
	}
	cmp, ok := CompareVersions(newVersion, installedVersion)
	switch {
	case !ok:
		return Decision{Verdict: Held, Delta: d,
			Warning: fmt.Sprintf("versions %q and %q cannot be ordered: the update waits for your confirmation", installedVersion, newVersion)}
	case cmp < 0:
		return Decision{Verdict: Held, Delta: d,
			Warning: fmt.Sprintf("downgrade: version %s is lower than the installed %s", newVersion, installedVersion)}
	case cmp == 0:
		return Decision{Verdict: Held, Delta: d,
			Warning: fmt.Sprintf("version %s is unchanged but its content changed (%s → %s): the author did not raise the version", newVersion, installedHash, newHash)}
	case d.Wider:
		return Decision{Verdict: Pending, Delta: d}
	}
	return Decision{Verdict: Apply, Delta: d}
}
