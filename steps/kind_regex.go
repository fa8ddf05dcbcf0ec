package steps

import (
	"context"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/internal/yamlx"

	"go.yaml.in/yaml/v3"
)

var regexSpec = Spec{
	Kind: "regex",
	Summary: "Match a regular expression (RE2 syntax) against a string: with named groups an object of them, else the list [whole, group 1, …]; " +
		"the first match or null, or with all: true the list of every match.",
	Decl: &yamlx.Decl{Name: "regex", Fields: []yamlx.Field{
		{Name: "from", Type: JQType, Default: ".", Doc: "the string to search"},
		{Name: "pattern", Type: yamlx.String{MaxLen: 2000, Label: "regexp"}, Required: true, Doc: "RE2 syntax (no backreferences; linear time): its compiled size times the string's length may be at most 2^28, as for jq's regexps"},
		{Name: "all", Type: yamlx.Bool{}, Default: false, Doc: "every match instead of the first"},
	}},
	Example: `- jq: '"room 101, room 202"'
- regex: { pattern: 'room (?P<room>\d+)', all: true }`,
}

func init() { builtin.mustRegister(regexSpec, decodeRegex) }

type regexStep struct {
	from  *JQ
	re    *regexp.Regexp
	all   bool
	names []string
	named bool
	insts int // the compiled program's size (regexInsts)
}

func decodeRegex(c *Compiler, n *yaml.Node) Step {
	m, ok := c.Decode(n, regexSpec.Decl)
	if !ok {
		return nil
	}
	s := &regexStep{all: m.Bool("all")}
	s.from, _ = m.Value("from").(*JQ) // nil: the default ., the step's input
	re, err := regexp.Compile(m.String("pattern"))
	if err != nil {
		c.Errorf(m.NodeOf("pattern"), "pattern does not compile: %v", err)
		return nil
	}
	s.re, s.insts = re, regexInsts(m.String("pattern"))
	s.names = re.SubexpNames()
	for _, n := range s.names {
		s.named = s.named || n != ""
	}
	return s
}

func (s *regexStep) Run(ctx context.Context, f *Frame) (any, error) {
	v := f.Dot
	var err error
	if s.from != nil {
		if v, err = s.from.First(ctx, f, f.Dot); err != nil {
			return nil, fmt.Errorf("from: %w", err)
		}
	}
	str, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("regex needs a string, got %s", gojq.TypeOf(v))
	}
	// One match call cannot be interrupted by the deadline, and it may
	// take the program's size times the string's length: that product is
	// bounded as a jq program's regexps are.
	if n := utf8.RuneCountInString(str); s.insts*(n+1) > regexInstWork {
		return nil, &LimitError{Limit: "jqWork", Max: JQWork, What: fmt.Sprintf("a regular expression of %d instructions on a string of %d characters", s.insts, n)}
	}
	if !s.all {
		m := s.re.FindStringSubmatchIndex(str)
		if m == nil {
			return nil, nil
		}
		return s.record(str, m), nil
	}
	ms := s.re.FindAllStringSubmatchIndex(str, f.Limits.Items+1)
	if len(ms) > f.Limits.Items {
		return nil, &LimitError{Limit: "items", Max: int64(f.Limits.Items), What: "the matches"}
	}
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = s.record(str, m)
	}
	return out, nil
}

func (s *regexStep) record(str string, m []int) any {
	group := func(i int) any {
		if m[2*i] < 0 {
			return nil
		}
		return str[m[2*i]:m[2*i+1]]
	}
	if s.named {
		rec := make(map[string]any, len(s.names))
		for i, n := range s.names {
			if n != "" {
				rec[n] = group(i)
			}
		}
		return rec
	}
	list := make([]any, len(s.names))
	for i := range s.names {
		list[i] = group(i)
	}
	return list
}

var _ Step = (*regexStep)(nil)
