package kube

// SeveralManagers returns o for one of several agent managers in one test process.
func SeveralManagers(o Options) Options {
	o.skipNameValidation = true
	return o
}
