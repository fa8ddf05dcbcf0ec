package cli

import (
	"bufio"
	"context"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pkuinfo/harness/internal/campuslogin"
	"github.com/pkuinfo/harness/proxy"
	"github.com/pkuinfo/harness/remote"
	"github.com/spf13/cobra"
)

func init() {
	register(86, newLoginCmd)
	register(87, newLogoutCmd)
}

type loginFlags struct {
	user     string
	totp     bool
	services string
	resolve  []string
	ca       string
}

func newLoginCmd(app *App) *cobra.Command {
	var f loginFlags
	cmd := &cobra.Command{
		Use:   "login [SERVICE...]",
		Short: "Sign in to the campus (IAAA) and store each service's session in the keystore",
		Long: `login is the host's campus login: it signs in to IAAA with your user name (the
student id), the password (read from the terminal without echo, or a line of
stdin; never a flag) and the second factor your account has (an OTP code, or
codes computed from a TOTP secret kept in the keystore with --totp; or an SMS
code), then runs each service's hand-off and stores the sessions in the home
folder's keystore (mode 0600). Without SERVICE: ` + strings.Join(campuslogin.DefaultServices, ", ") + `.
Known: ` + strings.Join(campuslogin.Known(), ", ") + `.

--services FILE points the login at other origins (the simulated campus's
services file, which has an iaaa entry); --resolve and --ca as for run.
Passwords, codes, tokens and sessions are never printed.

Exit 0: every service logged in; 1: a refusal or a failed hand-off (the
others are stored).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLogin(cmd.Context(), app, args, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.user, "user", "", "the IAAA user name (student id); default: the one stored, else asked")
	fl.BoolVar(&f.totp, "totp", false, "ask for the OTP's TOTP secret (base32) and keep it in the keystore, so later logins need no code")
	fl.StringVar(&f.services, "services", "", "campus service catalogue entries (YAML), over the built-in ones (e.g. the simulated campus's)")
	fl.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for HOST:PORT (repeatable)")
	fl.StringVar(&f.ca, "ca", "", "PEM certificates trusted, beside the system roots, for the hosts --resolve maps only")
	return cmd
}

func newLogoutCmd(app *App) *cobra.Command {
	var forgetTOTP bool
	cmd := &cobra.Command{
		Use:   "logout [SERVICE...]",
		Short: "Forget the stored campus sessions (all, or the services named)",
		Long: `logout removes sessions from the keystore: every stored service's, or those of
the services named. The TOTP secret that login --totp keeps is forgotten only
with --forget-totp (and then with the stored user name). A remote plugin's
bearer token is not a session: logout keeps it (harness remove forgets it).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLogout(app, args, forgetTOTP)
		},
	}
	cmd.Flags().BoolVar(&forgetTOTP, "forget-totp", false, "also forget the TOTP secret and the user name")
	return cmd
}

// homeKeystoreFile opens the home folder's keystore file for writing.
func homeKeystoreFile(app *App) (*proxy.FileKeystore, error) {
	dir, err := app.Home()
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	ks, err := proxy.OpenKeystore(filepath.Join(dir, "keystore.json"))
	if err != nil {
		return nil, Exit(ExitFailed, err)
	}
	return ks, nil
}

func runLogin(ctx context.Context, app *App, services []string, f *loginFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	resolve, err := parseResolve(f.resolve)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	ca, err := readCA(f.ca, resolve)
	if err != nil {
		return Exit(ExitFailed, err)
	}
	cat := proxy.Builtin()
	if f.services != "" {
		over, err := proxy.LoadServices(f.services)
		if err != nil {
			return Exit(ExitFailed, err)
		}
		cat = cat.Merge(over)
	}
	known := map[string]bool{}
	for _, k := range campuslogin.Known() {
		known[k] = true
	}
	for _, s := range services {
		if !known[s] {
			return Exitf(ExitFailed, "no login is known for service %q (known: %s)", s, strings.Join(campuslogin.Known(), ", "))
		}
	}
	clock, err := app.Clock()
	if err != nil {
		return err
	}
	ks, err := homeKeystoreFile(app)
	if err != nil {
		return err
	}
	stored := ks.Login()
	in := newPrompter(app)
	user := f.user
	if user == "" {
		user = stored.User
	}
	if user == "" {
		if user, err = in.line("IAAA user name (student id): "); err != nil {
			return Exit(ExitFailed, err)
		}
	}
	if user == "" || len(user) > 64 || strings.ContainsAny(user, " \t\r\n") {
		return Exitf(ExitFailed, "the user name must be one word of at most 64 characters")
	}
	password, err := in.Secret("Password for " + user + ": ")
	if err != nil {
		return Exit(ExitFailed, err)
	}
	if password == "" {
		return Exitf(ExitFailed, "no password given")
	}
	secret := ""
	if stored.User == user {
		secret = stored.TOTP
	}
	if f.totp {
		s, err := in.Secret("TOTP secret of the OTP (base32; kept in the keystore): ")
		if err != nil {
			return Exit(ExitFailed, err)
		}
		if secret, err = normaliseTOTP(s); err != nil {
			return Exit(ExitFailed, err)
		}
	}
	res, err := campuslogin.Login(ctx, campuslogin.Config{Catalogue: cat, Resolve: resolve, ResolveCA: ca, Clock: clock,
		Prompt: in, Progress: app.Stderr}, campuslogin.Credentials{User: user, Password: password, TOTP: secret}, services)
	if err != nil {
		var ie *campuslogin.IAAAError
		if errors.As(err, &ie) && ie.Code == "E05" && secret != "" && !f.totp {
			return Exitf(ExitFailed, "%v; the TOTP secret kept in the keystore may be wrong: harness logout --forget-totp, then harness login --totp", err)
		}
		return Exit(ExitFailed, err)
	}
	names := make([]string, 0, len(res.Sessions))
	for s := range res.Sessions {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		if err := ks.Put(s, res.Sessions[s]); err != nil {
			return Exitf(ExitFailed, "storing the %s session: %v", s, err)
		}
	}
	li := proxy.LoginInfo{User: user, Name: stored.Name, TOTP: secret}
	if stored.User != user {
		li.Name = ""
	}
	if res.Name != "" {
		li.Name = res.Name
	}
	if res.Mode != "OTP" {
		li.TOTP = ""
	}
	if err := ks.SetLogin(li); err != nil {
		return Exit(ExitFailed, err)
	}
	for _, s := range names {
		fmt.Fprintf(app.Stdout, "%s: logged in\n", s)
	}
	if li.TOTP != "" && f.totp {
		fmt.Fprintln(app.Stdout, "the TOTP secret is kept in the keystore (harness logout --forget-totp forgets it)")
	}
	if len(res.Failed) > 0 {
		failed := make([]string, 0, len(res.Failed))
		for s := range res.Failed {
			failed = append(failed, s)
		}
		sort.Strings(failed)
		for _, s := range failed {
			fmt.Fprintf(app.Stderr, "harness: login: %s: %v\n", s, res.Failed[s])
		}
		return Exitf(ExitFailed, "login failed for %s", strings.Join(failed, ", "))
	}
	return nil
}

// normaliseTOTP checks a base32 TOTP secret (spaces and case as apps show
// it are allowed), never quoting it.
func normaliseTOTP(s string) (string, error) {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s)))
	s = strings.TrimRight(s, "=")
	if len(s) < 16 || len(s) > 128 {
		return "", errors.New("the TOTP secret must be 16 to 128 base32 characters")
	}
	if _, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s); err != nil {
		return "", errors.New("the TOTP secret is not base32 (letters A-Z and digits 2-7)")
	}
	return s, nil
}

func runLogout(app *App, services []string, forgetTOTP bool) error {
	ks, err := homeKeystoreFile(app)
	if err != nil {
		return err
	}
	if len(services) == 0 {
		// Every campus session; a remote plugin's bearer token, kept under
		// the plugin's id, is not one (harness remove forgets it).
		for _, s := range ks.Services() {
			if !strings.HasPrefix(s, remote.Prefix) {
				services = append(services, s)
			}
		}
	}
	var gone []string
	for _, s := range services {
		if _, ok := ks.Get(s); !ok {
			continue
		}
		if err := ks.Delete(s); err != nil {
			return Exit(ExitFailed, err)
		}
		gone = append(gone, s)
	}
	if len(gone) == 0 {
		fmt.Fprintln(app.Stdout, "no session to forget")
	} else {
		fmt.Fprintf(app.Stdout, "forgot the sessions of %s\n", strings.Join(gone, ", "))
	}
	li := ks.Login()
	switch {
	case forgetTOTP:
		if err := ks.SetLogin(proxy.LoginInfo{}); err != nil {
			return Exit(ExitFailed, err)
		}
		if li.TOTP != "" {
			fmt.Fprintln(app.Stdout, "forgot the TOTP secret and the user name")
		}
	case li.TOTP != "":
		fmt.Fprintln(app.Stdout, "the TOTP secret is kept (harness logout --forget-totp forgets it)")
	}
	return nil
}

// prompter reads the login's answers: prompts on stderr, answers from the
// terminal (secrets without echo) or lines of stdin.
type prompter struct {
	app *App
	r   *bufio.Reader
}

func newPrompter(app *App) *prompter {
	in := app.Stdin
	if in == nil {
		in = strings.NewReader("")
	}
	return &prompter{app: app, r: bufio.NewReaderSize(in, 4096)}
}

const maxAnswer = 4096

func (p *prompter) read() (string, error) {
	var b strings.Builder
	for {
		frag, err := p.r.ReadSlice('\n')
		b.Write(frag)
		if b.Len() > maxAnswer {
			return "", fmt.Errorf("an answer is longer than %d bytes", maxAnswer)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && b.Len() > 0 {
			break
		}
		if err != nil {
			if err == io.EOF {
				return "", errors.New("stdin ended before the answer")
			}
			return "", err
		}
		break
	}
	return strings.TrimRight(b.String(), "\r\n"), nil
}

func (p *prompter) line(prompt string) (string, error) {
	fmt.Fprint(p.app.Stderr, prompt)
	s, err := p.read()
	return strings.TrimSpace(s), err
}

// Secret implements campuslogin.Prompter: read without echo on a terminal.
func (p *prompter) Secret(prompt string) (string, error) {
	fmt.Fprint(p.app.Stderr, prompt)
	var s string
	var err error
	if f, isFile := p.app.Stdin.(*os.File); isFile {
		ok, terr := noEcho(f, func() error { s, err = p.read(); return err })
		if ok {
			fmt.Fprintln(p.app.Stderr)
			if terr != nil {
				return "", terr
			}
			return s, nil
		}
	}
	return p.read()
}
