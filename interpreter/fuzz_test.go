package interpreter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
	"github.com/rogpeppe/go-internal/txtar"
)

const fuzzPlugin = "---\nid: fuzz\nname: F\ndescription: F.\nversion: 1.0.0\naccess:\n  campus: [portal]\n  web: [http://news.example.edu.cn]\n  abilities: [kv]\n---\nI.\n"

// FuzzRun compiles and runs tool documents with a short deadline and a
// transport answering from memory. Properties: no panic, no hang, every
// diagnostic inside the file, results are valid JSON within the output
// limit and free of control characters.
func FuzzRun(f *testing.F) {
	cases, _ := filepath.Glob(filepath.Join("..", "steps", "testdata", "*", "*.txtar"))
	for _, c := range cases {
		ar, err := txtar.ParseFile(c)
		if err != nil {
			continue
		}
		for _, file := range ar.Files {
			if file.Name == "tool.yaml" {
				f.Add(string(file.Data))
			}
		}
	}
	official, _ := filepath.Glob(filepath.Join("..", "plugins-official", "*", "tools", "*.yaml"))
	for _, o := range official {
		if b, err := os.ReadFile(o); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("description: T.\neffect: read\nsteps:\n  - jq: '\"\\u001b\" * 3'\n")
	lim := interpreter.DefaultLimits()
	lim.Deadline = 300 * time.Millisecond
	lim.Steps = 200
	lim.Output = 2000
	mt := &memTransport{resp: proxy.Response{Status: 200, Header: http.Header{"Content-Type": {"text/html"}},
		Body: []byte(`<html><body><ul><li><a href="/x">A</a></li></ul>{"k": [1, 2]}</body></html>`), MediaType: "text/html"}}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 8<<10 {
			return
		}
		p, l := manifest.Parse(manifest.Files{"PLUGIN.md": []byte(fuzzPlugin), "tools/t.yaml": []byte(src)})
		prog, cl := interpreter.Compile(p, interpreter.WithLimits(lim))
		l.Merge(cl)
		// YAML breaks lines at \n, \r\n and a lone \r.
		lines := strings.Count(strings.ReplaceAll(src, "\r\n", "\n"), "\n") + strings.Count(strings.ReplaceAll(src, "\r\n", ""), "\r") + 1
		for _, d := range l.Items {
			if d.Pos.File == "tools/t.yaml" && (d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1) {
				t.Fatalf("diagnostic outside the file: %s", d)
			}
		}
		for _, name := range prog.Tools() {
			res, err := prog.Run(context.Background(), name, map[string]any{},
				interpreter.WithTransport(mt), interpreter.WithKV(&steps.MemKV{}))
			if err != nil {
				if !utf8.ValidString(err.Error()) || strings.ContainsAny(err.Error(), "\x1b\x07\x00") {
					t.Fatalf("error with control characters: %q", err.Error())
				}
				continue
			}
			if !json.Valid(res.JSON) {
				t.Fatalf("result is not JSON: %q", res.JSON)
			}
			if n := utf8.RuneCount(res.JSON); n > lim.Output {
				t.Fatalf("result of %d characters over the output limit", n)
			}
			if strings.ContainsAny(string(res.JSON), "\x1b\x07") {
				t.Fatalf("result with control characters: %q", res.JSON)
			}
		}
	})
}
