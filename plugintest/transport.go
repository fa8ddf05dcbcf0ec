package plugintest

import (
	"context"
	"errors"
	"fmt"

	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/steps"
)

// ProxyTransport adapts one proxy call to the steps' Transport: a step's
// request goes through the call (signing, grants, redirects, redaction), and
// the proxy's expired-session error becomes the steps' LoginRequired, which
// ends the tool with the login_required status.
type ProxyTransport struct{ Call *proxy.Call }

var _ steps.Transport = (*ProxyTransport)(nil)

// Do implements steps.Transport.
func (t *ProxyTransport) Do(ctx context.Context, r *steps.Request) (*steps.Response, error) {
	pr := &proxy.Request{
		Service: r.Service, Path: r.Path, URL: r.URL, Method: r.Method, Query: r.Query,
		Header: r.Header, Body: r.Body, ContentType: r.ContentType,
	}
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
	if resp.Binary {
		return nil, fmt.Errorf("the response is not text (%s)", resp.MediaType)
	}
	return &steps.Response{Status: resp.Status, Header: resp.Header, Body: resp.Body, URL: resp.URL, MediaType: resp.MediaType}, nil
}
