package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// The --watch of lint and test: run, then run again each time a file
// under the paths changes, until interrupted. Changes are found by
// polling each file's size and modification time (no file-watching
// dependency): cheap for a document's few hundred files.

// watchInterval is how often the files are looked at.
const watchInterval = 150 * time.Millisecond

// watchMaxFiles bounds the files one look visits, so a path such as the
// home folder cannot turn each look into a walk of the disk.
const watchMaxFiles = 5000

// stamp is what a look saw of the files: path -> size and time.
type stamp map[string]string

func lookAt(paths []string) stamp {
	s := stamp{}
	for _, root := range paths {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				s[p] = "missing"
				return nil
			}
			if len(s) >= watchMaxFiles {
				return filepath.SkipAll
			}
			if d.IsDir() {
				if p != root && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir // .git and the like do not count
				}
				return nil
			}
			if info, err := d.Info(); err == nil {
				s[p] = fmt.Sprintf("%d %d", info.Size(), info.ModTime().UnixNano())
			}
			return nil
		})
	}
	return s
}

// changed lists the paths whose stamp differs, sorted.
func (s stamp) changed(now stamp) []string {
	var out []string
	for p, v := range now {
		if s[p] != v {
			out = append(out, p)
		}
	}
	for p := range s {
		if _, ok := now[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// watch runs once, then again after each change under paths, until ctx
// ends or the process is interrupted (then it returns nil). Each run's
// result is printed, never returned: a failing run keeps watching.
func watch(ctx context.Context, app *App, paths []string, run func(ctx context.Context)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	seen := lookAt(paths)
	run(ctx)
	fmt.Fprintf(app.Stderr, "watching %s for changes (Ctrl-C to stop)\n", strings.Join(paths, ", "))
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		now := lookAt(paths)
		ch := seen.changed(now)
		if len(ch) == 0 {
			continue
		}
		// An editor writes a file in several steps: wait until a look
		// sees nothing new, then run once.
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(watchInterval / 3):
			}
			again := lookAt(paths)
			if len(now.changed(again)) == 0 {
				break
			}
			now = again
		}
		seen = now
		shown := ch
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(ch)-3))
		}
		fmt.Fprintf(app.Stderr, "changed: %s; running again at %s\n", terminalSafe(strings.Join(shown, ", ")), time.Now().Format("15:04:05"))
		run(ctx)
	}
}
