package kernellane

import (
	"crypto/sha256"
	"encoding/hex"
)

// guestHash names an initramfs after what goes into it: a changed init, stage2 or module list builds a new one.
func guestHash() string {
	h := sha256.New()
	for _, m := range initModules {
		h.Write([]byte(m + "\n"))
	}
	for _, f := range []string{"guest/init", "guest/stage2"} {
		data, _ := guest.ReadFile(f)
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
