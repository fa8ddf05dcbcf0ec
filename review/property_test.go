package review

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/pkuinfo/harness/manifest"
	"github.com/stretchr/testify/require"
)

// A seeded generator of documents over small alphabets, so that random
// pairs often share entries.
var (
	genServices  = []string{"card", "portal", "treehole", "dean"}
	genPaths     = []string{"/", "/api", "/api/", "/api/x", "/api/x/", "/api/xy", "/b/", "/b/c", "/api/x/y/"}
	genHosts     = []string{"a.example.edu.cn", "b.example.edu.cn", "x.a.example.edu.cn", "127.0.0.1"}
	genAbilities = []string{"kv", "clipboard", "share", "notifications"}
	genRequires  = []string{"network", "campus-session", "background", "location"}
	genTools     = []string{"t1", "t2", "t3", "t4"}
)

func pick[T any](r *rand.Rand, list []T) T { return list[r.Intn(len(list))] }

func genOrigin(r *rand.Rand) manifest.Origin {
	o := manifest.Origin{Scheme: pick(r, []string{"https", "http"}), Host: pick(r, genHosts)}
	o.Port = pick(r, []int{443, 80, 8443})
	return o
}

func genAccess(r *rand.Rand) manifest.Access {
	var a manifest.Access
	for _, s := range genServices {
		if r.Intn(2) == 0 {
			continue
		}
		c := manifest.CampusAccess{Service: s}
		if r.Intn(3) > 0 {
			for n := 1 + r.Intn(3); n > 0; n-- {
				c.Paths = append(c.Paths, pick(r, genPaths))
			}
		}
		a.Campus = append(a.Campus, c)
	}
	for n := r.Intn(3); n > 0; n-- {
		a.Web = append(a.Web, genOrigin(r))
	}
	for _, ab := range genAbilities {
		if r.Intn(2) == 0 {
			a.Abilities = append(a.Abilities, ab)
		}
	}
	return a
}

func genPlugin(r *rand.Rand) *manifest.Plugin {
	p := &manifest.Plugin{ID: "gen", Version: "1.0.0", Access: genAccess(r)}
	for _, c := range genRequires {
		if r.Intn(2) == 0 {
			p.Requires = append(p.Requires, c)
		}
	}
	for _, n := range genTools {
		if r.Intn(2) == 0 {
			continue
		}
		p.Tools = append(p.Tools, &manifest.Tool{Name: n, Effect: pick(r, manifest.Effects),
			Untrusted: r.Intn(2) == 0, UserOnly: r.Intn(2) == 0, AlwaysAsk: r.Intn(2) == 0})
	}
	return p
}

// respell writes the same access differently: case, trailing dots, default
// ports left out, "./" and "//" in paths, duplicates, another order.
func respell(r *rand.Rand, p *manifest.Plugin) *manifest.Plugin {
	q := *p
	q.Access = manifest.Access{}
	for _, c := range p.Access.Campus {
		n := manifest.CampusAccess{Service: strings.ToUpper(c.Service[:1]) + c.Service[1:]}
		for _, path := range c.Paths {
			switch r.Intn(3) {
			case 0:
				path = "." + path
			case 1:
				path = strings.Replace(path, "/", "/./", 1)
			}
			n.Paths = append(n.Paths, path)
			if r.Intn(3) == 0 {
				n.Paths = append(n.Paths, path) // a duplicate
			}
		}
		q.Access.Campus = append([]manifest.CampusAccess{n}, q.Access.Campus...)
	}
	for _, o := range p.Access.Web {
		n := o
		n.Host = strings.ToUpper(n.Host)
		if r.Intn(2) == 0 {
			n.Host += "."
		}
		if (n.Scheme == "https" && n.Port == 443) || (n.Scheme == "http" && n.Port == 80) {
			n.Port = 0
		}
		n.Scheme = strings.ToUpper(n.Scheme)
		q.Access.Web = append([]manifest.Origin{n}, q.Access.Web...)
		if r.Intn(2) == 0 {
			q.Access.Web = append(q.Access.Web, o)
		}
	}
	for _, a := range p.Access.Abilities {
		q.Access.Abilities = append([]string{strings.ToUpper(a)}, q.Access.Abilities...)
	}
	q.Requires = append([]string{}, p.Requires...)
	if len(q.Requires) > 0 {
		q.Requires = append(q.Requires, strings.ToUpper(q.Requires[0]))
	}
	q.Tools = nil
	for _, t := range p.Tools {
		c := *t // tool names are compared exactly: only the order changes
		q.Tools = append([]*manifest.Tool{&c}, q.Tools...)
	}
	return &q
}

// widen adds one thing the document could not do before.
func widen(r *rand.Rand, p *manifest.Plugin) (*manifest.Plugin, bool) {
	q := *p
	q.Access.Campus = append([]manifest.CampusAccess(nil), p.Access.Campus...)
	q.Access.Web = append([]manifest.Origin(nil), p.Access.Web...)
	q.Access.Abilities = append([]string(nil), p.Access.Abilities...)
	q.Requires = append([]string(nil), p.Requires...)
	q.Tools = nil
	for _, t := range p.Tools {
		c := *t
		q.Tools = append(q.Tools, &c)
	}
	oracle := oracleReach(p)
	switch r.Intn(6) {
	case 0: // a service or a path
		s := pick(r, genServices)
		path := pick(r, genPaths)
		if oracle.campus(s, path) {
			return nil, false
		}
		for i := range q.Access.Campus {
			if q.Access.Campus[i].Service == s {
				q.Access.Campus[i].Paths = append(append([]string(nil), q.Access.Campus[i].Paths...), path)
				return &q, true
			}
		}
		q.Access.Campus = append(q.Access.Campus, manifest.CampusAccess{Service: s, Paths: []string{path}})
	case 1:
		o := genOrigin(r)
		if oracle.web(o) {
			return nil, false
		}
		q.Access.Web = append(q.Access.Web, o)
	case 2:
		a := pick(r, genAbilities)
		if p.HasAbility(a) {
			return nil, false
		}
		q.Access.Abilities = append(q.Access.Abilities, a)
	case 3:
		c := pick(r, genRequires)
		for _, x := range p.Requires {
			if x == c {
				return nil, false
			}
		}
		q.Requires = append(q.Requires, c)
	case 4: // a new non-read tool
		n := "new-" + pick(r, genTools)
		q.Tools = append(q.Tools, &manifest.Tool{Name: n, Effect: manifest.Effects[1+r.Intn(3)]})
	case 5: // a tool's effect up or a safeguard dropped
		if len(q.Tools) == 0 {
			return nil, false
		}
		t := pick(r, q.Tools)
		switch {
		case t.Effect != manifest.Public:
			t.Effect = manifest.Effects[t.Effect.Rank()+1]
		case t.Untrusted:
			t.Untrusted = false
		case t.UserOnly:
			t.UserOnly = false
		case t.AlwaysAsk:
			t.AlwaysAsk = false
		default:
			return nil, false
		}
	}
	return &q, true
}

// narrow keeps a random part of p's access, sometimes with narrower paths.
func narrow(r *rand.Rand, p *manifest.Plugin) *manifest.Plugin {
	q := &manifest.Plugin{ID: p.ID, Version: p.Version}
	for _, c := range p.Access.Campus {
		if r.Intn(4) == 0 {
			continue
		}
		n := manifest.CampusAccess{Service: c.Service}
		for _, path := range c.Paths {
			if r.Intn(3) == 0 {
				path = strings.TrimSuffix(path, "/") + "/x/"
			}
			n.Paths = append(n.Paths, path)
		}
		if len(c.Paths) == 0 && r.Intn(2) == 0 {
			n.Paths = []string{pick(r, genPaths)}
		}
		q.Access.Campus = append(q.Access.Campus, n)
	}
	for _, o := range p.Access.Web {
		if r.Intn(3) > 0 {
			q.Access.Web = append(q.Access.Web, o)
		}
	}
	for _, a := range p.Access.Abilities {
		if r.Intn(3) > 0 {
			q.Access.Abilities = append(q.Access.Abilities, a)
		}
	}
	for _, c := range p.Requires {
		if r.Intn(3) > 0 {
			q.Requires = append(q.Requires, c)
		}
	}
	return q
}

// reach is an independent model of what access admits, point by point.
type reach struct{ p *manifest.Plugin }

func oracleReach(p *manifest.Plugin) reach { return reach{p} }

func (r reach) campus(service, path string) bool {
	for _, c := range r.p.Access.Campus {
		if !strings.EqualFold(c.Service, service) {
			continue
		}
		if len(c.Paths) == 0 {
			return true
		}
		for _, pre := range c.Paths {
			pre = normPathOracle(pre)
			if strings.HasSuffix(pre, "/") && strings.HasPrefix(path, pre) {
				return true
			}
			if !strings.HasSuffix(pre, "/") && (path == pre || strings.HasPrefix(path, pre+"/")) {
				return true
			}
		}
	}
	return false
}

func normPathOracle(p string) string {
	p = strings.TrimPrefix(p, ".")
	for strings.Contains(p, "/./") {
		p = strings.Replace(p, "/./", "/", 1)
	}
	return p
}

func (r reach) web(o manifest.Origin) bool {
	for _, x := range r.p.Access.Web {
		if x.Scheme == o.Scheme && x.Host == o.Host && x.Port == o.Port {
			return true
		}
		if x.Scheme == "http" && x.Port == 80 && o.Scheme == "https" && o.Port == 443 && x.Host == o.Host {
			return true
		}
	}
	return false
}

// accessWiderOracle: some point B admits that A does not.
func accessWiderOracle(a, b *manifest.Plugin) bool {
	ra, rb := oracleReach(a), oracleReach(b)
	paths := append([]string{}, genPaths...)
	for _, pre := range genPaths {
		paths = append(paths, pre+"z", strings.TrimSuffix(pre, "/")+"/z")
	}
	for _, s := range genServices {
		for _, path := range paths {
			if rb.campus(s, path) && !ra.campus(s, path) {
				return true
			}
		}
	}
	for _, o := range b.Access.Web {
		if !ra.web(o) {
			return true
		}
	}
	for _, x := range b.Access.Abilities {
		if !a.HasAbility(x) {
			return true
		}
	}
	have := map[string]bool{}
	for _, x := range a.Requires {
		have[x] = true
	}
	for _, x := range b.Requires {
		if !have[x] {
			return true
		}
	}
	return false
}

func TestPropertySelfDiffEmpty(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		a := genPlugin(r)
		require.Empty(t, Diff(a, a).Changes, "%+v", a)
		b := respell(r, a)
		d := Diff(a, b)
		require.False(t, d.Wider, "respelled access is wider: %+v", d.Changes)
		require.Empty(t, d.Changes, "respelled access differs: %+v", d.Changes)
		require.Empty(t, Diff(b, a).Changes)
	}
}

func TestPropertySupersetWider(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	n := 0
	for i := 0; i < 3000; i++ {
		a := genPlugin(r)
		b, ok := widen(r, a)
		if !ok {
			continue
		}
		n++
		require.True(t, Diff(a, b).Wider, "not wider: %+v -> %+v", a, b)
		require.True(t, Diff(a, respell(r, b)).Wider)
		require.False(t, Diff(b, a).Wider, "the reverse of a widening is wider: %+v", Diff(b, a).Changes)
	}
	require.Greater(t, n, 1500)
}

// TestPropertyAccessOracle: on random pairs, the access sections of the diff
// widen exactly when the point-by-point model finds something new.
func TestPropertyAccessOracle(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	wider := 0
	for i := 0; i < 1500; i++ {
		a, b := genPlugin(r), genPlugin(r)
		if r.Intn(2) == 0 {
			b = narrow(r, a)
		}
		b.Tools = a.Tools
		want := accessWiderOracle(a, b)
		if r.Intn(2) == 0 {
			b = respell(r, b) // the model reads the plain spelling
		}
		got := Diff(a, b).Wider
		require.Equal(t, want, got, "a=%+v\nb=%+v\nchanges=%+v", a.Access, b.Access, Diff(a, b).Changes)
		if got {
			wider++
		}
	}
	require.Greater(t, wider, 300)
	require.Less(t, wider, 1200)
}
