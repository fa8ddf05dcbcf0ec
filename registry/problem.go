package registry

import "github.com/pkuinfo/harness/manifest"

// A DocumentProblem is a problem of one document's content, as Problems
// lists it: the document's id, its content hash and the error (whose text
// is the problem's). A host that reopens the registry as the home changes
// (harness mcp) says a problem once per document content and again only
// when the content changes. Problems of no one document's content (a
// remote plugin that cannot be added) are plain errors.
type DocumentProblem struct {
	ID   string // the document's id ("" when it has none)
	Hash string // its content hash ("" when it cannot be had)
	Err  error
}

func (p *DocumentProblem) Error() string { return p.Err.Error() }
func (p *DocumentProblem) Unwrap() error { return p.Err }

// docProblem is err as a problem of p's content.
func docProblem(p *manifest.Plugin, err error) error {
	dp := &DocumentProblem{Err: err}
	if p != nil {
		dp.ID = p.ID
		if p.Files != nil {
			dp.Hash, _ = p.Files.Hash()
		}
	}
	return dp
}

// toolProblem is err as a problem of the content of the document that has
// tool id (a plain error for a native or remote tool).
func (r *Registry) toolProblem(id string, err error) error {
	r.mu.RLock()
	t := r.tools[id]
	r.mu.RUnlock()
	if t == nil || t.doc == nil || t.doc.Plugin == nil {
		return err
	}
	return docProblem(t.doc.Plugin, err)
}
