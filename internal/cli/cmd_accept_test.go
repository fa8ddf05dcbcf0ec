package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// TestAcceptRefusesAnInvalidPending: a pending version is checked when a
// check finds it, by the engine of that day. One kept from an engine that
// did not check steps (or one whose checks became stricter) was applied by
// accept as it was, and its tools failed from then on; install would have
// refused it. accept checks it as install does.
func TestAcceptRefusesAnInvalidPending(t *testing.T) {
	home := t.TempDir()
	ctx := context.Background()
	st, err := fetch.OpenStore(home)
	require.NoError(t, err)
	doc := func(version, step string) manifest.Files {
		return manifest.Files{"PLUGIN.md": []byte("---\nid: stale\nname: S\ndescription: d\nversion: " + version +
			"\n---\nI.\n```yaml tool t\ndescription: t\neffect: read\nsteps:\n  - " + step + "\n```\n")}
	}
	v1 := doc("1.0.0", "return: '1'")
	h1, err := v1.Hash()
	require.NoError(t, err)
	require.NoError(t, st.Install(ctx, fetch.Entry{ID: "stale", Version: "1.0.0", Link: "https://example.edu.cn/stale/PLUGIN.md",
		Kind: fetch.KindURL, Hash: h1, Trust: fetch.TrustCommunity, Installed: time.Now(), Enabled: true}, v1, false))
	require.NoError(t, st.Update(ctx, func(tx *fetch.Tx) error {
		h, err := tx.Put(doc("1.1.0", "frobnicate: 1"))
		if err != nil {
			return err
		}
		tx.State.Plugins["stale"].Pending = &fetch.Pending{Hash: h, Version: "1.1.0", Wider: true}
		return nil
	}))
	code, out, errs := runCLI(t, nil, "--home", home, "accept", "stale")
	require.Equal(t, 1, code, out)
	require.Contains(t, errs, "frobnicate")
	e, err := st.Get("stale")
	require.NoError(t, err)
	require.Equal(t, "1.0.0", e.Version)
	require.NotNil(t, e.Pending)
}

// TestAcceptAppliesOnlyWhatItShowed: with no sheet shown (here: the
// pending version's files are not in the store), nothing applies, and the
// message says why. The same rule keeps an update that another run holds
// after the sheet was looked for from applying unseen.
func TestAcceptAppliesOnlyWhatItShowed(t *testing.T) {
	home := t.TempDir()
	ctx := context.Background()
	st, err := fetch.OpenStore(home)
	require.NoError(t, err)
	v1 := manifest.Files{"PLUGIN.md": []byte("---\nid: shown\nname: S\ndescription: d\nversion: 1.0.0\n---\nI.\n")}
	h1, err := v1.Hash()
	require.NoError(t, err)
	require.NoError(t, st.Install(ctx, fetch.Entry{ID: "shown", Version: "1.0.0", Link: "https://example.edu.cn/shown/PLUGIN.md",
		Kind: fetch.KindURL, Hash: h1, Trust: fetch.TrustCommunity, Installed: time.Now(), Enabled: true}, v1, false))
	missing := "h1:" + strings.Repeat("A", 43) + "="
	require.NoError(t, st.Update(ctx, func(tx *fetch.Tx) error {
		tx.State.Plugins["shown"].Pending = &fetch.Pending{Hash: missing, Version: "2.0.0", Wider: true}
		return nil
	}))
	code, out, errs := runCLI(t, nil, "--home", home, "accept", "shown")
	require.Equal(t, 1, code, out)
	require.Empty(t, out)
	require.Contains(t, errs, "could not be read to show its sheet")
	require.Contains(t, errs, "stored files of "+missing)
	e, err := st.Get("shown")
	require.NoError(t, err)
	require.Equal(t, "1.0.0", e.Version)
	require.Equal(t, h1, e.Hash)
}
