package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pkuinfo/harness/manifest"
)

// Forgotten says what ForgetData deleted.
type Forgotten struct {
	KV          bool // a KV store (HOME/kv/<id>.json or HOME/community/kv/<id>.json)
	Preferences bool // preference values (HOME/prefs/<id>.json or HOME/community/prefs/<id>.json)
	Grants      bool // standing grants of its tools (HOME/grants.json)
	// KeptOfficial is set when official data of the id was kept because a
	// bundled official document of that id uses it.
	KeptOfficial bool
}

// What lists what was deleted in words ("kv", "preferences").
func (f Forgotten) What() []string {
	var out []string
	if f.KV {
		out = append(out, "kv")
	}
	if f.Preferences {
		out = append(out, "preferences")
	}
	if f.Grants {
		out = append(out, "grants")
	}
	return out
}

// ForgetData deletes the private data of plugin id in the home folder dir,
// for a document that is being removed: its KV store and its preference
// values, in the community locations always and in the official ones
// unless keepOfficial, and the standing grants of its tools always (a bundled official document of the same id, which
// stored them, comes back). An id is a name any document may take, so the
// next document of that id must start empty. The KV layout is the one
// steps.OpenKV uses; the preference layout is HomeStore's.
func ForgetData(dir, id string, keepOfficial bool) (Forgotten, error) {
	var f Forgotten
	if !idRE.MatchString(id) || len(id) > manifest.MaxIDLen {
		return f, fmt.Errorf("plugin id %q is not a valid id", id)
	}
	type loc struct {
		path  string
		flag  *bool
		offic bool
	}
	locs := []loc{
		{filepath.Join(dir, "community", "kv", id+".json"), &f.KV, false},
		{filepath.Join(dir, "community", "prefs", id+".json"), &f.Preferences, false},
		{filepath.Join(dir, "kv", id+".json"), &f.KV, true},
		{filepath.Join(dir, "prefs", id+".json"), &f.Preferences, true},
	}
	var errs []error
	for _, l := range locs {
		if l.offic && keepOfficial {
			if _, err := os.Lstat(l.path); err == nil {
				f.KeptOfficial = true
			}
			continue
		}
		err := os.Remove(l.path)
		switch {
		case err == nil:
			*l.flag = true
		case errors.Is(err, fs.ErrNotExist):
		default:
			errs = append(errs, err)
		}
	}
	had, err := forgetGrants(dir, id)
	f.Grants = had
	if err != nil {
		errs = append(errs, err)
	}
	return f, errors.Join(errs...)
}
