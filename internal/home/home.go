// Package home finds the engine's home folder: --home, else HARNESS_HOME,
// else $XDG_DATA_HOME/pku-harness, else ~/.local/share/pku-harness.
package home

import (
	"errors"
	"os"
	"path/filepath"
)

// Dir resolves the home folder; flag is the --home value ("" when unset).
func Dir(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if v := os.Getenv("HARNESS_HOME"); v != "" {
		return filepath.Abs(v)
	}
	if v := os.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "pku-harness"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return "", errors.New("no home folder: set --home or HARNESS_HOME")
	}
	return filepath.Join(h, ".local", "share", "pku-harness"), nil
}
