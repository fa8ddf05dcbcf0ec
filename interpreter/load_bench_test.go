package interpreter_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
)

// BenchmarkLoadTypical is what `harness lint` and every load does for a
// document of five tools: parse and validate the manifest, then compile
// every step (jq, templates, access checks).
func BenchmarkLoadTypical(b *testing.B) {
	files := manifest.Files{"PLUGIN.md": []byte("---\nid: canteen\nname: 食堂\ndescription: 食堂就餐人数。\nversion: 1.2.0\n" +
		"access:\n  campus:\n    - service: portal\n      paths: [/api/canteen/]\n  abilities: [kv]\n---\nUse crowd0 for how full the canteens are.\n")}
	for i := 0; i < 5; i++ {
		files[fmt.Sprintf("tools/crowd%d.yaml", i)] = []byte(strings.TrimSpace(`
description: How full each canteen is now, as a percentage. Use when the user asks where to eat.
effect: read
input:
  type: object
  properties:
    canteen: { type: string, description: "Canteen name, e.g. 燕南" }
    limit: { type: integer, minimum: 1, maximum: 20 }
  required: [canteen]
steps:
  - request:
      service: portal
      path: /api/canteen/${ $input.canteen }/crowd
      query: { lang: zh }
    as: res
  - if: .status != 200
    fail: "The portal answered ${ .status }"
  - jq: '[.body.rows[] | {name: .name, percent: .ratio}]'
    as: rows
  - return: '{canteen: $input.canteen, rows: $rows[:($input.limit // 5)]}'
`) + "\n")
	}
	load := func() {
		p, l := manifest.Parse(files)
		if l.HasErrors() {
			b.Fatal(l.Error())
		}
		if _, l := interpreter.Compile(p); l.HasErrors() {
			b.Fatal(l.Error())
		}
	}
	load()
	b.ReportAllocs()
	for b.Loop() {
		load()
	}
}
