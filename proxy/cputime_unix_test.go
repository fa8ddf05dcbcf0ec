//go:build unix

package proxy

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time: unlike wall time, it does
// not grow when other processes share the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
