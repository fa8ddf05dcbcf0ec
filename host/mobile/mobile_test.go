package mobile_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/host/mobile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type keys struct{ m map[string]string }

func (k *keys) Get(svc string) (string, error) { return k.m[svc], nil }
func (k *keys) Update(svc, cookies string) error {
	k.m["updated:"+svc] = cookies
	return nil
}

type approver struct {
	yes  bool
	seen []string
}

func (a *approver) Approve(req string) (bool, error) { a.seen = append(a.seen, req); return a.yes, nil }

func skeletonJSON(t *testing.T) string {
	m := map[string]string{}
	root := filepath.Join("..", "..", "testdata", "skeleton")
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	b, _ := json.Marshal(m)
	return string(b)
}

// The JSON facade: configure, load a document from its files, list the
// catalogue, decide and run calls; sessions come from the app's keystore
// and never show in an answer.
func TestFacade(t *testing.T) {
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("JSESSIONID"); err != nil || c.Value != "s3cr3t-session" {
			http.Error(w, "no session", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"rooms":[{"name":"二教101","capacity":120}],"echo":"s3cr3t-session"}`)
	}))
	defer portal.Close()
	cfg := `{"services":{"portal":{"origin":"` + portal.URL + `","auth":{"cookies":["JSESSIONID"]},"login":{"status":[401]}}},"now":"2030-05-06T09:00:00+08:00"}`
	ks := &keys{m: map[string]string{"portal": `{"cookies":{"JSESSIONID":"s3cr3t-session"}}`}}
	e, err := mobile.New(cfg, ks)
	require.NoError(t, err)

	out, err := e.Load(skeletonJSON(t), "community")
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"classrooms-example","tools":["free"]}`, out)

	cat, err := e.Catalogue("")
	require.NoError(t, err)
	assert.Contains(t, cat, `"name":"classrooms-example__free"`)

	d, err := e.Decide(`{"tool":"classrooms-example__free","actor":"agent","input":{}}`)
	require.NoError(t, err)
	assert.Contains(t, d, `"reason":"bad_input"`)
	d, err = e.Decide(`{"tool":"classrooms-example.free","actor":"agent","input":{"building":"二教"}}`)
	require.NoError(t, err)
	assert.Contains(t, d, `"allow":true`)

	res, err := e.Run(`{"tool":"classrooms-example.free","actor":"agent","input":{"building":"二教"}}`, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"source":{"plugin":"classrooms-example","tool":"free","trust":"community"},"untrusted":true,"data":{"building":"二教","rooms":[{"room":"二教101","seats":120}]},"full":{"building":"二教","rooms":[{"room":"二教101","seats":120}]}}`, res)

	// Bad JSON, unknown keys and over-long text are errors, not panics.
	for _, bad := range []string{`{`, `{"tool":"x","extra":1}`, `{"tool":"` + strings.Repeat("x", mobile.MaxCallBytes) + `"}`} {
		_, err := e.Run(bad, nil)
		assert.Error(t, err)
	}
	_, err = mobile.New(`{"services":{"portal":{"origin":"ftp://x"}}}`, nil)
	assert.Error(t, err)
	_, err = e.Load(`{"PLUGIN.md":"not a document"}`, "community")
	assert.Error(t, err)
}

// The tainted agent's write asks: the approver gets the request as JSON
// and its no refuses the call.
func TestFacadeApproval(t *testing.T) {
	e, err := mobile.New("", nil)
	require.NoError(t, err)
	files, _ := json.Marshal(map[string]string{
		"PLUGIN.md":    "---\nid: notes\nname: N\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/w.yaml": "description: d\neffect: write\nsteps:\n  - return: '\"done\"'\n",
	})
	_, err = e.Load(string(files), "community")
	require.NoError(t, err)
	for _, yes := range []bool{false, true} {
		ap := &approver{yes: yes}
		res, err := e.Run(`{"tool":"notes.w","actor":"agent"}`, ap)
		require.Len(t, ap.seen, 1)
		assert.Contains(t, ap.seen[0], `"tool":"notes.w"`)
		if !yes {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		assert.Contains(t, res, `"data":"done"`)
	}
}

// The exported API has the shape gomobile bind accepts: no maps, slices
// (but []byte), variadic functions or other kinds in signatures.
func TestFacadeShape(t *testing.T) {
	ok := func(tp reflect.Type) bool {
		switch tp.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64, reflect.Interface:
			return true
		case reflect.Slice:
			return tp.Elem().Kind() == reflect.Uint8
		case reflect.Ptr:
			return tp.Elem().Kind() == reflect.Struct
		}
		return false
	}
	check := func(name string, ft reflect.Type, skip int) {
		assert.False(t, ft.IsVariadic(), name)
		for i := skip; i < ft.NumIn(); i++ {
			assert.True(t, ok(ft.In(i)), "%s parameter %d: %v", name, i, ft.In(i))
		}
		for i := 0; i < ft.NumOut(); i++ {
			assert.True(t, ok(ft.Out(i)), "%s result %d: %v", name, i, ft.Out(i))
		}
	}
	check("New", reflect.TypeOf(mobile.New), 0)
	et := reflect.TypeOf(&mobile.Engine{})
	for i := 0; i < et.NumMethod(); i++ {
		check(et.Method(i).Name, et.Method(i).Type, 1)
	}
	for _, it := range []reflect.Type{reflect.TypeOf((*mobile.Keystore)(nil)).Elem(), reflect.TypeOf((*mobile.Approver)(nil)).Elem(),
		reflect.TypeOf((*mobile.Answerer)(nil)).Elem()} {
		for i := 0; i < it.NumMethod(); i++ {
			check(it.Method(i).Name, it.Method(i).Type, 0)
		}
	}
	assert.Equal(t, 8, et.NumMethod()+1, "Load, Catalogue, Decide, Run, RunAnswered, Grants, Revoke (+New)")
}

type answerer struct {
	answer string
	seen   []string
}

func (a *answerer) Answer(req string) (string, error) {
	a.seen = append(a.seen, req)
	return a.answer, nil
}

// TestFacadeStandingGrant: RunAnswered's Answerer may answer always where
// the request offers it ("always": true): the next call runs without
// asking and its steps see $grant "always"; Grants lists it, Revoke takes
// it back and the call asks again. Run's Approver keeps answering once.
func TestFacadeStandingGrant(t *testing.T) {
	e, err := mobile.New("", nil)
	require.NoError(t, err)
	files, _ := json.Marshal(map[string]string{
		"PLUGIN.md":    "---\nid: notes\nname: N\ndescription: d\nversion: 1.0.0\n---\nI.\n",
		"tools/w.yaml": "description: d\neffect: write\nsteps:\n  - return: '$grant'\n",
	})
	_, err = e.Load(string(files), "official")
	require.NoError(t, err)
	const call = `{"tool":"notes.w","actor":"agent"}`
	res, err := e.Run(call, &approver{yes: true})
	require.NoError(t, err)
	assert.Contains(t, res, `"data":"once"`)
	a := &answerer{answer: "always"}
	res, err = e.RunAnswered(call, a)
	require.NoError(t, err)
	require.Len(t, a.seen, 1)
	assert.Contains(t, a.seen[0], `"always":true`)
	assert.Contains(t, res, `"data":"always"`)
	res, err = e.RunAnswered(call, a)
	require.NoError(t, err)
	assert.Len(t, a.seen, 1, "the standing grant runs it without asking")
	assert.Contains(t, res, `"data":"always"`)
	gs, err := e.Grants()
	require.NoError(t, err)
	assert.Contains(t, gs, `"plugin":"notes"`)
	assert.Contains(t, gs, `"applies":true`)
	had, err := e.Revoke("notes", "w")
	require.NoError(t, err)
	assert.True(t, had)
	_, err = e.RunAnswered(call, &answerer{answer: "no"})
	require.Error(t, err, "revoked: asks again, and no is no")
}
