//go:build !race

package steps_test

// raceEnabled: the race detector is on (it slows encoding/json's byte
// scanner, and every loop, several times over: a bound on wall time that
// shows a linear path against a quadratic one means nothing under it).
const raceEnabled = false
