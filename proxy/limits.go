package proxy

import (
	"time"

	"github.com/pkuinfo/harness/internal/limits"
)

// Limits bound what one request and one call may do. A zero field takes its
// default (the Default* constants).
type Limits struct {
	// RequestTimeout bounds one attempt of a request, its redirects
	// included (default limits.DefaultRequestTimeout, 15 s).
	RequestTimeout time.Duration
	// MaxResponseBytes bounds a response body after decompression
	// (default limits.DefaultResponseBytes, 4 MiB).
	MaxResponseBytes int64
	// MaxHeaderBytes bounds a response's header block (default 64 KiB).
	MaxHeaderBytes int64
	// MaxRequestBytes bounds a request body (default 1 MiB).
	MaxRequestBytes int64
	// MaxRedirects bounds the redirects the proxy follows per request
	// (default 5).
	MaxRedirects int
	// MaxRequests bounds the requests of one call, and the requests it
	// sends on the wire, each redirect hop and retry included (default
	// limits.WireRequests, twice a call's requests limit: 100).
	MaxRequests int
	// CallConcurrency bounds the requests in flight in one call (default 4).
	CallConcurrency int
	// ServiceConcurrency bounds the requests in flight to one campus
	// service or one web origin across all calls of the proxy (default 4;
	// a catalogue entry's Concurrency overrides it).
	ServiceConcurrency int
	// MaxRetries caps a request's RetryPolicy.Max (default 4: a retry's declared 5 attempts).
	MaxRetries int
}

// Defaults of Limits.
const (
	DefaultRequestTimeout     = limits.DefaultRequestTimeout
	DefaultMaxResponseBytes   = limits.DefaultResponseBytes
	DefaultMaxHeaderBytes     = 64 << 10
	DefaultMaxRequestBytes    = 1 << 20
	DefaultMaxRedirects       = 5
	DefaultMaxRequests        = limits.WireRequests
	DefaultCallConcurrency    = 4
	DefaultServiceConcurrency = 4
	DefaultMaxRetries         = limits.MaxAttempts - 1
)

// withDefaults fills zero (or negative) fields with the defaults.
func (l Limits) withDefaults() Limits {
	if l.RequestTimeout <= 0 {
		l.RequestTimeout = DefaultRequestTimeout
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxRequestBytes <= 0 {
		l.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if l.MaxRedirects <= 0 {
		l.MaxRedirects = DefaultMaxRedirects
	}
	if l.MaxRequests <= 0 {
		l.MaxRequests = DefaultMaxRequests
	}
	if l.CallConcurrency <= 0 {
		l.CallConcurrency = DefaultCallConcurrency
	}
	if l.ServiceConcurrency <= 0 {
		l.ServiceConcurrency = DefaultServiceConcurrency
	}
	if l.MaxRetries <= 0 {
		l.MaxRetries = DefaultMaxRetries
	}
	return l
}

// RetryPolicy asks for bounded retries of an idempotent request (GET, HEAD,
// OPTIONS) on 429, 500, 502, 503, 504, a timeout or a failed connection,
// within the caller's deadline.
type RetryPolicy struct {
	Max        int           // retries after the first attempt (capped by Limits.MaxRetries)
	Backoff    time.Duration // first wait (default 200 ms), doubled each time
	MaxBackoff time.Duration // longest wait (default 2 s); Retry-After is honoured up to it
}

// maxRefreshes bounds the new session values (Set-Cookie of a session
// cookie with a value not seen before) the services may set in one call:
// twice a request of the largest call, for a service that renews two
// cookies on every response.
const maxRefreshes = 256
