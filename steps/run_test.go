package steps_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A case file (testdata/<kind>/*.txtar) holds:
//
//	access      the document's access block (YAML under "access:")
//	tool.yaml   the tool "tool"
//	input.json  its input (default {})
//	limits      host limits, "Name: value" lines (steps.Limits field names)
//	kv          the store before the run (a JSON object); kv-want after it
//	serve PATH  a response: header lines, a blank line, the body; "Status: N" sets the status
//	want        the result JSON; or error: the exact error; or lint: the exact diagnostics
//	requests    the requests the server saw, "METHOD REQUEST-URI" lines (bodies after " <- ")
//
// The campus service "portal" and the web origin http://news.example.edu.cn
// both reach one loopback server.
var update = flag.Bool("update", false, "rewrite the lint and error sections of the case files")

func TestCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.txtar"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(file, "testdata"+string(filepath.Separator)), ".txtar"), func(t *testing.T) {
			runCase(t, file)
		})
	}
}

type caseFile struct {
	access, tool, input, limits, kv, kvWant string
	serve                                   map[string]string
	want, errWant, lint, requests           *string
}

func readCase(t testing.TB, file string) *caseFile {
	ar, err := txtar.ParseFile(file)
	require.NoError(t, err)
	c := &caseFile{serve: map[string]string{}, input: "{}"}
	for _, f := range ar.Files {
		data := string(f.Data)
		switch {
		case f.Name == "access":
			c.access = data
		case f.Name == "tool.yaml":
			c.tool = data
		case f.Name == "input.json":
			c.input = data
		case f.Name == "limits":
			c.limits = data
		case f.Name == "kv":
			c.kv = data
		case f.Name == "kv-want":
			c.kvWant = data
		case strings.HasPrefix(f.Name, "serve "):
			c.serve[strings.TrimPrefix(f.Name, "serve ")] = data
		case f.Name == "want":
			c.want = &data
		case f.Name == "error":
			c.errWant = &data
		case f.Name == "lint":
			c.lint = &data
		case f.Name == "requests":
			c.requests = &data
		default:
			t.Fatalf("unknown section %q", f.Name)
		}
	}
	return c
}

func caseDoc(c *caseFile) manifest.Files {
	access := ""
	if strings.TrimSpace(c.access) != "" {
		access = "access:\n"
		for _, ln := range strings.Split(strings.TrimRight(c.access, "\n"), "\n") {
			access += "  " + ln + "\n"
		}
	}
	return manifest.Files{
		"PLUGIN.md":       []byte("---\nid: case\nname: Case\ndescription: A test case.\nversion: 1.0.0\n" + access + "---\nInstructions.\n"),
		"tools/tool.yaml": []byte(titled(c.tool)),
	}
}

// titled gives a case's tool a title at its end (positions stay), so the
// reference's rule that every tool has one adds no warning to each case.
func titled(tool string) string {
	if strings.HasPrefix(tool, "title:") || strings.Contains(tool, "\ntitle:") {
		return tool
	}
	if !strings.HasSuffix(tool, "\n") {
		tool += "\n"
	}
	return tool + "title: Case\n"
}

func caseLimits(t testing.TB, src string) steps.Limits {
	lim := steps.DefaultLimits()
	v := reflect.ValueOf(&lim).Elem()
	for _, ln := range strings.Split(src, "\n") {
		k, val, ok := strings.Cut(strings.TrimSpace(ln), ":")
		if !ok {
			continue
		}
		f := v.FieldByName(strings.TrimSpace(k))
		require.True(t, f.IsValid(), "no limit %q", k)
		val = strings.TrimSpace(val)
		if f.Type() == reflect.TypeOf(time.Duration(0)) {
			d, err := time.ParseDuration(val)
			require.NoError(t, err)
			f.SetInt(int64(d))
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		require.NoError(t, err)
		f.SetInt(n)
	}
	return lim
}

// server serves the case's responses and records the requests.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func serve(t testing.TB, responses map[string]string) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		line := r.Method + " " + r.URL.RequestURI()
		if len(body) > 0 {
			line += " <- " + string(body)
		}
		s.mu.Lock()
		s.seen = append(s.seen, line)
		s.mu.Unlock()
		resp, ok := responses[r.URL.RequestURI()]
		if !ok {
			resp, ok = responses[r.URL.Path]
		}
		if !ok {
			// A key ending in / serves every path below it.
			best := ""
			for k := range responses {
				if strings.HasSuffix(k, "/") && strings.HasPrefix(r.URL.Path, k) && len(k) > len(best) {
					best = k
				}
			}
			resp, ok = responses[best]
		}
		if !ok {
			http.Error(w, "not served: "+r.URL.RequestURI(), http.StatusNotFound)
			return
		}
		head, bodyText, _ := strings.Cut(resp, "\n\n")
		status := 200
		sc := bufio.NewScanner(strings.NewReader(head))
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			if k == "Status" {
				status, _ = strconv.Atoi(strings.TrimSpace(v))
				continue
			}
			w.Header().Add(k, strings.TrimSpace(v))
		}
		if status == 0 {
			// A stalled server, for timeouts.
			<-r.Context().Done()
			return
		}
		w.WriteHeader(status)
		io.WriteString(w, bodyText)
	}))
	t.Cleanup(s.Close)
	return s
}

func newCall(t testing.TB, p *manifest.Plugin, s *httptest.Server) *proxy.Call {
	px := proxy.New(proxy.Config{
		Catalogue: proxy.Builtin().Merge(proxy.Catalogue{"portal": &proxy.Service{Name: "portal", Origin: s.URL,
			Auth: proxy.Auth{Cookies: []string{"JSESSIONID"}}, Login: proxy.Login{Redirect: "/iaaa/login"}}}),
		Keystore: proxy.MemKeystore(proxy.Secrets{"portal": {Cookies: map[string]string{"JSESSIONID": "s3cr3t-session"}}}),
		Resolve:  map[string]string{"news.example.edu.cn:80": s.Listener.Addr().String()},
	})
	return px.NewCall(p.ID, p.Access)
}

func runCase(t *testing.T, file string) {
	c := readCase(t, file)
	p, l := manifest.Parse(caseDoc(c))
	lim := caseLimits(t, c.limits)
	prog, cl := interpreter.Compile(p, interpreter.WithLimits(lim))
	l.Merge(cl)
	l.Sort()
	if c.lint != nil {
		var got strings.Builder
		for _, d := range l.Items {
			got.WriteString(d.String() + "\n")
		}
		if *update && *c.lint != got.String() {
			rewrite(t, file, "lint", got.String())
		}
		assert.Equal(t, *c.lint, got.String())
		return
	}
	require.False(t, l.HasErrors(), "%s", l.Error())
	srv := serve(t, c.serve)
	kv := &steps.MemKV{}
	if c.kv != "" {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.kv), &m))
		for k, v := range m {
			require.NoError(t, kv.Set(k, steps.FromGo(v)))
		}
	}
	input, err := steps.DecodeJSON([]byte(c.input), 64)
	require.NoError(t, err)
	call := newCall(t, p, srv.Server)
	res, err := prog.Run(context.Background(), "tool", input,
		interpreter.WithTransport(call), interpreter.WithKV(kv), interpreter.WithRedact(call.Redact))
	switch {
	case c.errWant != nil:
		require.Error(t, err, "result: %s", res.JSON)
		if *update && strings.TrimSpace(*c.errWant) != err.Error() {
			rewrite(t, file, "error", err.Error()+"\n")
		}
		assert.Equal(t, strings.TrimSpace(*c.errWant), err.Error())
	case c.want != nil:
		require.NoError(t, err)
		assert.JSONEq(t, *c.want, string(res.JSON))
	default:
		t.Fatal("a case needs want, error or lint")
	}
	if c.requests != nil {
		srv.mu.Lock()
		got := strings.Join(srv.seen, "\n")
		srv.mu.Unlock()
		assert.Equal(t, strings.TrimSpace(*c.requests), got)
	}
	if c.kvWant != "" {
		var want map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.kvWant), &want))
		got := map[string]any{}
		for k := range want {
			v, ok, err := kv.Get(k)
			require.NoError(t, err)
			if ok {
				b, _ := steps.Encode(v, 64)
				var x any
				json.Unmarshal(b, &x)
				got[k] = x
			}
		}
		assert.Equal(t, want, got)
	}
}

// rewrite replaces one section of a case file.
func rewrite(t testing.TB, file, section, text string) {
	ar, err := txtar.ParseFile(file)
	require.NoError(t, err)
	for i := range ar.Files {
		if ar.Files[i].Name == section {
			ar.Files[i].Data = []byte(text)
		}
	}
	require.NoError(t, os.WriteFile(file, txtar.Format(ar), 0o644))
}

// TestEveryKindHasCases: a kind without a summary, an example or a testdata
// folder fails.
func TestEveryKindHasCases(t *testing.T) {
	r := steps.Builtin()
	for _, k := range r.Kinds() {
		spec, _ := r.Spec(k)
		assert.NotEmpty(t, spec.Summary, k)
		assert.NotEmpty(t, spec.Example, k)
		assert.True(t, spec.Short != "" || len(spec.Fields()) > 0, "%s documents neither its scalar nor its mapping form", k)
		for _, f := range spec.Fields() {
			assert.NotEmpty(t, f.Doc, "%s.%s", k, f.Name)
		}
		cases, _ := filepath.Glob(filepath.Join("testdata", k, "*.txtar"))
		assert.NotEmpty(t, cases, "kind %s has no testdata/%s/*.txtar", k, k)
	}
	dirs, _ := os.ReadDir("testdata")
	for _, d := range dirs {
		if _, ok := r.Spec(d.Name()); d.IsDir() && !ok && d.Name() != "common" && d.Name() != "fuzz" {
			t.Errorf("testdata/%s names no kind", d.Name())
		}
	}
}

// TestSpecExamples runs each kind's example as a tool: it compiles, and
// runs without error when it needs no network or store.
func TestSpecExamples(t *testing.T) {
	r := steps.Builtin()
	for _, k := range r.Kinds() {
		spec, _ := r.Spec(k)
		t.Run(k, func(t *testing.T) {
			src := "description: Example.\neffect: read\nsteps:\n"
			for _, ln := range strings.Split(spec.Example, "\n") {
				src += "  " + ln + "\n"
			}
			c := &caseFile{tool: src, access: "campus: [portal]\nabilities: [kv]\n"}
			p, l := manifest.Parse(caseDoc(c))
			require.False(t, l.HasErrors(), "%s", l.Error())
			prog, l := interpreter.Compile(p)
			require.False(t, l.HasErrors(), "%s\n%s", l.Error(), src)
			if spec.Caps.Network {
				return
			}
			_, err := prog.Run(context.Background(), "tool", map[string]any{"building": "二教"}, interpreter.WithKV(&steps.MemKV{}))
			if !spec.Caps.Ends || k == "return" || k == "status" {
				require.NoError(t, err)
			}
		})
	}
}
