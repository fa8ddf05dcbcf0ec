package registry_test

import (
	"context"
	"testing"

	"github.com/pkuinfo/harness/fetch"
	official "github.com/pkuinfo/harness/plugins-official"
	"github.com/pkuinfo/harness/registry"
)

// BenchmarkBundledStart is what `harness tools` and `harness mcp` do with
// the bundled documents at every start: open the home folder's registry
// (each bundled document parsed and its tools' effects read) and list the
// catalogue.
func BenchmarkBundledStart(b *testing.B) {
	all, err := official.Files()
	if err != nil {
		b.Fatal(err)
	}
	var bundled []registry.Bundle
	for _, id := range official.Names {
		bundled = append(bundled, registry.Bundle{Files: all[id]})
	}
	st, err := fetch.OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := registry.OpenHome(context.Background(), st, bundled)
		if err != nil {
			b.Fatal(err)
		}
		c, err := r.Catalogue(registry.CatalogueOptions{})
		if err != nil || len(c.Plugins) != len(official.Names) {
			b.Fatal(err, len(c.Plugins), r.Problems())
		}
	}
}
