package netguard

import (
	"fmt"
	"net/netip"
)

// CheckSealedDial is the decision of a sealed host (the simulated campus of
// --campus, where nothing may leave loopback) for one connection to addr,
// "ip:port" after any --resolve mapping: nil only for a loopback address
// literal (127.0.0.0/8, ::1, also IPv4-mapped). A name is refused as it
// is, since resolving it would already send a DNS query off the machine.
// It never resolves and never dials.
func CheckSealedDial(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return fmt.Errorf("%w: %s is not a loopback address, and a sealed host resolves no names (nothing leaves loopback)", ErrDenied, addr)
	}
	a := ap.Addr()
	if a.Zone() != "" || !a.Unmap().IsLoopback() {
		return fmt.Errorf("%w: %s is not a loopback address (nothing leaves loopback)", ErrDenied, ap.Addr())
	}
	if ap.Port() == 0 {
		return fmt.Errorf("%w: loopback address %s has no port", ErrDenied, addr)
	}
	return nil
}
