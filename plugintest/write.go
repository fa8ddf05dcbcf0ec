package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/manifest"
	"go.yaml.in/yaml/v3"
)

// WriteOptions say how a recording is written.
type WriteOptions struct {
	// Scrub are personal values (a student id, a name) replaced, in the
	// exchanges, the input and the expectation, by placeholders of the
	// same shape: the same value always by the same placeholder, so the
	// case still passes. What the host's login knows of the student (the
	// keystore's login section) is scrubbed without being listed.
	Scrub []string
}

// TestFile renders the recording as a test file (the tests/NAME.yaml
// format): fake sessions for the campus services it reached, the case with
// its exchanges, and the result as the expectation. Every credential the
// host's proxy knows becomes proxy.Marker wherever the proxy's redactor
// finds it (raw or in any of its encodings), in every part of the case. It
// refuses a failed run, and checks that the redactor finds no credential
// and no value to scrub left in the text.
func (r *Recording) TestFile(opts WriteOptions) ([]byte, error) {
	if r.Err != nil {
		return nil, fmt.Errorf("the run failed, so there is nothing to record: %v", r.Err)
	}
	c := r.Case
	before, _ := json.Marshal(c)
	sc, err := newScrubber(append(append([]string(nil), opts.Scrub...), r.identity...), string(before))
	if err != nil {
		return nil, err
	}
	sc.redact = r.redact
	root := &yaml.Node{Kind: yaml.MappingNode}
	note := "Recorded by harness record from a live run of " + c.Tool
	if c.Now != nil {
		note += " at " + c.Now.Format(time.RFC3339)
	}
	note += ". The exchanges are what the steps saw (no credential reaches them)"
	if len(sc.values) > 0 {
		note += fmt.Sprintf("; %d personal value(s) are replaced by placeholders", len(sc.values))
	}
	root.HeadComment = note + "."
	if sec := r.fakeSecrets(c); sec != nil {
		key := str("secrets")
		key.HeadComment = "fake session values, standing for the live session: the replay checks the proxy attaches them"
		root.Content = append(root.Content, key, sec)
	}
	cn, err := caseNode(c, sc)
	if err != nil {
		return nil, err
	}
	root.Content = append(root.Content, str("cases"), &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{cn}})
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	text := b.Bytes()
	if r.redact != nil && r.redact(string(text)) != string(text) {
		return nil, errors.New("a session value would be written into the test case; nothing is written")
	}
	for i := range sc.values {
		if len(sc.spans(i, string(text))) > 0 {
			return nil, fmt.Errorf("value %d to scrub is still in the test case (in a form the scrubber does not know); nothing is written", i+1)
		}
	}
	return text, nil
}

// fakeSecrets gives each campus service the case reaches whose catalogue
// entry names session cookies or headers a fake value for each.
func (r *Recording) fakeSecrets(c *Case) *yaml.Node {
	seen := map[string]bool{}
	var out *yaml.Node
	for _, e := range c.Exchanges {
		if e.Service == "" || seen[e.Service] {
			continue
		}
		seen[e.Service] = true
		s := r.cat[e.Service]
		if s == nil || len(s.Auth.Cookies)+len(s.Auth.Headers) == 0 {
			continue
		}
		svc := &yaml.Node{Kind: yaml.MappingNode}
		for _, kind := range []struct {
			key   string
			names []string
		}{{"cookies", s.Auth.Cookies}, {"headers", s.Auth.Headers}} {
			if len(kind.names) == 0 {
				continue
			}
			m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			for _, n := range kind.names {
				if n == "*" {
					n = "session"
				}
				m.Content = append(m.Content, str(n), str("recorded-"+strings.ToLower(n)+"-0001"))
			}
			svc.Content = append(svc.Content, str(kind.key), m)
		}
		if out == nil {
			out = &yaml.Node{Kind: yaml.MappingNode}
		}
		out.Content = append(out.Content, str(e.Service), svc)
	}
	return out
}

func caseNode(c *Case, sc *scrubber) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { n.Content = append(n.Content, str(k), v) }
	add("name", str(sc.str(c.Name)))
	add("tool", str(c.Tool))
	in := sc.value(normalize(c.Input))
	if !yamlSafe(in, 0) {
		return nil, errors.New("the input has keys a test file cannot hold (non-ASCII, or differing only in case)")
	}
	add("input", flow(valueNode(in)))
	if c.Actor != "" && c.Actor != "user" {
		add("actor", str(c.Actor))
	}
	if c.Trust != "" && c.Trust != "community" {
		add("trust", str(c.Trust))
	}
	if c.Tainted {
		add("tainted", boolNode(true))
	}
	if c.Approve != nil {
		add("approve", boolNode(*c.Approve))
	}
	for _, x := range []struct {
		key string
		m   map[string]any
	}{{"prefs", c.Prefs}, {"kv", c.KV}} {
		if len(x.m) == 0 {
			continue
		}
		v := sc.value(normalize(x.m))
		if !yamlSafe(v, 0) {
			return nil, fmt.Errorf("the case's %s has keys a test file cannot hold", x.key)
		}
		add(x.key, valueNode(v))
	}
	if c.Now != nil {
		add("now", str(c.Now.Format(time.RFC3339Nano)))
	}
	if len(c.Exchanges) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range c.Exchanges {
			en, err := exchangeNode(e, sc)
			if err != nil {
				return nil, err
			}
			seq.Content = append(seq.Content, en)
		}
		add("exchanges", seq)
	}
	ex := &yaml.Node{Kind: yaml.MappingNode}
	if c.Expect.HasOutput {
		out := sc.value(normalize(c.Expect.Output))
		if yamlSafe(out, 0) {
			ex.Content = append(ex.Content, str("output"), valueNode(out))
		} else {
			// Keys YAML in a test file cannot hold: the same comparison as
			// a jq condition, whose text can.
			b, err := marshal(out)
			if err != nil {
				return nil, err
			}
			ex.Content = append(ex.Content, str("jq"), &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{str(". == " + string(b))}})
		}
	}
	if len(c.Expect.KV) > 0 {
		kv := sc.value(normalize(c.Expect.KV))
		if !yamlSafe(kv, 0) {
			return nil, errors.New("the store's keys cannot be held by a test file")
		}
		ex.Content = append(ex.Content, str("kv"), valueNode(kv))
	}
	add("expect", ex)
	return n, nil
}

func exchangeNode(e *Exchange, sc *scrubber) (*yaml.Node, error) {
	rq := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	add := func(m *yaml.Node, k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }
	if e.Service != "" {
		add(rq, "service", str(e.Service))
	} else {
		add(rq, "origin", str(e.Origin))
	}
	if e.Method != "GET" {
		add(rq, "method", str(e.Method))
	}
	add(rq, "path", str(sc.str(e.Path)))
	for _, x := range []struct {
		key string
		v   url.Values
	}{{"query", e.Query}, {"form", e.Form}} {
		if x.v == nil {
			continue
		}
		v := sc.values2(x.v)
		m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		keys := make(map[string]any, len(v))
		for _, k := range sortedKeys(v) {
			keys[k] = true
			switch vs := v[k]; len(vs) {
			case 0: // (a url.Values may hold a name with no value: no parameter on the wire)
				delete(keys, k)
			case 1:
				m.Content = append(m.Content, str(k), str(vs[0]))
			default:
				// A repeated parameter: its values in the order sent.
				seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
				for _, x := range vs {
					seq.Content = append(seq.Content, str(x))
				}
				m.Content = append(m.Content, str(k), seq)
			}
		}
		if !yamlSafe(keys, 0) {
			return nil, fmt.Errorf("the request %s %s%s has %s parameter names a test file cannot hold", e.Method, e.Origin, e.Path, x.key)
		}
		add(rq, x.key, m)
	}
	if e.HasJSON {
		if v := sc.value(e.JSON); yamlSafe(v, 0) {
			add(rq, "json", flow(valueNode(v)))
		}
	}
	rs := &yaml.Node{Kind: yaml.MappingNode}
	add(rs, "status", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(e.Resp.Status)})
	if len(e.Resp.Header) > 0 {
		h := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		for _, k := range sortedKeys(e.Resp.Header) {
			h.Content = append(h.Content, str(sc.str(k)), str(sc.str(e.Resp.Header.Get(k))))
		}
		add(rs, "headers", h)
	}
	if v, ok := jsonBody(&e.Resp); ok && yamlSafe(sc.value(v), 0) {
		add(rs, "json", valueNode(sc.value(v)))
	} else if len(e.Resp.Body) > 0 {
		add(rs, "body", str(sc.str(string(e.Resp.Body))))
	}
	return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("request"), rq, str("response"), rs}}, nil
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(b)}
}

// flow writes a small collection on one line.
func flow(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	return n
}

// valueNode renders a JSON value (numbers as json.Number) as YAML, keys
// sorted.
func valueNode(v any) *yaml.Node {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return boolNode(x)
	case json.Number:
		tag := "!!float"
		if isInteger(x) {
			tag = "!!int"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(x)}
	case string:
		return str(x)
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range x {
			n.Content = append(n.Content, valueNode(e))
		}
		if len(x) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range sortedKeys(x) {
			n.Content = append(n.Content, str(k), valueNode(x[k]))
		}
		if len(x) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	}
	return str(fmt.Sprint(v))
}

// yamlSafe reports whether a test file can hold v as YAML: keys printable
// ASCII, no two keys of a mapping that differ only in case, nested within
// the test file's depth.
func yamlSafe(v any, depth int) bool {
	if depth > 30 {
		return false
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if !yamlSafe(e, depth+1) {
				return false
			}
		}
	case map[string]any:
		folded := map[string]bool{}
		for k, e := range x {
			if k == "" {
				return false
			}
			for i := 0; i < len(k); i++ {
				if k[i] < 0x20 || k[i] > 0x7e {
					return false
				}
			}
			if folded[strings.ToLower(k)] {
				return false
			}
			folded[strings.ToLower(k)] = true
			if !yamlSafe(e, depth+1) {
				return false
			}
		}
	}
	return true
}

// Verify runs a test file the document does not hold yet, as tests/NAME.yaml
// beside its own, and returns the report of that file's cases alone.
func Verify(ctx context.Context, p *manifest.Plugin, name string, text []byte, opts Options) *Report {
	files := manifest.Files{}
	for k, v := range p.Files {
		files[k] = v
	}
	for _, ext := range []string{".yaml", ".yml"} {
		delete(files, "tests/"+name+ext)
	}
	files["tests/"+name+".yaml"] = text
	match := opts.Match
	opts.Match = func(file, c string) bool { return file == name && (match == nil || match(file, c)) }
	return RunFiles(ctx, files, opts)
}

// WriteCase writes a test file to path: a new file, or with force one that
// replaces the old atomically. Without force an existing file is an error.
func WriteCase(path string, text []byte, force bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if force {
		return atomicfile.Write(path, text, 0o644)
	}
	err := atomicfile.CreateFS(atomicfile.OS, path, text, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists: pass --force to replace it", path)
	}
	return err
}
