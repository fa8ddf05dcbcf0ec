package proxy

// Finder finds chosen values in text exactly as the proxy's redactor finds
// credentials: raw, and in every encoding it redacts them in (see
// redactor). It is for text that leaves a host by another road than a
// call, such as a recorded test case, so that the encodings are known in
// one place.
type Finder struct{ r *redactor }

// MinFindLen is the shortest value, in bytes, a Finder takes (shorter ones
// are ignored): the redactor's shortest credential.
const MinFindLen = minSecretLen

// NewFinder returns a Finder of vs (values shorter than MinFindLen are
// ignored).
func NewFinder(vs ...string) *Finder {
	r := newRedactor()
	r.addAll(vs, nil)
	return &Finder{r: r}
}

// Find returns the byte ranges [from, to) of s that hold a whole value or
// a whole encoding of one, in order; ranges that overlap are joined.
func (f *Finder) Find(s string) [][2]int {
	spans := mergeSpans(f.r.st.Load().find(s, nil))
	out := make([][2]int, len(spans))
	for i, x := range spans {
		out[i] = [2]int{x.from, x.to}
	}
	return out
}

// Redact is s with each range Find returns replaced by Marker.
func (f *Finder) Redact(s string) string { return f.r.string(s) }
