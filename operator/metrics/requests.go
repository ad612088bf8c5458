package metrics

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

// NonResource is the resource label of requests for no API resource (discovery, /version, /healthz).
const NonResource = "(non-resource)"

// RequestKind names an API request the way the API server's audit log and apiserver_request_total do: the verb
// (get, list, watch, create, update, patch, delete, deletecollection) and the resource, with its subresource
// after a slash ("nodenetworkconfigs/status"). A path outside /api and /apis is NonResource with the method's
// lower-case name as its verb.
func RequestKind(method string, u *url.URL) (verb, resource string) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api, v1
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:] // apis, group, version
	default:
		return strings.ToLower(method), NonResource
	}
	// namespaces/<ns>/<resource>...; namespaces/<ns> and its status/finalize are the Namespace itself.
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:]
	}
	resource = parts[0]
	named := len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		q := u.Query().Get("watch")
		switch {
		case q == "true" || q == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(method)
	}
	return verb, resource
}

// CountRequests makes every client built from cfg (and its copies: the manager's clients, informers, event
// recorder and leader election) count its requests in m.APIRequests.
func (m *Metrics) CountRequests(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return &countingTransport{next: next, requests: m.APIRequests}
	})
}

type countingTransport struct {
	next     http.RoundTripper
	requests *prometheus.CounterVec
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.requests.WithLabelValues(RequestKind(req.Method, req.URL)).Inc()
	return t.next.RoundTrip(req)
}
