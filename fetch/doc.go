// Package fetch loads plugin documents by link and keeps the installed ones in
// the home folder.
//
// A link is a GitHub folder link (https://github.com/OWNER/REPO/tree/REF/PATH),
// a GitHub blob link to a PLUGIN.md, any https URL of a PLUGIN.md (plain http
// only for loopback), or a local path. ParseLink reads one strictly; Fetch
// loads the files it names: git links through an in-memory go-git fetch of
// only the plugin's folder at a pinned commit, URL documents with their ETag
// and Last-Modified kept for cheap re-checks, local paths from disk. Every
// fetch meets limits (deadline, bytes, files, file size, path depth) and the
// path rules (no symlinks, submodules, .git entries, escapes, collisions or
// Git LFS pointers), each with a clear error.
//
// Store is the home folder: state.json (one entry per installed plugin),
// store/<hash>/ (each installed version's files under its content hash) and a
// .lock file. Writes are atomic and made under the lock; loads verify the
// stored files against their hash and quarantine a plugin whose files changed.
//
// For the daily update check (package update): ListRefs lists a
// repository's refs without fetching objects, ResolveRef splits a link's
// REF/PATH against them, and CheckURL makes a conditional request with the
// kept validators.
package fetch
