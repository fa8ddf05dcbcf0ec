package noninterference

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Case is one hostile document of testdata/hostile/NAME: its files
// (PLUGIN.md, tools/…; "@EVIL@" stands for the web origin's host:port)
// and case.yaml, which says how to run it.
type Case struct {
	Name  string
	Dir   string
	Files map[string]string
	// Runs are the `harness run` invocations, one per tool (and input).
	Runs []Run
	// Store is where the sessions are: "secrets" (--secrets FILE, the
	// default) or "keystore" (keystore.json in the home folder).
	Store string
	// About says what the document attacks and where it comes from.
	About string
	// Invalid: the document is expected not to compile.
	Invalid bool
	// Refused: the permission rules are expected to refuse the runs.
	Refused bool
}

// Run is one tool of a case with its input (where "@CRED:NAME@" stands
// for the run's credential NAME of Shapes) and extra flags.
type Run struct {
	Name  string // the subtest name: the tool, and the input's index when several
	Tool  string
	Input string
	Args  []string
}

type caseFile struct {
	Tools  []string          `yaml:"tools"`
	Inputs map[string]string `yaml:"inputs"` // by name
	Args   []string          `yaml:"args"`
	Store  string            `yaml:"store"`
	About  string            `yaml:"about"`
	// Invalid says the document does not compile (its e2e test expects
	// that): otherwise a document that does not is an error of the test.
	Invalid bool `yaml:"invalid"`
	// Refused says the permission rules refuse the run (exit 3):
	// otherwise a refusal is an error of the test, since a refused run
	// shows nothing and would pass trivially.
	Refused bool `yaml:"refused"`
}

// Placeholder stands for the web origin (host:port) in a document.
const Placeholder = "@EVIL@"

// EvilHost is the web origin's host name, mapped to loopback by --resolve.
const EvilHost = "evil.localhost"

// Cases reads every case under root (testdata/hostile), sorted by name.
func Cases(root string) ([]Case, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c, err := LoadCase(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cases under %s", root)
	}
	return out, nil
}

// LoadCase reads one case folder.
func LoadCase(dir string) (Case, error) {
	c := Case{Name: filepath.Base(dir), Dir: dir, Files: map[string]string{}}
	var cf caseFile
	b, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return c, err
	}
	if err == nil {
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(&cf); err != nil {
			return c, fmt.Errorf("%s/case.yaml: %v", dir, err)
		}
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "case.yaml" {
			return nil
		}
		b, err := os.ReadFile(p)
		c.Files[rel] = string(b)
		return err
	})
	if err != nil {
		return c, err
	}
	if _, ok := c.Files["PLUGIN.md"]; !ok {
		return c, fmt.Errorf("%s: no PLUGIN.md", dir)
	}
	c.Store, c.About, c.Invalid, c.Refused = cf.Store, cf.About, cf.Invalid, cf.Refused
	if c.About == "" {
		return c, fmt.Errorf("%s/case.yaml: about is required (what the document attacks)", dir)
	}
	switch c.Store {
	case "":
		c.Store = "secrets"
	case "secrets", "keystore":
	default:
		return c, fmt.Errorf("%s/case.yaml: store must be secrets or keystore", dir)
	}
	tools := cf.Tools
	if len(tools) == 0 {
		tools = []string{"t"}
	}
	names := slices.Sorted(maps.Keys(cf.Inputs))
	for _, t := range tools {
		if len(names) == 0 {
			c.Runs = append(c.Runs, Run{Name: t, Tool: t, Input: "{}", Args: cf.Args})
		}
		for _, n := range names {
			c.Runs = append(c.Runs, Run{Name: t + "-" + n, Tool: t, Input: cf.Inputs[n], Args: cf.Args})
		}
	}
	return c, nil
}

// WriteDoc writes the case's document under dir with the web origin's
// port in place of the placeholder, and returns dir.
func (c Case) WriteDoc(dir, webPort string) (string, error) {
	for name, text := range c.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		text = strings.ReplaceAll(text, Placeholder, EvilHost+":"+webPort)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// Setup is the folder of a pair of runs: the document, the home folder,
// the services and secrets files. The paths are the same for both runs
// (a path is part of what a message shows).
type Setup struct {
	Doc, Home, Services, Secrets string
	Case                         Case
	World                        *World
}

// NewSetup writes the document and the services file under base.
func NewSetup(base string, c Case, w *World) (*Setup, error) {
	s := &Setup{Doc: filepath.Join(base, "doc"), Home: filepath.Join(base, "home"),
		Services: filepath.Join(base, "services.yaml"), Secrets: filepath.Join(base, "secrets.yaml"), Case: c, World: w}
	if _, err := c.WriteDoc(s.Doc, w.WebPort()); err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.Services, []byte(w.ServicesYAML()), 0o644); err != nil {
		return nil, err
	}
	return s, nil
}

// Prepare empties the home folder, writes the sessions of c where the case
// keeps them, and points the world's services at c. It returns the
// arguments of `harness run` for r.
func (s *Setup) Prepare(c Creds, r Run) ([]string, error) {
	if err := os.RemoveAll(s.Home); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Home, 0o700); err != nil {
		return nil, err
	}
	input := r.Input
	for name, v := range c {
		// An input may hold a credential: the agent passes a number
		// that happens to be one.
		input = strings.ReplaceAll(input, "@CRED:"+name+"@", v)
	}
	args := []string{"run", s.Doc, r.Tool, "--input", input, "--services", s.Services, "--trace",
		"--resolve", EvilHost + ":" + s.World.WebPort() + ":127.0.0.1"}
	if s.Case.Store == "keystore" {
		if err := os.WriteFile(s.keystore(), []byte(c.KeystoreJSON()), 0o600); err != nil {
			return nil, err
		}
		os.Remove(s.Secrets)
	} else {
		if err := os.WriteFile(s.Secrets, []byte(c.SecretsYAML()), 0o600); err != nil {
			return nil, err
		}
		args = append(args, "--secrets", s.Secrets)
	}
	s.World.SetCreds(c)
	return append(args, r.Args...), nil
}

func (s *Setup) keystore() string { return filepath.Join(s.Home, "keystore.json") }

// Observation is everything one run let the plugin (or the agent reading
// its result) observe, by channel, and what the sessions' file held after.
type Observation struct {
	Channels map[string]string
	// StoreBefore and StoreAfter are the keystore or secrets file before
	// and after the run: a plugin may never change a session.
	StoreBefore, StoreAfter string
}

// Observe collects a run's channels: exit code, stdout, stderr (the
// trace and every message), each file of the home folder, and what each
// server received.
func (s *Setup) Observe(c Creds, code int, stdout, stderr string) (Observation, error) {
	o := Observation{Channels: map[string]string{
		"exit": strconv.Itoa(code), "stdout": stdout, "stderr": stderr,
	}}
	store := s.Secrets
	want := c.SecretsYAML()
	if s.Case.Store == "keystore" {
		store, want = s.keystore(), c.KeystoreJSON()
	}
	o.StoreBefore = want
	if b, err := os.ReadFile(store); err == nil {
		o.StoreAfter = string(b)
	} else {
		o.StoreAfter = "(" + err.Error() + ")"
	}
	err := filepath.WalkDir(s.Home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(s.Home, p)
		rel = filepath.ToSlash(rel)
		if rel == "keystore.json" || rel == "keystore.json.lock" {
			return nil
		}
		b, err := os.ReadFile(p)
		o.Channels["home:"+rel] = string(b)
		return err
	})
	if err != nil {
		return o, err
	}
	for k, v := range s.World.Recorded() {
		o.Channels[k] = v
	}
	return o, nil
}

// duration is the duration a trace line shows (timing is not compared).
var duration = regexp.MustCompile(`(?m)^(trace: .*? step \S+ \([^)]*\)) [0-9][0-9.hmsµnu]* `)

// jsonDuration is the duration a JSON trace event shows (--trace=json).
var jsonDuration = regexp.MustCompile(`"durationMs":[0-9.e+-]+`)

// reqDuration is the duration a request's trace line shows, after its
// status and URL or before its error.
var reqDuration = regexp.MustCompile(`(?m)^(trace:   (?:\d{3} \S+|error after)) [0-9][0-9.hmsµnu]*([ :]|$)`)

// Normalize masks in text each whole credential of c, the pieces the
// services echoed on their own, and the durations of trace lines.
func Normalize(text string, c Creds, pieces []string) string {
	text = c.Replacer().Replace(text)
	slices.SortFunc(pieces, func(a, b string) int { return len(b) - len(a) })
	for _, p := range pieces {
		text = strings.ReplaceAll(text, p, "«piece»")
	}
	text = reqDuration.ReplaceAllString(text, "$1 D$2")
	text = jsonDuration.ReplaceAllString(text, `"durationMs":D`)
	return duration.ReplaceAllString(text, "$1 D ")
}

// pluginSees reports whether a channel is one the plugin (or the agent,
// or the attacker's web server) reads: every channel but what the campus
// services received, which carries the session the proxy attached.
func pluginSees(ch string) bool { return !strings.HasPrefix(ch, "campus:") }

// Compare checks one pair of runs: the sessions' file unchanged in each,
// no whole credential in anything the plugin sees, and every channel,
// normalized, byte-identical. It returns nil when the property holds,
// else one message per failure, naming the channel and the first
// differing bytes.
func Compare(a, b Observation, ca, cb Creds, pa, pb []string) []string {
	var fails []string
	for i, o := range []Observation{a, b} {
		if o.Channels["exit"] == "0" && !json.Valid([]byte(o.Channels["stdout"])) {
			fails = append(fails, fmt.Sprintf("run %d printed a result that is not JSON: %q", i+1, clip(o.Channels["stdout"], 300)))
		}
		if !sameStore(o.StoreBefore, o.StoreAfter) {
			fails = append(fails, fmt.Sprintf("run %d changed the sessions' file:\nbefore %q\nafter  %q", i+1, clip(o.StoreBefore, 400), clip(o.StoreAfter, 400)))
		}
	}
	na, nb := map[string]string{}, map[string]string{}
	for k, v := range a.Channels {
		na[k] = Normalize(v, ca, pa)
	}
	for k, v := range b.Channels {
		nb[k] = Normalize(v, cb, pb)
	}
	var chans []string
	for k := range na {
		chans = append(chans, k)
	}
	for k := range nb {
		if _, ok := na[k]; !ok {
			chans = append(chans, k)
		}
	}
	slices.Sort(chans)
	for _, ch := range chans {
		x, okx := na[ch]
		y, oky := nb[ch]
		if pluginSees(ch) {
			for i, s := range []string{x, y} {
				if j := strings.Index(s, "«"); j >= 0 && markerAt(s[j:]) {
					fails = append(fails, fmt.Sprintf("%s of run %d holds a whole credential: …%s…", ch, i+1, clip(s[max(0, j-60):], 160)))
				}
			}
		}
		switch {
		case !okx:
			fails = append(fails, fmt.Sprintf("%s: only run 2 has it: %q", ch, clip(y, 300)))
		case !oky:
			fails = append(fails, fmt.Sprintf("%s: only run 1 has it: %q", ch, clip(x, 300)))
		case x != y:
			fails = append(fails, ch+": "+FirstDifference(x, y))
		}
	}
	return fails
}

func markerAt(s string) bool {
	for n := range Shapes {
		if strings.HasPrefix(s, "«"+n+"»") {
			return true
		}
	}
	return false
}

// FirstDifference describes where x and y first differ: the offset, and
// the bytes around it in each.
func FirstDifference(x, y string) string {
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("first difference at byte %d (lengths %d, %d):\nrun 1: %q\nrun 2: %q",
		i, len(x), len(y), clip(x[from:], 200), clip(y[from:], 200))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// sameStore reports whether a sessions' file holds the same sessions
// after a run as before: byte for byte, or as the same JSON (the engine
// may write the keystore in its own layout).
func sameStore(before, after string) bool {
	if before == after {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(before), &x) != nil || json.Unmarshal([]byte(after), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
