package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pkuinfo/harness/internal/simcampus"
)

// startCampus starts the simulated campus for one run and points the run's
// --services and --secrets at its files (written to a private temp folder,
// removed by stop).
func startCampus(clock func() time.Time, f *runFlags) (stop func(), err error) {
	c, err := simcampus.Start(simcampus.WithClock(clock))
	if err != nil {
		return nil, fmt.Errorf("the simulated campus did not start: %v", err)
	}
	dir, err := os.MkdirTemp("", "harness-campus-run-")
	if err != nil {
		c.Close()
		return nil, err
	}
	stop = func() {
		c.Close()
		os.RemoveAll(dir)
	}
	f.services = filepath.Join(dir, "services.yaml")
	f.secrets = filepath.Join(dir, "secrets.yaml")
	if err := os.WriteFile(f.services, c.ServicesYAML(), 0o600); err != nil {
		stop()
		return nil, err
	}
	if err := os.WriteFile(f.secrets, c.SecretsYAML(), 0o600); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}
