package steps

import (
	"reflect"
	"strings"
	"time"

	"github.com/pkuinfo/harness/internal/limits"
)

// Limits bound one tool call. The host sets them (DefaultLimits otherwise); a
// tool's `limits:` may only lower them.
type Limits struct {
	Deadline       time.Duration // the whole call
	RequestTimeout time.Duration // one request, retries included
	ResponseBytes  int64         // one response body, after decompression
	Requests       int           // requests per call
	Steps          int           // steps executed per call, nested ones included
	Iterations     int           // items one foreach visits (checked before it starts)
	Pages          int           // pages one paginate step fetches
	Items          int           // items one paginate step collects
	Output         int           // characters of the result before it is cut
	StringBytes    int           // a string made by jq's + or *
	Depth          int           // nesting of any value (JSON bodies, jq results)
	FieldBytes     int           // one text extracted by html or xml (longer texts are cut)
	HTMLNodes      int           // nodes of one parsed HTML or XML document
	HTMLDepth      int           // nesting of one parsed HTML or XML document
	SelectorCost   int           // compound selectors times combinators of one CSS selector
	KVValueBytes   int           // one stored value, as JSON
	KVBytes        int           // a plugin's whole store, as JSON
	KVKeys         int           // keys in a plugin's store
	KVWrites       int           // changes to the store per call (each rewrites its file)
	HeapBytes      int64         // the process heap: above it the running calls stop (0: no watch)

	// Clock is what jq's now reports (nil: the real time). Not a limit, but
	// bound where the limits are: when programs are compiled.
	Clock func() time.Time
}

// DefaultLimits are the limits when the host sets none: the defaults of
// internal/limits.Table.
func DefaultLimits() Limits { return defaultLimits }

var defaultLimits = func() Limits {
	var l Limits
	for _, e := range limits.Table {
		l.Set(e.Name, e.Default)
	}
	return l
}()

// limitFields maps each limit's name to its field of Limits, found once:
// "requests" is Requests, "htmlNodes" HTMLNodes, "kvKeys" KVKeys. Every
// field but the clock has a row in the table, and every row a field.
var limitFields = func() map[string]int {
	t := reflect.TypeOf(Limits{})
	out := map[string]int{}
	for _, e := range limits.Table {
		name := strings.ToUpper(e.Name[:1]) + e.Name[1:]
		for _, p := range []string{"Html", "Kv"} {
			if strings.HasPrefix(name, p) {
				name = strings.ToUpper(p) + name[len(p):]
			}
		}
		f, ok := t.FieldByName(name)
		if !ok {
			panic("steps.Limits has no field for limit " + e.Name)
		}
		out[e.Name] = f.Index[0]
	}
	if len(out) != t.NumField()-1 {
		panic("steps.Limits has a field the limits table lacks")
	}
	return out
}()

// Get returns the limit named name (durations in nanoseconds).
func (l *Limits) Get(name string) (int64, bool) {
	i, ok := limitFields[name]
	if !ok {
		return 0, false
	}
	return reflect.ValueOf(l).Elem().Field(i).Int(), true
}

// Set sets the limit named name (durations in nanoseconds); it reports
// whether there is such a limit.
func (l *Limits) Set(name string, v int64) bool {
	i, ok := limitFields[name]
	if ok {
		reflect.ValueOf(l).Elem().Field(i).SetInt(v)
	}
	return ok
}
