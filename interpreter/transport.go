package interpreter

import (
	"context"
	"errors"

	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
)

// ProxyTransport sends a run's requests through one proxy call.
type ProxyTransport struct{ Call *proxy.Call }

// Do converts the request, sends it and converts the answer; an expired
// session becomes *steps.LoginRequired.
func (t ProxyTransport) Do(ctx context.Context, r *steps.Request) (*steps.Response, error) {
	pr := &proxy.Request{Service: r.Service, Path: r.Path, URL: r.URL, Method: r.Method, Query: r.Query,
		Header: r.Header, Body: r.Body, ContentType: r.ContentType}
	if r.Retry != nil && r.Retry.Attempts > 1 {
		pr.Retry = &proxy.RetryPolicy{Max: r.Retry.Attempts - 1, Backoff: r.Retry.Backoff}
	}
	resp, err := t.Call.Do(ctx, pr)
	if err != nil {
		var lr *proxy.LoginRequiredError
		if errors.As(err, &lr) {
			return nil, &steps.LoginRequired{Service: lr.Service, Message: lr.Message}
		}
		return nil, err
	}
	return &steps.Response{Status: resp.Status, Header: resp.Header, Body: resp.Body, URL: resp.URL,
		MediaType: resp.MediaType, Binary: resp.Binary}, nil
}
