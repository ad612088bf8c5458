package kernellane

import (
	"crypto/sha256"
	"encoding/hex"
)

// guestHash names an initramfs after the guest scripts in it: a changed init or stage2 builds a new one.
func guestHash() string {
	h := sha256.New()
	for _, f := range []string{"guest/init", "guest/stage2"} {
		data, _ := guest.ReadFile(f)
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
