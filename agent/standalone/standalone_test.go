package standalone

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/network-operator/network-operator/api/v1alpha1"
)

// A restarted standalone agent continues from the status file the last run wrote.
func TestResumeStatus(t *testing.T) {
	ready := metav1.Condition{Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Applied",
		LastTransitionTime: metav1.Unix(1700000000, 0)}
	st := v1.NodeNetworkConfigStatus{AppliedRevision: "rev-1", Conditions: []metav1.Condition{ready}}
	tests := []struct {
		name  string
		write func(t *testing.T, path string)
		want  string // AppliedRevision resumed
	}{
		{"no status file yet", func(*testing.T, string) {}, ""},
		{"status of the last run", func(t *testing.T, path string) {
			if err := writeStatus(path, "node", &v1.NodeNetworkConfigSpec{Revision: "rev-1"}, st); err != nil {
				t.Fatal(err)
			}
		}, "rev-1"},
		{"unreadable status file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("status: [not, a, status"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "status.yaml")
			tt.write(t, path)
			r := &runner{o: Options{StatusFile: path, Logger: slog.New(slog.DiscardHandler)}}
			r.resumeStatus()
			if r.status.AppliedRevision != tt.want {
				t.Fatalf("resumed applied revision %q, want %q", r.status.AppliedRevision, tt.want)
			}
			if tt.want != "" && (len(r.status.Conditions) != 1 || !r.status.Conditions[0].LastTransitionTime.Equal(&ready.LastTransitionTime)) {
				t.Fatalf("resumed conditions %+v", r.status.Conditions)
			}
		})
	}
}
