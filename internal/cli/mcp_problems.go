package cli

import (
	"errors"
	"fmt"
	"sync"

	"github.com/pkuinfo/harness/registry"
)

// problemWarner says the registry's problems on stderr for harness mcp,
// which reopens the registry at every change of the home: a document's
// problem once per content of the document (registry.DocumentProblem's
// id and hash), again only when the content changes; any other problem
// when it appears (again after a registry without it).
type problemWarner struct {
	app *App

	mu    sync.Mutex
	docs  map[string]docWarned // by document id
	other map[string]bool      // the last registry's other problems
}

// docWarned is what was said of one document: its content hash then, and
// the problems said of that content.
type docWarned struct {
	hash string
	said map[string]bool
}

// warn says the problems of a registry that were not said yet.
func (w *problemWarner) warn(problems []error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.docs == nil {
		w.docs = map[string]docWarned{}
	}
	other := map[string]bool{}
	for _, p := range problems {
		msg := p.Error()
		var dp *registry.DocumentProblem
		if errors.As(p, &dp) && dp.ID != "" {
			d, ok := w.docs[dp.ID]
			if !ok || d.hash != dp.Hash {
				d = docWarned{hash: dp.Hash, said: map[string]bool{}}
				w.docs[dp.ID] = d
			}
			if d.said[msg] {
				continue
			}
			d.said[msg] = true
		} else {
			other[msg] = true
			if w.other[msg] {
				continue
			}
		}
		fmt.Fprintf(w.app.Stderr, "harness: warning: %s\n", terminalSafe(msg))
	}
	w.other = other
}
