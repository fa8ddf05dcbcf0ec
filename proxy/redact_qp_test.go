package proxy

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// qpSoftBreak and qpEscape are what a step does to quoted-printable text
// it has parsed (a JSON string, a header value): every "=" followed by
// white space is a soft line break, gone (Python's quopri takes the
// white space before a line break as padding; gsub("=\\s+"; "") in jq),
// every =XX the byte it encodes.
var (
	qpSoftBreak = regexp.MustCompile(`=[ \t\r\n]+`)
	qpEscape    = regexp.MustCompile(`=[0-9A-Fa-f]{2}`)
)

func stepQP(s string) string {
	s = qpSoftBreak.ReplaceAllString(s, "")
	return qpEscape.ReplaceAllStringFunc(s, func(e string) string {
		b, _ := hex.DecodeString(e[1:])
		return string(b)
	})
}

// qpForms are the quoted-printable forms of x a hostile portal writes,
// each split by a soft line break in one of the forms a step sees once it
// has parsed the answer: in a JSON string, the line break escaped (\r\n,
// \n, \u000d\u000a, the "=" itself as \u003d, padding before the break);
// in a text, padding before the break or a lone CR; in a header value,
// the break turned into spaces (Go's server writes CR and LF in a value
// as spaces) or folded onto the next line (obs-fold, which Go's client
// joins with a space). The split and which bytes are =XX escapes are
// drawn by rng, the same in both runs.
type qpForms struct {
	json   map[string]string // field -> raw JSON string body (escaped)
	text   string
	header map[string]string // name -> value as the server sets it
	fold   string            // a raw header value with obs-fold
}

func makeQPForms(rng *rand.Rand, x string) qpForms {
	enc := func() (string, string) {
		// Units: a byte, or the =XX escape of one; the cut is between two.
		units := make([]string, len(x))
		for i := 0; i < len(x); i++ {
			switch rng.IntN(4) {
			case 0:
				units[i] = fmt.Sprintf("=%02X", x[i])
			case 1:
				units[i] = fmt.Sprintf("=%02x", x[i])
			default:
				units[i] = x[i : i+1]
			}
		}
		k := 1 + rng.IntN(len(x)-1)
		return strings.Join(units[:k], ""), strings.Join(units[k:], "")
	}
	f := qpForms{json: map[string]string{}, header: map[string]string{}}
	for i, brk := range []string{`=\r\n`, `=\n`, `=\u000d\u000a`, `=\u000a`, `= \r\n`, `=\r\n\t`, `\u003d\r\n`, `\u003d\u000a`} {
		a, b := enc()
		f.json["f"+strconv.Itoa(i)] = `"tok ` + a + brk + b + ` end"`
	}
	var text strings.Builder
	for _, brk := range []string{"= \r\n", "=\t\n", "=\r", "=\r\n"} {
		a, b := enc()
		text.WriteString("tok " + a + brk + b + " end\n")
	}
	f.text = text.String()
	for i, brk := range []string{"=\r\n", "=\r\n\t", "=\n", "= ", "=\t", "=  \t "} {
		a, b := enc()
		f.header["X-Qp-"+strconv.Itoa(i)] = "tok " + a + brk + b + " end"
	}
	a, b := enc()
	f.fold = "tok " + a + "=\r\n " + b + " end"
	return f
}

// qpExchange runs the hostile portal's answers for session x through a
// proxy and returns what a step makes of them (every JSON field, the text,
// every X-Qp header, quoted-printable decoded), and the redacted answers
// as the step received them.
func qpExchange(t *testing.T, x string, f qpForms) (step, raw string) {
	portal := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("SESSION")
		if err != nil || c.Value != x {
			http.Error(w, "no session", http.StatusForbidden)
			return
		}
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			var parts []string
			for k, v := range f.json {
				parts = append(parts, strconv.Quote(k)+":"+v)
			}
			slices.Sort(parts)
			w.Write([]byte("{" + strings.Join(parts, ",") + "}"))
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte(f.text))
		case "/header":
			for k, v := range f.header {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte("ok"))
		case "/fold":
			conn, buf, err := w.(http.Hijacker).Hijack()
			require.NoError(t, err)
			defer conn.Close()
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Qp-Fold: %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", f.fold)
			buf.Flush()
		}
	})
	p := testProxy(t, nil, portal, nil, Limits{}, MemKeystore(Secrets{"portal": {Cookies: map[string]string{"SESSION": x}}}))
	call := p.NewCall("demo", access("portal"))
	var out, seen strings.Builder
	for _, path := range []string{"/json", "/text", "/header", "/fold"} {
		resp, err := call.Do(context.Background(), &Request{Service: "portal", Path: path})
		require.NoError(t, err, path)
		require.Equal(t, http.StatusOK, resp.Status, path)
		seen.Write(resp.Body)
		switch path {
		case "/json":
			var m map[string]string
			require.NoError(t, json.Unmarshal(resp.Body, &m), "%s", resp.Body)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&out, "%s=%s\n", k, stepQP(m[k]))
			}
		case "/text":
			sc := bufio.NewScanner(strings.NewReader(stepQP(string(resp.Body))))
			for sc.Scan() {
				fmt.Fprintf(&out, "text=%s\n", sc.Text())
			}
		default:
			var keys []string
			for k := range resp.Header {
				if strings.HasPrefix(k, "X-Qp-") {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			require.NotEmpty(t, keys, path)
			for _, k := range keys {
				seen.WriteString(strings.Join(resp.Header[k], "\n"))
				fmt.Fprintf(&out, "%s=%s\n", k, stepQP(strings.Join(resp.Header[k], ",")))
			}
		}
	}
	return out.String(), seen.String()
}

// A quoted-printable form of a session, its soft line breaks in the forms
// a step sees once it has parsed the answer (escaped in a JSON string,
// padded, spaces in a header value, obs-fold), is a whole encoding of it:
// under two random sessions of one shape the step's output is the same
// once each whole session is masked, and holds no session.
func TestQuotedPrintableSoftBreakForms(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 0x51))
		a, b := twoCredentials(rng, byte(rng.IntN(256)), byte(rng.IntN(256)))
		formSeed := rng.Uint64()
		sa, ra := qpExchange(t, a, makeQPForms(rand.New(rand.NewPCG(formSeed, 1)), a))
		sb, rb := qpExchange(t, b, makeQPForms(rand.New(rand.NewPCG(formSeed, 1)), b))
		for _, c := range []struct{ x, step, raw string }{{a, sa, ra}, {b, sb, rb}} {
			for _, form := range []string{c.x, strings.ToLower(c.x), strings.ToUpper(c.x), url.QueryEscape(c.x), hex.EncodeToString([]byte(c.x))} {
				require.NotContains(t, c.step, form, "seed %d: the step rebuilt session %q", seed, c.x)
				require.NotContains(t, c.raw, form, "seed %d: session %q passed", seed, c.x)
			}
		}
		require.Equal(t, strings.ReplaceAll(sa, a, "<S>"), strings.ReplaceAll(sb, b, "<S>"), "seed %d: %q and %q", seed, a, b)
		require.Contains(t, sa, Marker)
	}
}

// The soft line break's forms, in the redactor alone: "=" and any white
// space after it, raw or under JSON, URL and HTML escapes, joins a whole
// credential; a part of one, however joined, stays as it is.
func TestRedactQuotedPrintableSoftBreakWhiteSpace(t *testing.T) {
	const x = "s3cr3t-Session-Value-0042"
	r := newRedactor()
	r.add(x)
	for _, brk := range []string{"= \r\n", "=\t\r\n", "=\r", "=\r\n ", "=\n\t", "= ", "=  \t", "=\t",
		`=\r\n`, `=\n`, `=\u000d\u000a`, `\u003d\r\n`, `= \r\n`, `=\t`, "%3D%0D%0A", "&#61;&#10;", `=\\r\\n`, "=\f", `=\f`, "=\v"} {
		in := "tok s3cr3t-Sess" + brk + "ion=2DValue-0042 end"
		assert.Equal(t, "tok "+Marker+" end", r.string(in), "%q", in)
		// A part, joined the same way, stays.
		for _, part := range []string{"s3cr3t-Sess" + brk + "ion=2DValue-004", "3cr3t-Sess" + brk + "ion-Value-0042"} {
			assert.Equal(t, part, r.string(part), "%q", part)
		}
	}
}
