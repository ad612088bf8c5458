package controllers

import (
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Leader election (cmd/network-operator --leader-elect) uses a Lease:
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Setup registers the controllers with mgr (whose cache is made with CacheOptions).
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.Metrics == nil {
		return errors.New("controllers: Options.Metrics is required")
	}
	opts = opts.withDefaults()
	if err := (&ConfigReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Opts: opts}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up config controller: %w", err)
	}
	if err := (&RolloutReconciler{Client: mgr.GetClient(), Opts: opts}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up rollout controller: %w", err)
	}
	if err := (&MirrorStatusReconciler{Client: mgr.GetClient(), Opts: opts}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up mirror status controller: %w", err)
	}
	if err := (&LinkStatusReconciler{Client: mgr.GetClient(), Opts: opts}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up link status controller: %w", err)
	}
	if err := (&PodNetworkReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up pod network controller: %w", err)
	}
	return nil
}
