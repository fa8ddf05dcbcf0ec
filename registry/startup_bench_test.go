package registry_test

import (
	"testing"

	"github.com/pkuinfo/harness/manifest"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/registry"
)

// BenchmarkBundledStart is what `harness tools` and `harness mcp` do with
// the bundled documents at every start: parse each and add it to a
// registry (which reads every tool's effect), and list the catalogue.
func BenchmarkBundledStart(b *testing.B) {
	all, err := official.Files()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r := registry.New()
		for _, id := range official.Names {
			p, l := manifest.Parse(all[id])
			if l.HasErrors() {
				b.Fatal(l.Err())
			}
			if _, err := r.AddDocument(p, registry.Official, registry.DocOptions{Origin: registry.Bundled}); err != nil {
				b.Fatal(err)
			}
		}
		c, err := r.Catalogue(registry.CatalogueOptions{})
		if err != nil || len(c.Plugins) != len(official.Names) {
			b.Fatal(err, len(c.Plugins))
		}
	}
}
