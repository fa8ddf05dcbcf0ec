package interpreter_test

import (
	"testing"

	"github.com/pkuinfo/harness/interpreter"
	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// effectTool is a tool of the given effect with steps.
func effectTool(effect, steps string) string {
	return "description: A test tool.\neffect: " + effect + "\ninput:\n  type: object\nsteps:\n" + steps
}

// A tool's effect as the engine sees it: a read tool whose steps can send
// an unsafe method counts as a write, unless the catalogue marks the path
// as a query endpoint; web requests have no query endpoints.
func TestEffectiveEffect(t *testing.T) {
	const access = "access:\n  campus: [card, portal, dean]\n  web: [https://news.example.org]\n"
	for _, tc := range []struct {
		name, effect, steps string
		want                manifest.Effect
		why                 string
	}{
		{"get", "read", "  - request: {service: card, path: /x}\n", manifest.Read, ""},
		{"head", "read", "  - request: {service: card, path: /x, method: HEAD}\n", manifest.Read, ""},
		{"post", "read", "  - request: {service: card, path: /x, method: POST, json: {}}\n", manifest.Write,
			"declared read, sends POST to card /x"},
		{"lower-case delete", "read", "  - request: {service: card, path: '/x/${ $input.id }', method: delete}\n", manifest.Write,
			"declared read, sends DELETE to card /x/…"},
		{"put and patch", "read", "  - request: {service: card, path: /a, method: PUT, body: x}\n  - request: {service: card, path: /b, method: PATCH, body: x}\n",
			manifest.Write, "declared read, sends PUT to card /a and 1 more unsafe request"},
		{"web post", "read", "  - request: {url: 'https://news.example.org/q', method: POST, form: {q: x}}\n", manifest.Write,
			"declared read, sends POST to https://news.example.org"},
		{"query endpoint", "read", "  - request: {service: portal, path: /portal2017/notice/retrAllSchoolNotice.do, method: POST, form: {start: '0'}}\n",
			manifest.Read, ""},
		{"query folder, templated", "read", "  - request: {service: portal, path: '/portal2017/notice/${ $input.x }', method: POST, form: {id: '1'}}\n",
			manifest.Read, ""},
		{"exact query path", "read", "  - request: {service: dean, path: /service/web/courseSearch_do.php, method: POST, form: {a: b}}\n",
			manifest.Read, ""},
		{"exact query path, templated", "read", "  - request: {service: dean, path: '/service/web/${ $input.x }', method: POST, form: {a: b}}\n",
			manifest.Write, "declared read, sends POST to dean /service/web/…"},
		{"template before the folder", "read", "  - request: {service: portal, path: '/portal2017/${ $input.x }/notice/a', method: POST, form: {a: b}}\n",
			manifest.Write, "declared read, sends POST to portal /portal2017/…"},
		{"query path of another service", "read", "  - request: {service: card, path: /portal2017/notice/x, method: POST, form: {a: b}}\n",
			manifest.Write, "declared read, sends POST to card /portal2017/notice/x"},
		{"inside foreach", "read", "  - foreach:\n      in: '[1, 2]'\n      steps:\n        - request: {service: card, path: /x, method: POST, json: {}}\n",
			manifest.Write, "declared read, sends POST to card /x"},
		{"inside paginate", "read", "  - paginate:\n      request: {service: card, path: /x, method: POST, json: {c: '${ $cursor }'}}\n      items: .body\n      next: 'null'\n",
			manifest.Write, "declared read, sends POST to card /x"},
		{"declared write stays", "write", "  - request: {service: card, path: /x, method: POST, json: {}}\n", manifest.Write, ""},
		{"declared money stays", "money", "  - request: {service: card, path: /x, method: POST, json: {}}\n", manifest.Money, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := doc(t, access, map[string]string{"x": effectTool(tc.effect, tc.steps)})
			prog, l := interpreter.Compile(p)
			require.False(t, l.HasErrors(), "%s", l.Error())
			e := prog.Effects(proxy.Builtin())["x"]
			assert.Equal(t, manifest.Effect(tc.effect), e.Declared)
			assert.Equal(t, tc.want, e.Effective)
			assert.Equal(t, tc.why, e.Why())
			assert.Equal(t, e, interpreter.Effects(p, proxy.Builtin())["x"])
			if tc.why != "" {
				require.NotEmpty(t, e.Raised)
				assert.Equal(t, "tools/x.yaml", e.Raised[0].MethodPos.File)
				assert.Positive(t, e.Raised[0].MethodPos.Line)
			}
		})
	}

	// Without a catalogue nothing is a query endpoint.
	p := doc(t, access, map[string]string{"x": effectTool("read", "  - request: {service: portal, path: /portal2017/notice/retrAllSchoolNotice.do, method: POST, form: {a: b}}\n")})
	assert.Equal(t, manifest.Write, interpreter.Effects(p, nil)["x"].Effective)

	// A method known only at run time counts as unsafe.
	u := steps.Use{Service: "portal", Path: "/portal2017/notice/", PathLiteral: false}
	assert.True(t, u.Unsafe())
	e := interpreter.EffectOf(manifest.Read, []steps.Use{{Service: "card", Path: "/x", PathLiteral: true}}, proxy.Builtin())
	assert.Equal(t, manifest.Write, e.Effective)
	assert.Equal(t, "declared read, sends a method chosen at run time to card /x", e.Why())
	assert.False(t, steps.Use{Ability: "kv"}.Unsafe(), "a kv use sends nothing")
}

// A tool whose steps do not compile is still seen as far as they were
// read: its unsafe request counts.
func TestEffectiveEffectOfBrokenTool(t *testing.T) {
	p := doc(t, "access:\n  campus: [card]\n", map[string]string{"x": effectTool("read",
		"  - request: {service: card, path: /x, method: POST, json: {}}\n  - jq: '.['\n")})
	prog, l := interpreter.Compile(p)
	require.True(t, l.HasErrors())
	assert.Equal(t, manifest.Write, prog.Effects(proxy.Builtin())["x"].Effective)
}
