package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pkuinfo/harness/fetch"
	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a stderr that the server's goroutines and the test may
// use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// brokenDoc is a document this engine finds invalid (as one stored by an
// engine that checked less would be), its instructions being text.
func brokenDoc(text string) manifest.Files {
	return manifest.Files{
		"PLUGIN.md":    []byte("---\nid: broken\nname: B\ndescription: B.\nversion: 1.0.0\n---\n" + text + "\n"),
		"tools/t.yaml": []byte("description: T.\neffect: sometimes\nsteps:\n  - return: '1'\n"),
	}
}

// harness mcp says a document's problem once however often the home
// changes (each change reopens the registry), and again when the
// document's content changes, with the same message, through a real MCP
// session whose tool list follows the home.
func TestMCPSaysADocumentsProblemOncePerContent(t *testing.T) {
	home := t.TempDir()
	id := installLocal(t, home, skeletonPath(), "community")
	st, err := fetch.OpenStore(home)
	require.NoError(t, err)
	ctx := context.Background()
	broken := fetch.Entry{ID: "broken", Link: "/nonexistent/broken", Kind: fetch.KindLocal, Trust: "community", Enabled: true}
	require.NoError(t, st.Install(ctx, broken, brokenDoc("first"), false))

	env := map[string]string{"HARNESS_HOME": home}
	changed := make(chan struct{}, 10)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	errs := &lockedBuffer{}
	go func() {
		code := Main([]string{"mcp"}, inR, outW, errs, func(k string) string { return env[k] })
		outW.Close()
		done <- code
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	_, err = cs.ListTools(ctx, nil)
	require.NoError(t, err)

	const problem = "harness: warning: broken is invalid: "
	said := func() int { return strings.Count(errs.String(), problem) }
	require.Equal(t, 1, said(), errs.String())
	require.Contains(t, errs.String(), "tools/t.yaml:2:9", "the problem names FILE:LINE:COL")
	wait := func() {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(15 * time.Second):
			t.Fatal("no tools/list_changed")
		}
	}

	// Two changes of the home, two reopened registries: the problem of the
	// same content is not said again.
	code, _, stderr := runCLI(t, env, "modes", id, "read", "off")
	require.Equal(t, 0, code, stderr)
	wait()
	code, _, stderr = runCLI(t, env, "modes", id, "read", "default")
	require.Equal(t, 0, code, stderr)
	wait()
	assert.Equal(t, 1, said(), errs.String())

	// New content of the document, the same problem: said again, once.
	first := errs.String()
	require.NoError(t, st.Install(ctx, broken, brokenDoc("second"), true))
	deadline := time.Now().Add(15 * time.Second)
	for said() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, 2, said(), errs.String())
	line := func(s string) string {
		s = s[strings.Index(s, problem):]
		return s[:strings.IndexByte(s, '\n')+1]
	}
	assert.Equal(t, line(first), line(strings.TrimPrefix(errs.String(), first)), "the same message, for the new content")
	code, _, stderr = runCLI(t, env, "modes", id, "read", "off")
	require.Equal(t, 0, code, stderr)
	wait()
	assert.Equal(t, 2, said(), errs.String())

	require.NoError(t, cs.Close())
	inW.Close()
	assert.Equal(t, 0, <-done, errs.String())
	assert.Equal(t, 2, said(), errs.String())
}
