package metrics

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/rest"
)

func TestRequestKind(t *testing.T) {
	for _, tc := range []struct {
		method, path       string
		verb, wantResource string
	}{
		{"GET", "/apis/network.network-operator.io/v1alpha1/nodenetworkconfigs?resourceVersion=0&limit=500", "list", "nodenetworkconfigs"},
		{"GET", "/apis/network.network-operator.io/v1alpha1/nodenetworkconfigs?watch=true&resourceVersion=12", "watch", "nodenetworkconfigs"},
		{"GET", "/apis/network.network-operator.io/v1alpha1/nodenetworkconfigs/node-001", "get", "nodenetworkconfigs"},
		{"PATCH", "/apis/network.network-operator.io/v1alpha1/nodenetworkconfigs/node-001", "patch", "nodenetworkconfigs"},
		{"PATCH", "/apis/network.network-operator.io/v1alpha1/networkconfigrevisions/rev-2-abc/status", "patch", "networkconfigrevisions/status"},
		{"POST", "/apis/network.network-operator.io/v1alpha1/nodenetworkconfigs", "create", "nodenetworkconfigs"},
		{"DELETE", "/apis/network.network-operator.io/v1alpha1/networkconfigrevisions/rev-1-abc", "delete", "networkconfigrevisions"},
		{"DELETE", "/apis/network.network-operator.io/v1alpha1/networkconfigrevisions", "deletecollection", "networkconfigrevisions"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/network-operator", "update", "leases"},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/network-operator", "get", "leases"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/default/events", "create", "events"},
		{"GET", "/api/v1/nodes?watch=1", "watch", "nodes"},
		{"PATCH", "/api/v1/nodes/node-001/status", "patch", "nodes/status"},
		{"GET", "/api/v1/namespaces/kube-system/pods", "list", "pods"},
		{"GET", "/api/v1/namespaces", "list", "namespaces"},
		{"GET", "/api/v1/namespaces/default", "get", "namespaces"},
		{"PUT", "/api/v1/namespaces/default/finalize", "update", "namespaces/finalize"},
		{"GET", "/apis", "get", NonResource},
		{"GET", "/api/v1", "get", NonResource},
		{"GET", "/version", "get", NonResource},
	} {
		u, err := url.Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		verb, resource := RequestKind(tc.method, u)
		if verb != tc.verb || resource != tc.wantResource {
			t.Errorf("%s %s = %s %s, want %s %s", tc.method, tc.path, verb, resource, tc.verb, tc.wantResource)
		}
	}
}

func TestCountRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: srv.URL}
	m.CountRequests(cfg)
	// A copy counts too: controller-runtime copies the configuration for its clients.
	hc, err := rest.HTTPClientFor(rest.CopyConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		req, err := http.NewRequest(http.MethodPatch, srv.URL+"/apis/network.network-operator.io/v1alpha1/nodenetworkconfigs/n1", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	ch := make(chan prometheus.Metric, 8)
	m.APIRequests.Collect(ch)
	close(ch)
	got := map[string]float64{}
	for c := range ch {
		var d dto.Metric
		if err := c.Write(&d); err != nil {
			t.Fatal(err)
		}
		labels := ""
		for _, l := range d.GetLabel() {
			labels += l.GetName() + "=" + l.GetValue() + " "
		}
		got[labels] = d.GetCounter().GetValue()
	}
	if want := map[string]float64{"resource=nodenetworkconfigs verb=patch ": 2}; len(got) != 1 || got["resource=nodenetworkconfigs verb=patch "] != 2 {
		t.Errorf("counted %v, want %v", got, want)
	}
}
