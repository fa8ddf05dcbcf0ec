package steps

import "time"

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

// DefaultLimits are the limits when the host sets none.
func DefaultLimits() Limits {
	return Limits{
		Deadline:       30 * time.Second,
		RequestTimeout: 15 * time.Second,
		ResponseBytes:  4 << 20,
		Requests:       50,
		Steps:          1000,
		Iterations:     200,
		Pages:          20,
		Items:          2000,
		Output:         12000,
		StringBytes:    8 << 20,
		Depth:          256,
		FieldBytes:     64 << 10,
		HTMLNodes:      200000,
		HTMLDepth:      256,
		SelectorCost:   64,
		KVValueBytes:   64 << 10,
		KVBytes:        1 << 20,
		KVKeys:         1000,
		KVWrites:       50,
		HeapBytes:      1 << 30,
	}
}
