package interpreter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/stretchr/testify/require"
)

// doc builds a document from a front matter access block and tool files.
func doc(t testing.TB, access string, tools map[string]string) *manifest.Plugin {
	t.Helper()
	files := manifest.Files{"PLUGIN.md": []byte("---\nid: t\nname: T\ndescription: A test document.\nversion: 1.0.0\n" + access + "---\nInstructions.\n")}
	for name, src := range tools {
		files["tools/"+name+".yaml"] = []byte(src)
	}
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), "%s", l.Error())
	return p
}

// tool wraps steps into a read tool without input schema.
func tool(steps string) string {
	return "description: A test tool.\neffect: read\ninput:\n  type: object\nsteps:\n" + steps
}

// campus serves the skeleton's portal on loopback.
func campus(t testing.TB, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// call opens a proxy call whose catalogue maps each named service to srv.
func call(t testing.TB, p *manifest.Plugin, srv *httptest.Server, services ...string) *proxy.Call {
	cat := proxy.Catalogue{}
	for _, s := range services {
		cat[s] = &proxy.Service{Name: s, Origin: srv.URL, Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}}
	}
	px := proxy.New(proxy.Config{Catalogue: proxy.Builtin().Merge(cat),
		Keystore: proxy.MemKeystore(proxy.Secrets{"portal": {Cookies: map[string]string{"JSESSIONID": "s3cr3t-session"}}})})
	return px.NewCall(p.ID, p.Access)
}

func compile(t testing.TB, p *manifest.Plugin, opts ...interpreter.Option) *interpreter.Program {
	t.Helper()
	prog, l := interpreter.Compile(p, opts...)
	require.False(t, l.HasErrors(), "%s", l.Error())
	return prog
}

func run(t testing.TB, prog *interpreter.Program, name string, input any, opts ...interpreter.RunOption) (interpreter.Result, error) {
	t.Helper()
	return prog.Run(context.Background(), name, input, opts...)
}

func readSkeleton(t testing.TB) *manifest.Plugin {
	files, err := manifest.ReadDir(filepath.Join("..", "testdata", "skeleton"))
	require.NoError(t, err)
	p, l := manifest.Parse(files)
	require.False(t, l.HasErrors(), "%s", l.Error())
	return p
}
