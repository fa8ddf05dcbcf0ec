package proxy

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
)

// LoginRequiredError is returned by Do when a campus service says the
// session is missing or expired (a redirect to its login, a login status, a
// known JSON code). The interpreter turns it into {status: login_required,
// service, message}.
type LoginRequiredError struct {
	Service string
	Message string
}

func (e *LoginRequiredError) Error() string {
	return "login required for campus service " + strconv.Quote(e.Service) + ": " + e.Message
}

func loginRequired(svc string) *LoginRequiredError {
	return &LoginRequiredError{Service: svc,
		Message: "the " + svc + " session is missing or has expired; sign in to " + svc + " again"}
}

// RequestError is a request that failed on the way (connection, TLS,
// timeout, guard). Its message is redacted; it unwraps only to ErrRefused,
// ErrLimit or a context error, never to the original error (which may hold
// a URL with a credential).
type RequestError struct {
	Service string // "" for a web request
	URL     string // redacted
	Msg     string // redacted
	Timeout bool
	cause   error
}

func (e *RequestError) Error() string {
	return "request to " + e.URL + " failed: " + e.Msg
}

// Unwrap returns ErrRefused, ErrLimit, context.Canceled,
// context.DeadlineExceeded or nil.
func (e *RequestError) Unwrap() error { return e.cause }

func causeOf(err error) error {
	switch {
	case errors.Is(err, ErrLimit):
		return ErrLimit
	case errors.Is(err, ErrRefused):
		return ErrRefused
	}
	return nil
}

// transportErr turns a transport error into a redacted RequestError.
func (c *Call) transportErr(ctx, actx context.Context, t *target, u *url.URL, err error) error {
	re := &RequestError{Service: t.name(), URL: c.p.red.string(u.String()), cause: causeOf(err)}
	switch {
	case ctx.Err() != nil:
		re.cause = ctx.Err()
		re.Msg = ctx.Err().Error()
		re.Timeout = errors.Is(ctx.Err(), context.DeadlineExceeded)
	case errors.Is(actx.Err(), context.DeadlineExceeded) || isNetTimeout(err):
		re.Timeout = true
		re.Msg = "timed out after " + c.p.lim.RequestTimeout.String()
	default:
		re.Msg = c.p.red.string(err.Error())
	}
	return re
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// redactErr keeps an error's class but redacts its message.
func (c *Call) redactErr(err error) error {
	var lr *LoginRequiredError
	if errors.As(err, &lr) {
		return err
	}
	msg := err.Error()
	red := c.p.red.string(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, cause: causeOf(err)}
}

type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Unwrap() error { return e.cause }
