package reconcile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/network-operator/network-operator/agent/nodenet"
)

// Nothing wedges a node: with its state file corrupt or gone, a restarted agent starts, keeps the node's
// objects when an apply fails (never restores "nothing"), says why, and is back to normal once a revision
// applies.
func TestLostStateAdoptsTheNode(t *testing.T) {
	for _, lose := range []string{"corrupt", "missing"} {
		t.Run(lose, func(t *testing.T) {
			dir := t.TempDir()
			r := newRig(t, dir)
			if out, _ := r.reconcile(spec("r1", "red")); !out.Applied() {
				t.Fatal(out.Err)
			}
			path := filepath.Join(dir, "state.yaml")
			if lose == "corrupt" {
				if err := os.WriteFile(path, []byte("{\"good\": {\"revision\": "), 0o600); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			// The agent restarts: same node (the fakes), a new engine reading the state file.
			e, err := New(r.e.o)
			if err != nil {
				t.Fatalf("the agent does not start: %v", err)
			}
			e.beforeStep = r.e.beforeStep
			r.e = e
			if got := e.StateErr(); (got != nil) != (lose == "corrupt") {
				t.Fatalf("state error %v", got)
			}
			if lose == "corrupt" {
				if aside, _ := filepath.Glob(path + ".unreadable-*"); len(aside) != 1 {
					t.Errorf("the corrupt file was not moved aside: %v", aside)
				}
			}
			r.w.failPhase["r2"] = nodenet.PhaseInterfaces
			out, log := r.reconcile(spec("r2", "red", "blue"))
			if out.Err == nil || !errors.Is(out.RestoreErr, ErrNothingToRestore) {
				t.Fatalf("failed apply without a record: err %v restore %v; steps %q", out.Err, out.RestoreErr, log)
			}
			for _, name := range []string{"br.red", "eth0"} {
				if _, ok := r.dp.attached[name]; !ok {
					t.Errorf("%s detached: the node was restored to nothing (steps %q)", name, log)
				}
			}
			if _, ok := r.w.links["br.red"]; !ok {
				t.Errorf("br.red removed: the node was restored to nothing (steps %q)", log)
			}
			if (out.StateErr != nil) != (lose == "corrupt") {
				t.Errorf("outcome's state error %v", out.StateErr)
			}
			out, _ = r.reconcile(spec("r3", "red", "green"))
			if !out.Applied() || out.StateErr != nil || e.StateErr() != nil {
				t.Fatalf("next good revision: %s %v, state error %v", out.Result, out.Err, out.StateErr)
			}
			if st, err := r.store.Load(); err != nil || st.Good == nil || st.Good.Revision != "r3" {
				t.Fatalf("state file after the good revision: %+v %v", st, err)
			}
		})
	}
}
