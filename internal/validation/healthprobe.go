package validation

import (
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// ValidateHealthProbes checks health probes (the operator's --health-probe flags, a node's spec.healthProbes):
// a unique name each, and an IP address with a TCP port.
func ValidateHealthProbes(path *field.Path, probes []v1.HealthProbe) field.ErrorList {
	var errs field.ErrorList
	if len(probes) > v1.MaxHealthProbes {
		errs = append(errs, field.TooMany(path, len(probes), v1.MaxHealthProbes))
	}
	seen := map[string]bool{}
	for i, p := range probes {
		f := path.Index(i)
		switch {
		case p.Name == "":
			errs = append(errs, field.Required(f.Child("name"), "a name for errors and status"))
		case len(p.Name) > 63:
			errs = append(errs, field.TooLong(f.Child("name"), p.Name, 63))
		case seen[p.Name]:
			errs = append(errs, field.Duplicate(f.Child("name"), p.Name))
		}
		seen[p.Name] = true
		if ap, err := netip.ParseAddrPort(p.Address); err != nil || ap.Port() == 0 || ap.Addr().Zone() != "" {
			errs = append(errs, field.Invalid(f.Child("address"), p.Address,
				"must be an IP address and a TCP port, e.g. 192.0.2.53:53 or [2001:db8::53]:53"))
		}
	}
	return errs
}
