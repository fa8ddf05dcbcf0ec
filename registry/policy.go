package registry

import (
	"fmt"

	"github.com/pkuinfo/harness/manifest"
)

// Actor is who makes a call.
type Actor string

// The actors.
const (
	User      Actor = "user"      // the person, through the app's own surfaces
	Agent     Actor = "agent"     // the model, on the person's behalf
	Scheduler Actor = "scheduler" // background checks and widgets, nobody watching
)

// Actors lists the actors.
var Actors = []Actor{User, Agent, Scheduler}

// Trust is how far a document is trusted.
type Trust string

// The trust levels.
const (
	Official  Trust = "official"  // bundled, or from the official repository
	Community Trust = "community" // everything else
)

// Trusts lists the trust levels.
var Trusts = []Trust{Official, Community}

// ParseTrust reads a trust name.
func ParseTrust(s string) (Trust, error) {
	switch t := Trust(s); t {
	case Official, Community:
		return t, nil
	}
	return "", fmt.Errorf("trust %q must be official or community", s)
}

// Modes lists the modes from loosest to strictest.
var Modes = []manifest.Mode{manifest.Auto, manifest.Ask, manifest.Off}

// strictness orders modes: auto 0 < ask 1 < off 2; an unknown mode counts as
// off.
func strictness(m manifest.Mode) int {
	switch m {
	case manifest.Auto:
		return 0
	case manifest.Ask:
		return 1
	}
	return 2
}

// Stricter returns the stricter of two modes.
func Stricter(a, b manifest.Mode) manifest.Mode {
	if strictness(a) >= strictness(b) {
		return a
	}
	return b
}

// Loosest is the loosest mode trust allows for an effect: a mode looser than
// this is clamped to it, and a user cannot set it. Community documents ask
// before every write, money and public call (the reference: "Tools from
// community documents ask you before any write, money or public effect");
// official
// documents may be set to anything.
func Loosest(t Trust, e manifest.Effect) manifest.Mode {
	if t == Official {
		return manifest.Auto
	}
	switch e {
	case manifest.Read:
		return manifest.Auto
	case manifest.Write, manifest.Money, manifest.Public:
		return manifest.Ask
	}
	return manifest.Off
}

// BaseMode is the default mode of an effect before the document says
// anything: read auto, the rest ask, whatever the trust.
func BaseMode(e manifest.Effect) manifest.Mode {
	switch e {
	case manifest.Read:
		return manifest.Auto
	case manifest.Write, manifest.Money, manifest.Public:
		return manifest.Ask
	}
	return manifest.Off
}

// DefaultMode is the mode an effect has when the user never set one. An
// official document's defaultModes apply within the official bounds; a
// community document's defaultModes may only make a mode stricter than the
// base default.
func DefaultMode(t Trust, p *manifest.Plugin, e manifest.Effect) manifest.Mode {
	m := BaseMode(e)
	if p != nil {
		if dm, ok := p.DefaultModes[e]; ok {
			if t == Official {
				m = dm
			} else {
				m = Stricter(m, dm)
			}
		}
	}
	return Stricter(m, Loosest(t, e))
}

// Effective is the mode that applies: the user's mode when set, else the
// default, clamped to what trust allows.
func Effective(t Trust, p *manifest.Plugin, e manifest.Effect, user manifest.Mode) manifest.Mode {
	if user == "" {
		return DefaultMode(t, p, e)
	}
	return Stricter(user, Loosest(t, e))
}

// CheckMode reports whether a user may set mode m for effect e of a document
// of trust t.
func CheckMode(t Trust, e manifest.Effect, m manifest.Mode) error {
	if e.Rank() < 0 {
		return fmt.Errorf("effect %q must be read, write, money or public", e)
	}
	if strictness(m) == 2 && m != manifest.Off {
		return fmt.Errorf("mode %q must be auto, ask or off", m)
	}
	if l := Loosest(t, e); strictness(m) < strictness(l) {
		return fmt.Errorf("a %s document's %s tools cannot be %s: the loosest allowed is %s", t, e, m, l)
	}
	return nil
}
