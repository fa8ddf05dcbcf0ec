package cli

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"

	"github.com/pkuinfo/harness/internal/netguard"

	"github.com/pkuinfo/harness/manifest"
	"github.com/pkuinfo/harness/registry"
)

// resolveID finds a document that is not a local path: an installed plugin
// (by id or legacy id) or a bundled official one, with its trust and its
// stored permission modes.
func resolveID(ctx context.Context, app *App, id string) (*manifest.Plugin, string, registry.Store, error) {
	store, err := openStore(app)
	if err != nil {
		return nil, "", nil, err
	}
	bundled, err := bundledDocuments(store)
	if err != nil {
		return nil, "", nil, Exit(ExitFailed, err)
	}
	r, err := registry.OpenHome(ctx, store, bundled)
	if err != nil {
		return nil, "", nil, Exit(ExitFailed, err)
	}
	d, ok := r.Document(id)
	if !ok || d.Plugin == nil {
		for _, p := range r.Problems() {
			app.warn(p.Error())
		}
		// An installed id the home refused (a quarantined copy, a
		// conflict) names something that failed: exit 1, its problems
		// said above.
		if st, err := store.Load(); err == nil && st.Plugins[id] != nil {
			return nil, "", nil, Exitf(ExitFailed, "installed plugin %q could not be loaded", id)
		}
		// The argument names nothing: a usage error, as an unknown tool is.
		return nil, "", nil, Exitf(ExitUsage, "no document at %q and no installed or bundled plugin with id %q (harness list shows the installed ones)", id, id)
	}
	return d.Plugin, string(d.Trust), registry.NewStateStore(store), nil
}

// parseResolve reads the --resolve values, HOST:PORT:ADDR (HOST and ADDR
// may be [IPv6]; ADDR an IP or IP:PORT), as the proxy reads them.
func parseResolve(list []string) (map[string]string, error) {
	m, err := netguard.ParseResolveFlags(list)
	if err != nil {
		return nil, fmt.Errorf("--%v", err)
	}
	return m, nil
}

// maxCABytes bounds a --ca file.
const maxCABytes = 1 << 20

// readCA reads a --ca file: PEM certificates, trusted beside the system
// roots for the hosts --resolve maps and no other (a local HTTPS server
// standing in for a declared web origin). It needs --resolve.
func readCA(path string, resolve map[string]string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	if len(resolve) == 0 {
		return nil, fmt.Errorf("--ca %s trusts its certificates for the hosts --resolve maps only: give --resolve HOST:PORT:ADDR too", path)
	}
	f, err := openRegular("--ca", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCABytes+1))
	if err != nil {
		return nil, fmt.Errorf("--ca: %v", err)
	}
	if len(data) > maxCABytes {
		return nil, fmt.Errorf("--ca %s is more than %d bytes", path, maxCABytes)
	}
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return nil, fmt.Errorf("--ca %s: certificate %d does not parse: %v", path, n+1, err)
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("--ca %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path)
	}
	return data, nil
}
