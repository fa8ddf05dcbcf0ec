package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/internal/atomicfile"
	"github.com/pkuinfo/harness/internal/yamlx"
	"github.com/pkuinfo/harness/manifest"
	"go.yaml.in/yaml/v3"
)

// minSecretLen is the shortest credential value accepted: shorter ones
// cannot be redacted without destroying ordinary text.
const minSecretLen = 4

// maxSecretLen bounds a credential value.
const maxSecretLen = 16 << 10

// Secrets is the secrets file: a service's session values by service name.
type Secrets map[string]*ServiceSecrets

// ServiceSecrets is one service's session: cookie values by cookie name and
// header values by header name (canonical form, e.g. "Synjones-Auth").
type ServiceSecrets struct {
	Cookies map[string]string `json:"cookies,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Keystore holds the user's sessions.
type Keystore interface {
	// Get returns a service's session. The result must not be modified.
	Get(service string) (*ServiceSecrets, bool)
	// Update stores refreshed session cookies of a service (merged into
	// the stored ones), atomically.
	Update(service string, cookies map[string]string) error
}

// serviceLister is implemented by keystores that can list their services,
// so the proxy can redact every stored value from the start.
type serviceLister interface {
	Services() []string
}

// SecretsDecl declares one service's session in a secrets file (and in a
// test file's secrets): the decoder and the JSON Schemas read it.
var SecretsDecl = &yamlx.Decl{Name: "secrets", Def: "serviceSecrets", Doc: "One service's session values, as the catalogue attaches them.", Fields: []yamlx.Field{
	{Name: "cookies", Type: yamlx.MapOf{Of: secretValue{}}, Doc: "Cookie values by cookie name."},
	{Name: "headers", Type: yamlx.MapOf{Of: secretValue{}}, Doc: "Header values by header name (Authorization, synjones-auth, …)."},
}}

// secretValue is a credential: a string whose checks never quote it.
type secretValue struct{}

func (secretValue) Decode(c *yamlx.Ctx, n *yaml.Node, what string) (any, bool) {
	return c.Doc.String(n, what, c.L)
}
func (secretValue) Name() string { return "secret" }
func (secretValue) Schema(*yamlx.Gen) map[string]any {
	return map[string]any{"type": "string", "minLength": minSecretLen, "maxLength": maxSecretLen, "pattern": `^\S(.*\S)?$`,
		"description": fmt.Sprintf("At least %d characters, no surrounding spaces (shorter values cannot be redacted).", minSecretLen)}
}

// DecodeSecrets reads a mapping from service name to SecretsDecl's
// session, as written; a service whose entry is partly bad holds its good
// part. each, when not nil, is given every entry (its nodes, and its
// session or nil) to check what the caller checks: names and values.
func DecodeSecrets(c *yamlx.Ctx, n *yaml.Node, what string, each func(f yamlx.Pair, ss *ServiceSecrets)) (Secrets, bool) {
	top, ok := c.Doc.Mapping(n, what, nil, c.L)
	if !ok {
		return nil, false
	}
	out := make(Secrets, len(top.Fields))
	for _, f := range top.Fields {
		decl := *SecretsDecl
		decl.Name = "secrets of " + strconv.Quote(f.Key)
		o, good := c.Object(f.Value, &decl)
		ok = ok && good
		var ss *ServiceSecrets
		if o != nil {
			ss = &ServiceSecrets{Cookies: o.StringMap("cookies"), Headers: o.StringMap("headers")}
			out[f.Key] = ss
		}
		if each != nil {
			each(f, ss)
		}
	}
	return out, ok
}

// SecretsSchema is the JSON Schema of a secrets file, generated from
// SecretsDecl (docs/schema/secrets.schema.json).
func SecretsSchema() map[string]any {
	g := yamlx.NewGen()
	root := map[string]any{"type": "object", "propertyNames": map[string]any{"pattern": manifest.ServiceName.Pattern.String()},
		"additionalProperties": g.Object(SecretsDecl)}
	return yamlx.SchemaFile("https://pkuinfo.github.io/harness/schema/secrets.schema.json", "A secrets file (--secrets)",
		"Session values per campus service, for one run. Reference: docs/proxy.md.", root, g)
}

// LoadSecrets reads a secrets file (CONTRACT.md): a YAML mapping from
// service name to {cookies: {NAME: VALUE}, headers: {NAME: VALUE}}. Errors
// name the file, line and column, never a value.
func LoadSecrets(path string) (Secrets, error) {
	return loadConfig(path, 6, func(c *yamlx.Ctx) Secrets {
		out := Secrets{}
		DecodeSecrets(c, c.Doc.Root, "the secrets file", func(f yamlx.Pair, ss *ServiceSecrets) {
			switch {
			case !manifest.ServiceName.Check(c, f.KeyN, "service name", f.Key): // reported
			case ss != nil:
				norm, err := normaliseSecrets(f.Key, ss)
				if err != nil {
					c.Errorf(f.Value, "%s", err.Error())
					return
				}
				out[f.Key] = norm
			}
		})
		return out
	})
}

// normaliseSecrets checks names and values (never quoting a value) and
// returns a copy with canonical header names.
func normaliseSecrets(service string, ss *ServiceSecrets) (*ServiceSecrets, error) {
	out := &ServiceSecrets{Cookies: map[string]string{}, Headers: map[string]string{}}
	if ss == nil {
		return out, nil
	}
	for k, v := range ss.Cookies {
		if !validToken(k) {
			return nil, fmt.Errorf("service %q: cookie name %q is not valid", service, k)
		}
		if err := checkSecretValue(v); err != nil {
			return nil, fmt.Errorf("service %q: the value of cookie %q %v", service, k, err)
		}
		if strings.ContainsAny(v, ";\" ,\\") {
			return nil, fmt.Errorf("service %q: the value of cookie %q has a character a cookie may not hold (; \" , space or backslash)", service, k)
		}
		out.Cookies[k] = v
	}
	for k, v := range ss.Headers {
		ck := http.CanonicalHeaderKey(k)
		if !validToken(k) || (reservedHeader(ck) && ck != "Authorization") {
			return nil, fmt.Errorf("service %q: header %q cannot hold a credential", service, k)
		}
		if err := checkSecretValue(v); err != nil {
			return nil, fmt.Errorf("service %q: the value of header %q %v", service, k, err)
		}
		if _, dup := out.Headers[ck]; dup {
			return nil, fmt.Errorf("service %q: header %q is given twice", service, k)
		}
		out.Headers[ck] = v
	}
	return out, nil
}

func checkSecretValue(v string) error {
	if len(v) < minSecretLen {
		return fmt.Errorf("is shorter than %d characters (too short to be redacted reliably)", minSecretLen)
	}
	if len(v) > maxSecretLen {
		return fmt.Errorf("is longer than %d KiB", maxSecretLen>>10)
	}
	if !validHeaderValue(v) {
		return errors.New("has a control character")
	}
	if strings.TrimSpace(v) != v {
		return errors.New("starts or ends with white space")
	}
	return nil
}

// sessions is what both keystores hold: the sessions by service, under a
// lock; a stored session is replaced, never modified.
type sessions struct {
	mu sync.RWMutex
	m  Secrets
}

// Get implements Keystore.
func (k *sessions) Get(service string) (*ServiceSecrets, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	ss, ok := k.m[service]
	return ss, ok
}

// Services lists the services with a stored session.
func (k *sessions) Services() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return slices.Sorted(maps.Keys(k.m))
}

// MemoryKeystore is a keystore in memory: the --secrets file of one run.
// Refreshed values are kept for the run only.
type MemoryKeystore struct{ sessions }

// MemKeystore makes a keystore from a secrets file's content (copied; header
// names made canonical).
func MemKeystore(s Secrets) *MemoryKeystore {
	k := &MemoryKeystore{sessions{m: Secrets{}}}
	for name, ss := range s {
		c := merged(nil, nil)
		if ss != nil {
			maps.Copy(c.Cookies, ss.Cookies)
			for n, v := range ss.Headers {
				c.Headers[http.CanonicalHeaderKey(n)] = v
			}
		}
		k.m[name] = c
	}
	return k
}

// Update implements Keystore: copy on write, so a value from Get never
// changes under its reader.
func (k *MemoryKeystore) Update(service string, cookies map[string]string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[service] = merged(k.m[service], cookies)
	return nil
}

// merged is a copy of old (which may be nil) with cookies set.
func merged(old *ServiceSecrets, cookies map[string]string) *ServiceSecrets {
	n := &ServiceSecrets{Cookies: map[string]string{}, Headers: map[string]string{}}
	if old != nil {
		maps.Copy(n.Cookies, old.Cookies)
		maps.Copy(n.Headers, old.Headers)
	}
	maps.Copy(n.Cookies, cookies)
	return n
}

// FileKeystore is the keystore file in the home folder (keystore.json):
// {"version": 1, "services": {NAME: {"cookies": {...}, "headers": {...}}}},
// mode 0600, written with temp file + fsync + rename. Several processes may
// share it: every change is a read-modify-write under a file lock
// (keystore.json.lock beside it) that reads the file again, so no process
// loses another's update.
type FileKeystore struct {
	sessions
	path  string
	login *LoginInfo
}

type keystoreFile struct {
	Version  int        `json:"version"`
	Services Secrets    `json:"services"`
	Login    *LoginInfo `json:"login,omitempty"`
}

// LoginInfo is what the host's campus login keeps beside the sessions: the
// IAAA user name (the student id), the name a service's hand-off reported,
// and the TOTP secret of the OTP second factor when the user chose to keep
// it. No proxy path sends, attaches or shows it; the proxy registers the
// TOTP secret with the redactor (New), as it does the sessions.
type LoginInfo struct {
	User string `json:"user,omitempty"`
	Name string `json:"name,omitempty"`
	TOTP string `json:"totp,omitempty"`
}

func (l *LoginInfo) empty() bool { return l == nil || *l == LoginInfo{} }

// checkLogin checks a login section's values, never quoting one.
func checkLogin(l *LoginInfo) error {
	if l == nil {
		return nil
	}
	if len(l.User) > 64 || len(l.Name) > 256 || len(l.TOTP) > 256 {
		return errors.New("the login section holds an over-long value")
	}
	for _, v := range []string{l.User, l.Name, l.TOTP} {
		if v != "" && !validHeaderValue(v) {
			return errors.New("the login section holds a control character")
		}
	}
	return nil
}

// keystoreLockWait bounds the wait for another process's keystore change.
const keystoreLockWait = 10 * time.Second

// OpenKeystore opens the keystore file at path; a missing file is an empty
// keystore (created on the first write). It refuses a file that is not a
// regular file, that others may read or write, or that another user owns.
func OpenKeystore(path string) (*FileKeystore, error) {
	m, login, err := readKeystore(path)
	if err != nil {
		return nil, err
	}
	return &FileKeystore{sessions: sessions{m: m}, path: path, login: login}, nil
}

// readKeystore reads and checks the keystore file; a missing file is an
// empty keystore.
func readKeystore(path string) (Secrets, *LoginInfo, error) {
	m := Secrets{}
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the keystore %s: %v", path, unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("the keystore %s is not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, nil, fmt.Errorf("the keystore %s may be read by others (mode %04o): run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	if err := checkOwner(st); err != nil {
		return nil, nil, fmt.Errorf("the keystore %s %v", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the keystore %s: %v", path, unwrapPathError(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the keystore %s: %v", path, unwrapPathError(err))
	}
	if len(data) > maxConfigBytes {
		return nil, nil, fmt.Errorf("the keystore %s is more than %d bytes", path, maxConfigBytes)
	}
	var kf keystoreFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil {
		// The decoder's message may quote the input: say only where.
		return nil, nil, fmt.Errorf("the keystore %s is not valid keystore JSON", path)
	}
	if kf.Version != 1 {
		return nil, nil, fmt.Errorf("the keystore %s has version %d, not 1", path, kf.Version)
	}
	for name, ss := range kf.Services {
		if !validName(name) {
			return nil, nil, fmt.Errorf("the keystore %s names a bad service %q", path, name)
		}
		n, err := normaliseSecrets(name, ss)
		if err != nil {
			return nil, nil, fmt.Errorf("the keystore %s: %v", path, err)
		}
		m[name] = n
	}
	if err := checkLogin(kf.Login); err != nil {
		return nil, nil, fmt.Errorf("the keystore %s: %v", path, err)
	}
	if kf.Login.empty() {
		kf.Login = nil
	}
	return m, kf.Login, nil
}

// Update implements Keystore: merges the cookies into the service's
// session as the file holds it now, and rewrites the file.
func (k *FileKeystore) Update(service string, cookies map[string]string) error {
	for n, v := range cookies {
		if !validToken(n) || checkSecretValue(v) != nil {
			return fmt.Errorf("refreshed cookie %q of service %q is not storable", n, service)
		}
	}
	return k.change(func(cur Secrets) bool {
		old := cur[service]
		if old != nil && hasCookies(old, cookies) {
			return false
		}
		cur[service] = merged(old, cookies)
		return true
	})
}

// Put replaces a service's session (for a login or import command).
func (k *FileKeystore) Put(service string, ss *ServiceSecrets) error {
	if !validName(service) {
		return fmt.Errorf("bad service name %q", service)
	}
	n, err := normaliseSecrets(service, ss)
	if err != nil {
		return err
	}
	return k.change(func(cur Secrets) bool {
		cur[service] = n
		return true
	})
}

// Login returns the login section (a copy; zero when there is none).
func (k *FileKeystore) Login() LoginInfo {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.login == nil {
		return LoginInfo{}
	}
	return *k.login
}

// SetLogin replaces the login section (the zero value removes it), under
// the file lock as every change.
func (k *FileKeystore) SetLogin(l LoginInfo) error {
	if err := checkLogin(&l); err != nil {
		return err
	}
	return k.changeAll(func(cur Secrets, login **LoginInfo) bool {
		if (*login).empty() && l.empty() || *login != nil && **login == l {
			return false
		}
		if l.empty() {
			*login = nil
		} else {
			c := l
			*login = &c
		}
		return true
	})
}

// Delete removes a service's session.
func (k *FileKeystore) Delete(service string) error {
	return k.change(func(cur Secrets) bool {
		if _, ok := cur[service]; !ok {
			return false
		}
		delete(cur, service)
		return true
	})
}

// change is a read-modify-write of the file, under the process's lock and
// the file lock: the file is read again under the lock, fn edits that
// content (false: nothing to write) and the result is written atomically.
// The keystore then holds the file's content, other processes' changes
// included; values already handed out by Get are never modified (those
// that did not change are kept, so their readers' caches stay valid).
func (k *FileKeystore) change(fn func(cur Secrets) bool) error {
	return k.changeAll(func(cur Secrets, _ **LoginInfo) bool { return fn(cur) })
}

// changeAll is change with the login section too: fn may replace it.
func (k *FileKeystore) changeAll(fn func(cur Secrets, login **LoginInfo) bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	dir := filepath.Dir(k.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %v", dir, unwrapPathError(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), keystoreLockWait)
	defer cancel()
	unlock, err := atomicfile.Lock(ctx, k.path+".lock", 5*time.Millisecond)
	if err != nil {
		return fmt.Errorf("cannot lock the keystore %s: %v", k.path, unwrapPathError(err))
	}
	defer unlock()
	cur, login, err := readKeystore(k.path)
	if err != nil {
		return err
	}
	for name, ss := range cur {
		if old, ok := k.m[name]; ok && sameSecrets(old, ss) {
			cur[name] = old
		}
	}
	if fn(cur, &login) {
		if err := k.write(cur, login); err != nil {
			return err
		}
	}
	k.m, k.login = cur, login
	return nil
}

// hasCookies reports whether ss holds every one of the cookies already.
func hasCookies(ss *ServiceSecrets, cookies map[string]string) bool {
	for n, v := range cookies {
		if w, ok := ss.Cookies[n]; !ok || w != v {
			return false
		}
	}
	return true
}

func sameSecrets(a, b *ServiceSecrets) bool {
	return maps.Equal(a.Cookies, b.Cookies) && maps.Equal(a.Headers, b.Headers)
}

// write replaces the file atomically (internal/atomicfile), mode 0600.
func (k *FileKeystore) write(m Secrets, login *LoginInfo) error {
	data, err := json.MarshalIndent(keystoreFile{Version: 1, Services: m, Login: login}, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode the keystore: %v", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(k.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %v", dir, unwrapPathError(err))
	}
	if err := atomicfile.Write(k.path, data, 0o600); err != nil {
		return fmt.Errorf("cannot write the keystore: %v", unwrapPathError(err))
	}
	return nil
}

var (
	_ Keystore      = (*FileKeystore)(nil)
	_ Keystore      = (*MemoryKeystore)(nil)
	_ serviceLister = (*FileKeystore)(nil)
	_ serviceLister = (*MemoryKeystore)(nil)
)
