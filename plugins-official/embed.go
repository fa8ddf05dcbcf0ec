// Package official holds the bundled official plugin documents, embedded in
// the binary: classrooms, campus-events, grades, canteen, shuttle, notices and
// wallet. Each is a folder with PLUGIN.md, tools/, tests/ and (where it has
// widgets) widgets/, in the format of docs/plugin-format.md.
package official

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/pkuinfo/harness/manifest"
)

// Repository is the official plugin repository: each bundled document is
// the folder of its id there, on Branch, and updates from that link (the
// reference: "The official plugin documents are also bundled with the app,
// and they too update from their links").
const (
	Repository = "https://github.com/pkuinfo/pku-harness-plugins"
	Branch     = "main"
)

// Link is the link a bundled document updates from:
// Repository/tree/Branch/ID.
func Link(id string) string { return Repository + "/tree/" + Branch + "/" + id }

// Names lists the official documents' ids (which are also their folders), sorted.
var Names = []string{"campus-events", "canteen", "classrooms", "grades", "notices", "shuttle", "wallet"}

//go:embed all:campus-events all:canteen all:classrooms all:grades all:notices all:shuttle all:wallet
var docs embed.FS

// Documents returns each official document's folder as a file system, by id.
func Documents() map[string]fs.FS {
	out := make(map[string]fs.FS, len(Names))
	for _, n := range Names {
		sub, err := fs.Sub(docs, n)
		if err != nil {
			panic("official: " + err.Error()) // embedded: a build-time fact
		}
		out[n] = sub
	}
	return out
}

// Files returns each official document's files that count (no hidden
// component), by id, as manifest.ReadDir would read its folder.
func Files() (map[string]manifest.Files, error) {
	out := make(map[string]manifest.Files, len(Names))
	for _, n := range Names {
		files := manifest.Files{}
		err := fs.WalkDir(docs, n, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(p, n+"/")
			if p == n {
				return nil
			}
			if strings.HasPrefix(path.Base(p), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			b, err := docs.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = b
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("official document %s: %w", n, err)
		}
		out[n] = files
	}
	return out, nil
}
