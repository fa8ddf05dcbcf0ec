package limits_test

import (
	"testing"
	"time"

	"github.com/pkuinfo/harness/internal/diag"
	"github.com/pkuinfo/harness/internal/limits"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The proxy's defaults are the table's: one place states them.
func TestProxyDefaultsComeFromTheTable(t *testing.T) {
	d := steps.DefaultLimits()
	assert.Equal(t, d.RequestTimeout, time.Duration(proxy.DefaultRequestTimeout))
	assert.Equal(t, d.ResponseBytes, int64(proxy.DefaultMaxResponseBytes))
	assert.Equal(t, 2*d.Requests, proxy.DefaultMaxRequests, "the wire allows each request one redirect or retry")
}

func TestText(t *testing.T) {
	for name, want := range map[string]string{"deadline": "30s", "responseBytes": "4 MiB", "fieldBytes": "64 KiB", "heapBytes": "1 GiB", "requests": "50"} {
		l, ok := limits.Get(name)
		require.True(t, ok, name)
		assert.Equal(t, want, l.Text(l.Default), name)
	}
	l, _ := limits.Get("stringBytes")
	assert.Equal(t, "1000", l.Text(1000), "not a round size")
	_, ok := limits.Get("nope")
	assert.False(t, ok)
}

// A tool's limits: declares exactly the lowerable limits, counts and
// durations, and the decoder checks their types.
func TestDecl(t *testing.T) {
	var l diag.List
	d := yamlx.Parse("t.yaml", []byte("deadline: 5s\npages: 0\ndepth: 3\nitmes: 4\nrequests: x\n"), 1, nil, yamlx.DefaultLimits, &l)
	require.False(t, l.HasErrors(), l.Error())
	o, ok := d.Decode(d.Root, limits.Decl, &l)
	assert.False(t, ok)
	assert.Equal(t, 5*time.Second, o.Value("deadline"))
	assert.Equal(t, "t.yaml:2:8: pages must be at least 1\n"+
		"t.yaml:3:1: unknown key \"depth\" in limits\n"+
		"t.yaml:4:1: unknown key \"itmes\" in limits (did you mean \"items\"?)\n"+
		"t.yaml:5:11: requests must be an integer, not a string", l.Error())
	for _, lim := range limits.Table {
		_, declared := limits.Decl.Field(lim.Name)
		assert.Equal(t, lim.Tool, declared, lim.Name)
	}
	assert.Contains(t, limits.Markdown(), "| `requests` | 50 | yes | requests per call |\n")
	assert.Contains(t, limits.Markdown(), "| `depth` | 256 |  | ")
}
