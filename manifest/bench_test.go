package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
)

// typicalDocument is a document with five tools, like the official ones.
func typicalDocument() manifest.Files {
	files := manifest.Files{"PLUGIN.md": []byte(`---
id: canteen
name: 食堂
description: 食堂就餐人数与菜单。
version: 1.2.0
requires: [campus-session]
access:
  campus:
    - card
    - service: portal
      paths: [/api/canteen/, /api/menu/]
  web: [https://news.example.edu.cn]
  abilities: [kv]
dataSources:
  - {name: crowd, tool: crowd0, ttl: 120, input: {canteen: 燕南}}
preferences:
  favourite: {kind: choice, title: 常去食堂, options: [{value: 燕南, label: 燕南}, {value: 农园, label: 农园}, {value: 学一, label: 学一}], default: 燕南}
i18n:
  en: {name: Canteens, description: Crowds and menus.}
---
Use crowd0 for how full the canteens are. Amounts are yuan.
`)}
	for i := 0; i < 5; i++ {
		files[fmt.Sprintf("tools/crowd%d.yaml", i)] = []byte(strings.ReplaceAll(`title: 人数
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
  - return: '{canteen: $input.canteen, rows: $rows}'
`, "crowd", fmt.Sprintf("crowd%d", i)))
	}
	return files
}

func BenchmarkParseTypical(b *testing.B) {
	files := typicalDocument()
	if _, l := manifest.Parse(files); l.HasErrors() {
		b.Fatal(l.Error())
	}
	b.ReportAllocs()
	for b.Loop() {
		manifest.Parse(files)
	}
}
