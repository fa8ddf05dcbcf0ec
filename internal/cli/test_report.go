package cli

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/plugintest"
)

// The machine-readable results of `harness test`: --json on stdout and
// --junit FILE (docs/plugin-format.md, "Reports").

// testRun is what one `harness test` run found, per path given.
type testRun struct {
	Docs    []testDoc
	Skipped []string
}

// testDoc is one path's outcome: a report, or an error reading it.
type testDoc struct {
	Path string
	Rep  *plugintest.Report
	Err  error
}

func (r *testRun) ok() bool {
	for _, d := range r.Docs {
		if d.Err != nil || !d.Rep.OK() {
			return false
		}
	}
	return true
}

// jsonCase is one case in --json.
type jsonCase struct {
	File       string   `json:"file"`
	Name       string   `json:"name"`
	Pos        string   `json:"pos"`
	Line       int      `json:"line"`
	Col        int      `json:"col"`
	Tool       string   `json:"tool"`
	Passed     bool     `json:"passed"`
	Failures   []string `json:"failures"`
	DurationMs float64  `json:"durationMs"`
}

// jsonDoc is one document in --json.
type jsonDoc struct {
	Path     string            `json:"path"`
	Plugin   string            `json:"plugin"`
	OK       bool              `json:"ok"`
	Error    string            `json:"error,omitempty"`
	Problems []diag.Diagnostic `json:"problems"`
	Cases    []jsonCase        `json:"cases"`
	Passed   int               `json:"passed"`
	Failed   int               `json:"failed"`
}

// jsonReport is the whole of --json.
type jsonReport struct {
	OK        bool      `json:"ok"`
	Documents []jsonDoc `json:"documents"`
	Skipped   []string  `json:"skipped"`
}

func (r *testRun) json() jsonReport {
	out := jsonReport{OK: r.ok(), Documents: []jsonDoc{}, Skipped: r.Skipped}
	if out.Skipped == nil {
		out.Skipped = []string{}
	}
	for _, d := range r.Docs {
		jd := jsonDoc{Path: d.Path, Problems: []diag.Diagnostic{}, Cases: []jsonCase{}}
		if d.Err != nil {
			jd.Error = terminalSafe(d.Err.Error())
			out.Documents = append(out.Documents, jd)
			continue
		}
		jd.Plugin, jd.OK = d.Rep.Plugin, d.Rep.OK()
		if d.Rep.Problems.Items != nil {
			jd.Problems = d.Rep.Problems.Items
		}
		for _, c := range d.Rep.Cases {
			f := c.Failures
			if f == nil {
				f = []string{}
			}
			jd.Cases = append(jd.Cases, jsonCase{File: c.File, Name: c.Name, Pos: c.Pos.String(), Line: c.Pos.Line, Col: c.Pos.Col,
				Tool: c.Tool, Passed: c.Passed(), Failures: f, DurationMs: float64(c.Duration.Microseconds()) / 1000})
			if c.Passed() {
				jd.Passed++
			} else {
				jd.Failed++
			}
		}
		out.Documents = append(out.Documents, jd)
	}
	return out
}

// The JUnit XML shape CI systems read (Jenkins, GitLab, GitHub actions'
// reporters): testsuites > testsuite per document > testcase per case,
// with failure or error children.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// firstLine is a message attribute: the first line, at most 200 characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// xmlSafe drops what XML 1.0 cannot hold (most control characters), which
// encoding/xml would otherwise write as U+FFFD anyway.
func xmlSafe(s string) string { return terminalSafe(s) }

func (r *testRun) junit(now time.Time) junitSuites {
	out := junitSuites{Name: "harness test"}
	var total time.Duration
	for _, d := range r.Docs {
		s := junitSuite{Name: d.Path, Timestamp: now.UTC().Format("2006-01-02T15:04:05")}
		var dt time.Duration
		switch {
		case d.Err != nil:
			s.Cases = append(s.Cases, junitCase{Name: "read the document", Classname: d.Path, Time: seconds(0),
				Error: &junitProblem{Message: firstLine(xmlSafe(d.Err.Error())), Type: "document", Text: xmlSafe(d.Err.Error())}})
		case d.Rep.Problems.HasErrors() || len(d.Rep.Cases) == 0:
			if d.Rep.Plugin != "" {
				s.Name = d.Rep.Plugin
			}
			var b strings.Builder
			for _, p := range d.Rep.Problems.Items {
				b.WriteString(xmlSafe(p.String()) + "\n")
			}
			msg := "the document or its tests have errors; no case ran"
			if !d.Rep.Problems.HasErrors() {
				msg = "no test cases"
			}
			s.Cases = append(s.Cases, junitCase{Name: "load the document and its tests", Classname: s.Name, Time: seconds(0),
				Error: &junitProblem{Message: msg, Type: "document", Text: b.String()}})
		default:
			s.Name = d.Rep.Plugin
			for _, c := range d.Rep.Cases {
				jc := junitCase{Name: xmlSafe(c.Name), Classname: xmlSafe(d.Rep.Plugin + "." + strings.TrimSuffix(strings.TrimSuffix(c.File, ".yaml"), ".yml")),
					File: xmlSafe(c.Pos.File), Line: c.Pos.Line, Time: seconds(c.Duration)}
				if !c.Passed() {
					text := xmlSafe(c.Pos.String() + ": " + c.Name + " (tool " + c.Tool + ")\n" + strings.Join(c.Failures, "\n"))
					jc.Failure = &junitProblem{Message: firstLine(xmlSafe(c.Failures[0])), Type: "case", Text: text}
				}
				dt += c.Duration
				s.Cases = append(s.Cases, jc)
			}
		}
		for _, c := range s.Cases {
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
			if c.Error != nil {
				s.Errors++
			}
		}
		s.Time = seconds(dt)
		total += dt
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Suites = append(out.Suites, s)
	}
	out.Time = seconds(total)
	return out
}

// writeJUnit writes the JUnit XML file atomically.
func writeJUnit(path string, r *testRun, now time.Time) error {
	b, err := xml.MarshalIndent(r.junit(now), "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	if err := atomicfile.Write(path, b, 0o644); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}
