package devserver

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// keepAlive is how often an idle event stream gets a comment line.
const keepAlive = 15 * time.Second

// Watch polls the document's files until ctx ends; when one changes it
// reads the document again and tells every open page to reload.
func (s *Server) Watch(ctx context.Context) {
	tick := time.NewTicker(s.cfg.WatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.Check()
	}
}

// Check reads the document again when its files changed since the last
// look, and tells the pages; it reports whether they changed.
func (s *Server) Check() bool {
	now := fingerprint(s.cfg.Path)
	s.mu.Lock()
	same := now == s.print
	s.mu.Unlock()
	if same {
		return false
	}
	snap := s.load()
	s.mu.Lock()
	s.print, s.snap = now, snap
	for ch := range s.subs {
		select {
		case ch <- "reload":
		default: // that page has a reload waiting already
		}
	}
	s.mu.Unlock()
	return true
}

// serveEvents is the page's event stream: "reload" when the document changed.
func (s *Server) serveEvents(w http.ResponseWriter, req *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	ch := make(chan string, 1)
	s.mu.Lock()
	if len(s.subs) >= MaxSubscribers {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("busy: %d pages are listening already", MaxSubscribers), http.StatusServiceUnavailable)
		return
	}
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	fl.Flush()
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for {
		select {
		case <-req.Context().Done():
			return
		case ev := <-ch:
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, time.Now().Format(time.TimeOnly))
			fl.Flush()
		case <-t.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		}
	}
}
