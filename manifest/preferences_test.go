package manifest_test

import (
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func prefDoc(front, body string) manifest.Files {
	return manifest.Files{
		"PLUGIN.md":    []byte("---\nid: prefs\nname: P\ndescription: d\nversion: 1.0.0\n" + front + "---\nI.\n" + body),
		"tools/t.yaml": []byte("description: t\neffect: read\nsteps:\n  - jq: '.'\ntitle: T\n"),
	}
}

// TestPreferencesAsTheReferenceWritesThem: preferences are a mapping keyed
// by name, with the reference's kinds (choice, boolean, text, list),
// options {value, label} and screen (default: the first screen); each kind
// gives its value schema, and the old list of {name, …} with kinds enum and
// string and plain options reads as the same preferences, with warnings.
func TestPreferencesAsTheReferenceWritesThem(t *testing.T) {
	p, l := manifest.Parse(prefDoc(`preferences:
  canteen: {title: 食堂, kind: choice, options: [{value: 燕南, label: 燕南食堂}, {value: 家园, label: 家园食堂}], default: 燕南}
  dark: {title: Dark, kind: boolean, default: false, screen: second}
  greeting: {title: Greeting, kind: text, default: hi}
  apps: {title: Apps, kind: list, options: [{value: a, label: A}, {value: b, label: B}], default: [a]}
  tags: {title: Tags, kind: list}
contributes:
  screens:
    - {key: first, title: First, template: w}
    - {key: second, title: Second, template: w}
`, "```json widget w\n{\"type\": \"text\", \"text\": \"w\"}\n```\n"))
	require.False(t, l.HasErrors(), l.Error())
	assert.Empty(t, l.Items, "the reference's spelling needs no warning")
	require.Len(t, p.Preferences, 5)
	by := map[string]manifest.Preference{}
	for _, pr := range p.Preferences {
		by[pr.Name] = pr
	}
	c := by["canteen"]
	assert.Equal(t, "choice", c.Kind)
	assert.Equal(t, []manifest.Option{{Value: "燕南", Label: "燕南食堂"}, {Value: "家园", Label: "家园食堂"}}, c.Options)
	assert.Equal(t, map[string]any{"type": "string", "enum": []any{"燕南", "家园"}}, c.Schema)
	assert.Equal(t, "first", c.Screen, "the first screen by default")
	assert.Equal(t, "second", by["dark"].Screen)
	assert.Equal(t, map[string]any{"type": "boolean"}, by["dark"].Schema)
	assert.Equal(t, map[string]any{"type": "string"}, by["greeting"].Schema)
	assert.Equal(t, map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"a", "b"}}}, by["apps"].Schema)
	assert.Equal(t, map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, by["tags"].Schema)
	require.NotNil(t, by["apps"].Compiled)
	assert.NoError(t, by["apps"].Compiled.Validate([]any{"a", "b"}))
	assert.Error(t, by["apps"].Compiled.Validate([]any{"c"}), "options restrict a list's items")
	assert.Error(t, by["apps"].Compiled.Validate("a"))

	old, l := manifest.Parse(prefDoc(`preferences:
  - {name: canteen, title: 食堂, kind: enum, options: [燕南, 家园], default: 燕南}
  - {name: greeting, title: Greeting, kind: string, default: hi}
  - {name: route, title: Route, kind: integer, options: [7, 4], default: 7}
`, ""))
	require.False(t, l.HasErrors(), l.Error())
	msgs := l.Error()
	assert.Contains(t, msgs, "PLUGIN.md:7:3: warning: preferences as a list of {name, …} is the old spelling: write a mapping keyed by name")
	assert.Contains(t, msgs, `PLUGIN.md:7:38: warning: kind "enum" is the old spelling of "choice": write kind: choice`)
	assert.Contains(t, msgs, `PLUGIN.md:7:54: warning: options item: "燕南" is the old shorthand of an option: write {value, label}`)
	assert.Contains(t, msgs, `PLUGIN.md:8:45: warning: kind "string" is the old spelling of "text": write kind: text`)
	assert.Contains(t, msgs, `PLUGIN.md:9:39: warning: kind "integer" is outside the plugin reference (choice, boolean, text, list)`)
	require.Len(t, old.Preferences, 3)
	o := old.Preferences[0]
	assert.Equal(t, "choice", o.Kind)
	assert.Equal(t, []manifest.Option{{Value: "燕南", Label: "燕南"}, {Value: "家园", Label: "家园"}}, o.Options, "a plain option is its own label")
	assert.Equal(t, c.Schema, o.Schema)
	assert.Equal(t, "text", old.Preferences[1].Kind)
	r := old.Preferences[2]
	assert.Equal(t, "integer", r.Kind, "number and integer stay as they are")
	assert.Equal(t, map[string]any{"type": "integer", "enum": []any{int64(7), int64(4)}}, r.Schema)
	assert.Equal(t, []manifest.Option{{Value: int64(7), Label: "7"}, {Value: int64(4), Label: "4"}}, r.Options)
}
