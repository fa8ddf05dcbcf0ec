// Package update checks installed documents for new versions and applies
// them by the update policy.
//
// Checker checks installed links (at most daily, one ref listing per GitHub
// repository, conditional requests for URL documents) and returns a Result
// per document without touching the store: only a changed link is fetched,
// parsed, hashed and diffed (review.Diff) against the installed version.
// Decide turns that diff, the versions and the hashes into a verdict: the
// same or narrower access applies at once, wider access waits for the user,
// a downgrade (a lower version, or the same version with other content) is
// held with a warning. Record writes the results into the fetch package's
// store (apply, hold as pending, keep the error), and Accept applies a
// pending update the user was shown.
package update
