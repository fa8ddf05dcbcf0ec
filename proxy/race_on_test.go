//go:build race

package proxy

// raceEnabled: the race detector is on (it changes allocation: sync.Pool
// drops a share of what is put back).
const raceEnabled = true
