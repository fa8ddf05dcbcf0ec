package review

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

const sheetFront = "version: 1.0.0\nrequires: [campus-session]\naccess:\n  campus:\n    - card\n    - service: portal\n      paths: [/api/scores/]\n  web: [https://news.example.edu.cn]\n  abilities: [kv]\ni18n:\n  en: {name: Demo, tools: {pay: {title: Pay}}}"

func TestSheetText(t *testing.T) {
	p := doc(t, sheetFront, map[string]string{"pay": "money,userOnly", "look": "read,untrusted"})
	s := NewSheet(p, Info{Hash: "h1:abc", Trust: "community", Link: "https://github.com/a/b/tree/main/x", Commit: strings.Repeat("c", 40)})
	var b bytes.Buffer
	require.NoError(t, s.WriteText(&b, false))
	out := b.String()
	for _, want := range []string{
		"示例 (Demo)  demo 1.0.0",
		"Trust: 社区 (community",
		"Hash: h1:abc",
		"Link: https://github.com/a/b/tree/main/x (commit cccccccccccc)",
		"  campus-session: 使用你的校园登录会话 (uses your campus login session)",
		"  card: 校园卡 (the campus card: balance, spending, payments); any path",
		"  portal: 北京大学门户 (the PKU portal: notices, course table, grades); only paths under /api/scores/",
		"  https://news.example.edu.cn",
		"  kv: 插件自己的小型存储",
		"  look — read: 只读取信息 (only reads); untrusted: results are untrusted",
		"  pay — money: 会花钱 (spends money); userOnly: only you can run it",
		"; title (en \"Pay\")\n",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "\x1b[")
	require.NotContains(t, out, "(wider)")
}

func TestSheetMarksWiderLines(t *testing.T) {
	old := doc(t, strings.Replace(sheetFront, ", tools: {pay: {title: Pay}}", "", 1), map[string]string{"look": "read"})
	newer := doc(t, strings.Replace(strings.Replace(sheetFront, "    - card\n", "    - card\n    - treehole\n", 1), "abilities: [kv]", "abilities: [kv, clipboard]", 1),
		map[string]string{"look": "read", "pay": "money"})
	s := NewSheet(newer, Info{Hash: "h1:new", Trust: "community"})
	s.Mark(Diff(old, newer), old.Version, "h1:old")
	require.True(t, s.Wider())
	var b bytes.Buffer
	require.NoError(t, s.WriteText(&b, false))
	out := b.String()
	require.Contains(t, out, "+ treehole: 北大树洞")
	require.Contains(t, out, "+ clipboard: ")
	require.Contains(t, out, "+ pay — money")
	require.Contains(t, out, "  card: 校园卡", "an unchanged line is not marked")
	require.Contains(t, out, "  look — read")
	require.Contains(t, out, "Changes\n")
	require.Contains(t, out, "+ new campus service treehole")

	b.Reset()
	require.NoError(t, s.WriteText(&b, true))
	require.Contains(t, b.String(), ansiRed+"+ treehole")

	b.Reset()
	require.NoError(t, s.WriteJSON(&b))
	var j struct {
		Campus []struct {
			Service string
			Wider   bool
		}
		Update struct {
			Wider   bool
			Changes []Change
		}
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &j))
	wider := map[string]bool{}
	for _, c := range j.Campus {
		wider[c.Service] = c.Wider
	}
	require.Equal(t, map[string]bool{"card": false, "portal": false, "treehole": true}, wider)
	require.True(t, j.Update.Wider)
	require.NotEmpty(t, j.Update.Changes)
}

// Every service of the proxy's built-in catalogue is explained, and so is
// every capability and ability the manifest knows.
func TestWordsCoverCatalogues(t *testing.T) {
	for _, name := range builtinServices.Names() {
		require.Contains(t, services, name, "no words for campus service %s", name)
	}
	for _, c := range append(manifest.KnownRequires, manifest.OlderRequires...) {
		require.Contains(t, capabilities, c)
	}
	for _, a := range manifest.KnownAbilities {
		require.Contains(t, abilities, a)
	}
	for _, e := range manifest.Effects {
		require.Contains(t, effects, e)
	}
}

func TestTextIsSafe(t *testing.T) {
	s := &Sheet{ID: "x", Name: "a\x1b[2Jb\u202ec", Description: "d\re", Tools: []ToolLine{{Name: "t", Title: "x\x1b]0;t\x07"}},
		Link: "/tmp/canteen\u202edm.NIGULP", Commit: "c\x1b[31m", Update: &UpdateInfo{FromVersion: "1\u2066", FromHash: "h\x07"}}
	var b bytes.Buffer
	require.NoError(t, s.WriteText(&b, false))
	require.NotContains(t, b.String(), "\x1b")
	require.NotContains(t, b.String(), "\u202e")
	require.NotContains(t, b.String(), "\u2066")
	require.NotContains(t, b.String(), "\r")
	require.NotContains(t, b.String(), "\x07")
}
