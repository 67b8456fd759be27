//go:build !race

package metrics

// raceEnabled: the test binary runs under the race detector (make race).
const raceEnabled = false
