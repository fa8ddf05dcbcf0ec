package e2e

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// reportDoc has two cases: one passes, one fails.
func reportDoc(t *testing.T) string {
	return writeFiles(t, filepath.Join(t.TempDir(), "doc"), map[string]string{
		"PLUGIN.md":        "---\nid: report-doc\nname: Report\ndescription: A document with cases.\nversion: 1.0.0\n---\nUse it.\n",
		"tools/hello.yaml": "description: Says hello.\neffect: read\nsteps:\n  - return: '\"hello\"'\n",
		"tests/hello.yaml": "cases:\n  - name: says hello\n    tool: hello\n    expect: {output: hello}\n  - name: says bye\n    tool: hello\n    expect: {output: bye}\n",
	})
}

// TestTestJSONAndJUnit checks `harness test --json` (one JSON object with
// each case) and `--junit FILE` (JUnit XML, read back with encoding/xml in
// the shape CI systems parse).
func TestTestJSONAndJUnit(t *testing.T) {
	home := t.TempDir()
	doc := reportDoc(t)
	junit := filepath.Join(t.TempDir(), "report.xml")
	r := harness(t, home, nil, "test", "--json", "--junit", junit, doc, filepath.Join(doc, "tools"))
	require.Equal(t, 1, r.code, r.stderr)
	var rep struct {
		OK        bool `json:"ok"`
		Documents []struct {
			Path, Plugin   string
			OK             bool
			Passed, Failed int
			Cases          []struct {
				File, Name, Pos, Tool string
				Line, Col             int
				Passed                bool
				Failures              []string
				DurationMs            *float64
			}
		}
		Skipped []string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "stdout is one JSON object: %s", r.stdout)
	require.False(t, rep.OK)
	require.Equal(t, []string{filepath.Join(doc, "tools")}, rep.Skipped)
	require.Len(t, rep.Documents, 1)
	d := rep.Documents[0]
	require.Equal(t, "report-doc", d.Plugin)
	require.Equal(t, 1, d.Passed)
	require.Equal(t, 1, d.Failed)
	require.Len(t, d.Cases, 2)
	require.Equal(t, "says hello", d.Cases[0].Name)
	require.True(t, d.Cases[0].Passed)
	require.Empty(t, d.Cases[0].Failures)
	require.NotNil(t, d.Cases[0].DurationMs)
	c := d.Cases[1]
	require.Equal(t, "hello", c.File, "the test file's name")
	require.Equal(t, "tests/hello.yaml:5:5", c.Pos)
	require.Equal(t, 5, c.Line)
	require.Equal(t, "hello", c.Tool)
	require.False(t, c.Passed)
	require.NotEmpty(t, c.Failures)
	require.Contains(t, strings.Join(c.Failures, "\n"), "bye")

	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var x struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Time     string `xml:"time,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				File      string `xml:"file,attr"`
				Line      int    `xml:"line,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &x), "%s", b)
	require.True(t, bytes.HasPrefix(b, []byte("<?xml")))
	require.Equal(t, 2, x.Tests)
	require.Equal(t, 1, x.Failures)
	require.Equal(t, 0, x.Errors)
	require.Len(t, x.Suites, 1)
	s := x.Suites[0]
	require.Equal(t, "report-doc", s.Name)
	require.Equal(t, 2, s.Tests)
	require.Equal(t, 1, s.Failures)
	require.Regexp(t, `^\d+\.\d{3}$`, s.Time)
	require.Len(t, s.Cases, 2)
	require.Equal(t, "says hello", s.Cases[0].Name)
	require.Equal(t, "report-doc.hello", s.Cases[0].Classname)
	require.Nil(t, s.Cases[0].Failure)
	require.Equal(t, "says bye", s.Cases[1].Name)
	require.Equal(t, "tests/hello.yaml", s.Cases[1].File)
	require.Equal(t, 5, s.Cases[1].Line)
	require.NotNil(t, s.Cases[1].Failure)
	require.NotEmpty(t, s.Cases[1].Failure.Message)
	require.Contains(t, s.Cases[1].Failure.Text, "tests/hello.yaml:5:5: says bye")

	// A document that does not load is an error of its suite.
	bad := writeFiles(t, filepath.Join(t.TempDir(), "bad"), map[string]string{"PLUGIN.md": "---\nid: Bad\n---\n"})
	r = harness(t, home, nil, "test", "--junit", junit, bad)
	require.Equal(t, 1, r.code)
	b, err = os.ReadFile(junit)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, &x), "%s", b)
	require.Equal(t, 1, x.Errors)
	require.Contains(t, string(b), "<error ")
	// The person's report is still printed beside --junit.
	require.Contains(t, r.stdout, "FAIL")
}

// syncBuffer collects a process's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls out until it holds want n times, or fails at the deadline.
func waitFor(t *testing.T, out *syncBuffer, want string, n int, deadline time.Time) {
	t.Helper()
	for strings.Count(out.String(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %d× %q before the deadline; output so far:\n%s", n, want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWatchRerunsOnSave starts `harness test --watch` and `harness lint
// --watch`, edits the document, and reads the rerun's output; an interrupt
// ends the watch with exit 0.
func TestWatchRerunsOnSave(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		first, edit string // what the first run and the run after the edit print
	}{
		{"test", []string{"test", "-v"}, "ok   report-doc: 1 case passed", "FAIL report-doc: 1 of 1 case failed"},
		{"lint", []string{"lint"}, "ok ", "tests/hello.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := writeFiles(t, filepath.Join(t.TempDir(), "doc"), map[string]string{
				"PLUGIN.md":        "---\nid: report-doc\nname: Report\ndescription: A document with cases.\nversion: 1.0.0\n---\nUse it.\n",
				"tools/hello.yaml": "description: Says hello.\neffect: read\nsteps:\n  - return: '\"hello\"'\n",
				"tests/hello.yaml": "cases:\n  - name: says hello\n    tool: hello\n    expect: {output: hello}\n",
			})
			cmd := exec.Command(bin, append(tc.args, "--watch", doc)...)
			cmd.Env = append(os.Environ(), "HARNESS_HOME="+t.TempDir(), "NO_COLOR=1")
			var out syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-done
			})
			deadline := time.Now().Add(30 * time.Second)
			waitFor(t, &out, "watching ", 1, deadline)
			require.Contains(t, out.String(), tc.first)
			// The edit: the case now expects what the tool does not say;
			// for lint, the test file gains an unknown key.
			edit := "cases:\n  - name: says hello\n    tool: hello\n    expect: {output: bye}\n"
			if tc.name == "lint" {
				edit = "cases:\n  - name: says hello\n    tool: hello\n    expectt: {output: hello}\n"
			}
			require.NoError(t, os.WriteFile(filepath.Join(doc, "tests/hello.yaml"), []byte(edit), 0o644))
			waitFor(t, &out, "changed: ", 1, deadline)
			waitFor(t, &out, tc.edit, 1, deadline)
			require.Contains(t, out.String(), filepath.Join(doc, "tests/hello.yaml"))
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			select {
			case err := <-done:
				require.NoError(t, err, "an interrupted watch exits 0; output:\n%s", out.String())
			case <-time.After(10 * time.Second):
				t.Fatalf("the watch did not end on an interrupt; output:\n%s", out.String())
			}
			done <- nil // for the cleanup
		})
	}
}
