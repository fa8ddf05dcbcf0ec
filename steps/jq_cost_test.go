package steps_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ordinaryJQ are programs within every bound: hardened, each gives what
// gojq itself gives (every result, in order).
var ordinaryJQ = []string{
	`[1,2,3,1] - [1]`, `10 - 3, 10 / 4, 7 / 7, 1.5 - 0.5, 2 - 1.5`, `"a,b,,c" / ","`, `{"a":3,"b":4} | .a -= 1 | .b /= 2`,
	`[[1,2],[2,3]] - [[2,3]]`, `[{"a":1},{"b":2}] - [{"b":2}]`,
	`[1,[2,3],{"a":"xy"}] | contains([[2]]), contains([{"a":"x"}]), inside([1,[2,3],{"a":"xy"},4])`,
	`"foobar" | contains("bar"), inside("xfoobarx")`, `{"a":{"b":[1,2]},"c":1} | contains({"a":{"b":[2]}})`,
	`"a,b, cd, efg" | index(", "), rindex(", "), indices(", ")`, `[0,1,2,1,3,1,2] | index(1), rindex(1), indices(1), indices([1,2]), .[[1,2]]`,
	`"" | indices(""), index("x")`, `null | index(1), indices([1])`,
	`[[1,2],[3]] | add`, `["a","b"] | add`, `[{"a":1},{"b":2}] | add`, `[] | add`, `{"a":1,"b":2} | add`, `add(1,2,3)`, `add(empty)`,
	`["a",1,null,true] | join("-")`, `[] | join(",")`, `"a b c" | split(" ")`, `"abc" | explode, (explode | implode)`,
	`[[1,2],[3]] | transpose`, `[] | transpose`,
	`null | .[3] = 1`, `[1,2] | .[5] = 9 | .[-1] = 0`, `{"a":[1]} | .a[2] |= 7`, `null | setpath([1, "a"]; 1), getpath(["x", 2]), delpaths([[0]])`,
	`[1,2,3,4] | .[1:3] = ["x"], del(.[0, 2]), to_entries`, `[3,4,5] | nth(1), first, last, nth(1; .[])`,
	`null | fromstream([[0],1], [[1],2], [[1]])`, `[1,[2]] | [tostream] | fromstream(.[])`, `{"a":[1,{"b":2}]} | pick(.a[1].b), [paths]`,
	`"aXbXc" | sub("X"; "-"), gsub("X"; "-"), gsub("x"; "+"; "i"), [splits("X")], split("X"; null), [scan("[a-c]")]`,
	`"abab" | [sub("a","b"; "x", "y")], [match("a","b") | .offset]`, `"2024-01-02" | capture("(?<y>\\d+)-(?<m>\\d+)")`,
	`[{"id":1,"n":"a"},{"id":2,"n":"b"}] | INDEX(.id), IN(.[]; {"id":1,"n":"a"}), (.[0] | IN({"id":1,"n":"a"}, 2))`,
	`[{"id":1}] | JOIN(INDEX(.id); .id | tostring)`, `[3,1,2] | sort, unique, min, max, (map(. * 2) | add), (. == [3,1,2]), (. < [4])`,
	`{"a":{"b":1}} * {"a":{"c":2}}`, `[limit(3; range(10))], first(range(5;10)), [range(0;10;3)]`, `"x" * 3, ("ab" | ascii_upcase)`,
	`[.[]?] | length`, `{"a":1} | has("a"), (to_entries | from_entries), with_entries(.value += 1)`,
	`[1,2] | .[1e3]`, `[range(5)] | .[2:], .[:-1], .[-2:]`, `"abc" | .[1:]`, `[1,2,3] | [.[] | select(. > 1)] | length`,
	`reduce range(10) as $i ([]; . + [$i]) | length`, `[range(10)] | combinations(1) | length`, `[[1,2],[3,4]] | [combinations]`,
	`{"a":[1]} | path(getpath(["a",0])), (getpath(["a",0]) |= 5), [paths(type == "number")], del(.a[0])`,
	`[4,5,6] as $a | 1 as $i | $a[$i], $a[$i:], [$a[] | . - $i], ($a | .[1,2]), first($a[]), ({"x":1} | .["x"])`,
	`"abc" | index(""), indices("")?, ("a,b" | ltrimstr("a") | [splits(",")]), ("\(1 + 2)-\([1] | tojson)" | fromjson? // .)`,
	`[[1,"a"],[2,"b"]] | map(@csv), (.[0] | @tsv), ([.[][1]] | join(",")), (tostream | select(length == 2) | .[1])`,
	`{"a":{"b":[1,2,3]}} | .a.b[1:] = [9], (.a.b |= map(. * 10)), (.a.b[0] += 1), (.a.b -= [2]), (.a.b[2] //= 7)`,
	`{"a":[1,2]} | walk(if type == "number" then . + 1 else . end)`, `[1,[2,[3]]] | flatten, flatten(1)`, `[1,2,3] | bsearch(2)`,
	`[{"a":2,"b":1},{"a":1,"b":2},{"a":2,"b":3}] | sort_by(.a), sort_by(.a, -.b), group_by(.a), unique_by(.a), min_by(.a), max_by(.b)`,
	`"[1,{\"a\":2.5,\"b\":[true,null]}]" | fromjson, ("123456789012345678901234567890" | fromjson | tostring), ([1, "x"] | tojson | fromjson)`,
	`"aBc" | test("b"), test("B"; "i"), test(["B", "i"]), test("x"), [match("(?<l>[a-z])"; "g") | .captures[0].name], ("x" * 100000 | test("x"; "g"))`,
	`[jn(2; 1.5), yn(1; 2), jn(0; 0)] | map(. * 1000 | floor)`,
}

func runAll(t *testing.T, src string, hardened bool) string {
	t.Helper()
	prog := "[" + src + "]"
	var out any
	if hardened {
		lim := steps.DefaultLimits()
		var l diag.List
		q := steps.CompileStandalone(prog, &lim, diag.Pos{}, &l)
		require.False(t, l.HasErrors(), "%s: %s", src, l.Error())
		v, _, err := q.Run1(context.Background(), nil)
		if err != nil {
			return "error: " + err.Error()
		}
		out = v
	} else {
		q, err := gojq.Parse(prog)
		require.NoError(t, err)
		code, err := gojq.Compile(q)
		require.NoError(t, err)
		v, _ := code.Run(nil).Next()
		if err, ok := v.(error); ok {
			return "error: " + err.Error()
		}
		out = v
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return string(b)
}

// TestHardenedJQAgreesWithJQ: the cost checks change no result of a
// program within the bounds.
func TestHardenedJQAgreesWithJQ(t *testing.T) {
	for _, src := range ordinaryJQ {
		want := runAll(t, src, false)
		require.False(t, strings.HasPrefix(want, "error"), "%s: %s", src, want)
		assert.Equal(t, want, runAll(t, src, true), src)
	}
}
