package review

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiffRespelledPreferencesAndTranslations: a document that moves its
// preferences and translations from the old spellings to the reference's
// (a list of {name, …} with kind enum and plain options, plain-string
// widget and preference titles) declares the same things: the update shows
// no change, so nobody is asked about a respelling; a changed option label
// is a change.
func TestDiffRespelledPreferencesAndTranslations(t *testing.T) {
	widget := "" // (i18n.en.widgets.card names no widget: a warning, no more)
	old := doc(t, "version: 1.0.0\npreferences:\n  - {name: canteen, kind: enum, title: 食堂, options: [燕南, 家园], default: 燕南}\n"+
		"  - {name: note, kind: string, title: 备注}\n"+widget+
		"i18n:\n  en:\n    widgets: {card: Card}\n    preferences: {canteen: Canteen}", map[string]string{"t": "read"})
	now := doc(t, "version: 1.0.0\npreferences:\n"+
		"  canteen: {title: 食堂, kind: choice, options: [{value: 燕南, label: 燕南}, {value: 家园, label: 家园}], default: 燕南}\n"+
		"  note: {title: 备注, kind: text}\n"+widget+
		"i18n:\n  en:\n    widgets: {card: {title: Card}}\n    preferences: {canteen: {title: Canteen}}", map[string]string{"t": "read"})
	require.Equal(t, old.Preferences[0].Schema, now.Preferences[0].Schema)
	assert.Empty(t, Diff(old, now).Changes)

	relabelled := doc(t, "version: 1.0.0\npreferences:\n"+
		"  canteen: {title: 食堂, kind: choice, options: [{value: 燕南, label: 燕南食堂}, {value: 家园, label: 家园}], default: 燕南}\n"+
		"  note: {title: 备注, kind: text}\n"+widget+
		"i18n:\n  en:\n    widgets: {card: {title: Card}}\n    preferences: {canteen: {title: Canteen}}", map[string]string{"t": "read"})
	d := Diff(now, relabelled)
	require.Len(t, d.Changes, 1)
	assert.Equal(t, "preferences", d.Changes[0].Path)
	assert.False(t, d.Wider)
}
