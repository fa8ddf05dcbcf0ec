package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/pkuinfo/harness/proxy"
)

// ReadSecretsFile reads a secrets file (proxy.LoadSecrets). A file other
// users of the machine can read still works, since it is the user's to
// keep (the home keystore, which the engine writes, refuses such a mode),
// but warn is told, with the file's name and mode and never a value.
func ReadSecretsFile(path string, warn func(string)) (proxy.Secrets, error) {
	sec, err := proxy.LoadSecrets(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && warn != nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		warn(fmt.Sprintf("%s can be read by other users of this machine (mode %#o): chmod 600 it", path, fi.Mode().Perm()))
	}
	return sec, nil
}

// HomeKeystore opens the home folder's keystore, keystore.json; nil when
// the folder has none.
func HomeKeystore(home string) (proxy.Keystore, error) {
	path := filepath.Join(home, "keystore.json")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	ks, err := proxy.OpenKeystore(path)
	if err != nil {
		return nil, err
	}
	return ks, nil
}
