// Package chart_test checks charts/network-operator with the real helm: lint, what the defaults render, that
// values matter, and that values which cannot work fail `helm template` (and so `helm install`) naming the value.
package chart_test

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/network-operator/network-operator/agent/cleanup"
	"github.com/network-operator/network-operator/agent/kube"
	testenv "github.com/network-operator/network-operator/test/harness/testenv"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

func helm(t *testing.T) (string, string) {
	t.Helper()
	bin := filepath.Join(os.Getenv("NETOP_CHART_TOOLS"), "helm")
	_, err := os.Stat(bin)
	testreq.Available(t, "helm (make chart-tools; NETOP_CHART_TOOLS names its directory)", err)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return bin, filepath.Join(root, "charts", "network-operator")
}

func run(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// render returns the objects `helm template` makes with the given --set values, by kind/name.
func render(t *testing.T, set ...string) map[string]runtime.Object {
	t.Helper()
	bin, chart := helm(t)
	args := []string{"template", "network-operator", chart, "--namespace", "network-operator"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := run(t, bin, args...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", set, err, out)
	}
	objs := map[string]runtime.Object{}
	for _, doc := range strings.Split(out, "\n---") {
		if strings.TrimSpace(doc) == "" || !strings.Contains(doc, "kind:") {
			continue
		}
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("rendered document: %v\n%s", err, doc)
		}
		key := u.GetKind() + "/" + u.GetName()
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			objs[key] = &u // CRDs, cert-manager: not in client-go's scheme
			continue
		}
		objs[key] = obj
	}
	return objs
}

func TestLint(t *testing.T) {
	bin, chart := helm(t)
	if out, err := run(t, bin, "lint", "--strict", chart); err != nil {
		t.Fatalf("helm lint --strict: %v\n%s", err, out)
	}
}

func TestDefaults(t *testing.T) {
	objs := render(t)
	for _, k := range []string{"CustomResourceDefinition/nodenetworkconfigs.network.network-operator.io", "ServiceAccount/network-operator",
		"ServiceAccount/network-agent", "DaemonSet/network-frr", "PodDisruptionBudget/network-operator", "Service/network-operator-webhook",
		"ValidatingWebhookConfiguration/network-operator-validating", "ValidatingAdmissionPolicy/network-operator-agent-node-scope",
		"ValidatingAdmissionPolicyBinding/network-operator-agent-node-scope", "Job/network-operator-uninstall"} {
		if objs[k] == nil {
			t.Errorf("%s not rendered", k)
		}
	}
	d := objs["Deployment/network-operator"].(*appsv1.Deployment)
	pod := d.Spec.Template.Spec
	op := pod.Containers[0]
	if *d.Spec.Replicas != 2 || !slices.Contains(op.Args, "--leader-elect") || !slices.Contains(op.Args, "--webhook-cert-mode=self") {
		t.Errorf("operator: replicas %d args %v: want 2 replicas, leader election, its own webhook certificate", *d.Spec.Replicas, op.Args)
	}
	if sc := op.SecurityContext; !*pod.SecurityContext.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation ||
		!slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("operator security context %+v: want non-root, read-only root, no capabilities", sc)
	}
	ds := objs["DaemonSet/network-agent"].(*appsv1.DaemonSet)
	spec := ds.Spec.Template.Spec
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if !spec.HostNetwork || spec.PriorityClassName != "system-node-critical" || ru.MaxUnavailable.IntValue() != 1 || ru.MaxSurge.IntValue() != 0 {
		t.Errorf("agent DaemonSet: hostNetwork %v priority %q rolling update %+v", spec.HostNetwork, spec.PriorityClassName, ru)
	}
	// FRR by default in a DaemonSet of its own (an agent upgrade leaves it running) on the agent's nodes, sharing
	// the config and vty directories through the same host paths.
	frrDS := objs["DaemonSet/network-frr"].(*appsv1.DaemonSet)
	frrPod := frrDS.Spec.Template.Spec
	if !frrPod.HostNetwork || frrPod.PriorityClassName != "system-node-critical" || len(frrPod.Containers) != 1 ||
		frrPod.Containers[0].Name != "frr" || *frrPod.AutomountServiceAccountToken ||
		frrDS.Spec.UpdateStrategy.RollingUpdate.MaxSurge.IntValue() != 0 || !reflect.DeepEqual(frrPod.Tolerations, spec.Tolerations) {
		t.Errorf("FRR DaemonSet: hostNetwork %v priority %q containers %d, token %v, rolling update %+v, tolerations %v (agent %v)",
			frrPod.HostNetwork, frrPod.PriorityClassName, len(frrPod.Containers), *frrPod.AutomountServiceAccountToken,
			frrDS.Spec.UpdateStrategy.RollingUpdate, frrPod.Tolerations, spec.Tolerations)
	}
	hostPaths := func(vols []corev1.Volume) map[string]string {
		out := map[string]string{}
		for _, v := range vols {
			if v.HostPath != nil && (v.Name == "frr-conf" || v.Name == "frr-run") {
				out[v.Name] = v.HostPath.Path
			}
		}
		return out
	}
	if a, f := hostPaths(spec.Volumes), hostPaths(frrPod.Volumes); len(a) != 2 || !maps.Equal(a, f) {
		t.Errorf("FRR's directories: agent %v, FRR %v: want the same two host paths", a, f)
	}
	// ... next to the agent's state file, where the uninstall's cleanup removes them.
	stateDir := ""
	for _, a := range spec.Containers[0].Args {
		if f, ok := strings.CutPrefix(a, "--state-file="); ok {
			stateDir = filepath.Dir(f)
		}
	}
	for name, p := range hostPaths(frrPod.Volumes) {
		if filepath.Dir(p) != filepath.Join(stateDir, cleanup.FRRDaemonDir) {
			t.Errorf("FRR volume %s at %s, want it in %s", name, p, filepath.Join(stateDir, cleanup.FRRDaemonDir))
		}
	}
	// A planned stop of FRR's DaemonSet pod ends zebra and bgpd as a crash would (graceful restart keeps the routes)
	// unless the uninstall removed FRR's config; in the agent's pod, or without graceful restart, a clean stop.
	for set, want := range map[string]bool{"": true, "frr.mode=pod": false, "frr.gracefulRestart.enabled=false": false} {
		var sets []string
		if set != "" {
			sets = append(sets, set)
		}
		objs := render(t, sets...)
		var cmd string
		if ds, ok := objs["DaemonSet/network-frr"].(*appsv1.DaemonSet); ok {
			cmd = strings.Join(ds.Spec.Template.Spec.Containers[0].Command, " ")
		} else {
			cmd = strings.Join(objs["DaemonSet/network-agent"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[1].Command, " ")
		}
		if got := strings.Contains(cmd, "kill -KILL $(cat /var/run/frr/zebra.pid /var/run/frr/bgpd.pid)"); got != want {
			t.Errorf("--set %q: crash-like stop of zebra and bgpd %v, want %v", set, got, want)
		}
	}
	// Graceful restart by default: bgpd announces it (the agent's flag), zebra keeps what a crashed zebra left.
	if !slices.Contains(spec.Containers[0].Args, "--bgp-graceful-restart=true") || !slices.Contains(spec.Containers[0].Args, "--bgp-restart-time=120s") ||
		!strings.Contains(strings.Join(frrPod.Containers[0].Command, " "), `extra="-K 120"`) {
		t.Errorf("graceful restart: agent args %v, FRR command %q", spec.Containers[0].Args, frrPod.Containers[0].Command)
	}
	// SIGTERM lets the running apply step finish: the kubelet must not kill the agent before it does.
	if grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second; grace <= kube.ShutdownTimeout {
		t.Errorf("agent terminationGracePeriodSeconds %v, want more than the agent's shutdown wait %v", grace, kube.ShutdownTimeout)
	}
	var names []string
	for _, c := range spec.Containers {
		names = append(names, c.Name)
		if c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			t.Errorf("container %s is privileged", c.Name)
		}
	}
	if !slices.Equal(names, []string{"agent"}) {
		t.Errorf("agent pod containers %v, want the agent alone (FRR runs in its DaemonSet)", names)
	}
	agent := spec.Containers[0]
	var env []string
	for _, e := range agent.Env {
		env = append(env, e.Name)
	}
	if !slices.Contains(env, "NODE_NAME") || !slices.Contains(env, "GOMEMLIMIT") || agent.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		agent.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("agent container: env %v probes %+v %+v", env, agent.ReadinessProbe, agent.LivenessProbe)
	}
	cr := objs["ClusterRole/network-operator-agent"].(*rbacv1.ClusterRole)
	for _, r := range cr.Rules {
		if slices.Contains(r.Resources, "secrets") {
			t.Errorf("the agent's ClusterRole grants secrets cluster-wide: %+v", r)
		}
	}
	role := objs["Role/network-operator-agent-bgp-passwords"].(*rbacv1.Role)
	if role.Namespace != "network-operator" || len(role.Rules) != 1 || !slices.Contains(role.Rules[0].Resources, "secrets") {
		t.Errorf("BGP password Role: %+v", role)
	}
	vap := objs["ValidatingAdmissionPolicy/network-operator-agent-node-scope"].(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if *vap.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("node-scope policy fails open")
	}
}

// TestTenantRoles: the tenant roles grant PodNetworkConfigs only - the status read-only, since the operator and
// the agents write it - and aggregate into the cluster's admin/edit and view roles.
func TestTenantRoles(t *testing.T) {
	objs := render(t)
	for _, tc := range []struct {
		name, aggregate string
		write           bool
	}{
		{"network-operator-podnetwork-editor", "rbac.authorization.k8s.io/aggregate-to-edit", true},
		{"network-operator-podnetwork-viewer", "rbac.authorization.k8s.io/aggregate-to-view", false},
	} {
		cr, ok := objs["ClusterRole/"+tc.name].(*rbacv1.ClusterRole)
		if !ok {
			t.Errorf("ClusterRole %s not rendered", tc.name)
			continue
		}
		if cr.Labels[tc.aggregate] != "true" {
			t.Errorf("%s: labels %v, want %s", tc.name, cr.Labels, tc.aggregate)
		}
		var writes bool
		for _, r := range cr.Rules {
			for _, res := range r.Resources {
				if !slices.Equal(r.APIGroups, []string{"network.network-operator.io"}) || (res != "podnetworkconfigs" && res != "podnetworkconfigs/status") {
					t.Errorf("%s grants %v %s", tc.name, r.APIGroups, res)
				}
				for _, verb := range r.Verbs {
					if !slices.Contains([]string{"get", "list", "watch"}, verb) {
						writes = true
						if res != "podnetworkconfigs" {
							t.Errorf("%s: %s %s: the status belongs to the operator and the agents", tc.name, verb, res)
						}
					}
				}
			}
		}
		if writes != tc.write {
			t.Errorf("%s writes PodNetworkConfigs: %t, want %t", tc.name, writes, tc.write)
		}
	}
}

func TestValuesMatter(t *testing.T) {
	host := render(t, "frr.mode=host", "bgpPasswordNamespace=bgp")
	spec := host["DaemonSet/network-agent"].(*appsv1.DaemonSet).Spec.Template.Spec
	if len(spec.Containers) != 1 || host["DaemonSet/network-frr"] != nil {
		t.Errorf("frr.mode=host: %d containers, FRR DaemonSet %v: want the agent alone", len(spec.Containers), host["DaemonSet/network-frr"] != nil)
	}
	// frr.mode=pod: FRR is a container of the agent's pod, on volumes of the pod.
	inPod := render(t, "frr.mode=pod")
	podSpec := inPod["DaemonSet/network-agent"].(*appsv1.DaemonSet).Spec.Template.Spec
	if len(podSpec.Containers) != 2 || podSpec.Containers[1].Name != "frr" || inPod["DaemonSet/network-frr"] != nil {
		t.Errorf("frr.mode=pod: %d containers, FRR DaemonSet %v: want agent and frr in one pod", len(podSpec.Containers), inPod["DaemonSet/network-frr"] != nil)
	}
	for _, v := range podSpec.Volumes {
		if (v.Name == "frr-conf" || v.Name == "frr-run") && v.EmptyDir == nil {
			t.Errorf("frr.mode=pod: volume %s is not the pod's", v.Name)
		}
	}
	for _, v := range spec.Volumes {
		if (v.Name == "frr-conf" || v.Name == "frr-run") && v.HostPath == nil {
			t.Errorf("frr.mode=host: volume %s is not the host's", v.Name)
		}
	}
	if r := host["Role/network-operator-agent-bgp-passwords"].(*rbacv1.Role); r.Namespace != "bgp" {
		t.Errorf("bgpPasswordNamespace=bgp: Role in %q", r.Namespace)
	}
	idle := render(t, "agent.frrScratch=true", "agent.frrScratchIdle=90s")
	args := idle["DaemonSet/network-agent"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--frr-scratch=true") || !slices.Contains(args, "--frr-scratch-idle=90s") {
		t.Errorf("agent.frrScratch=true, agent.frrScratchIdle=90s: agent args %v", args)
	}
	// The Go memory limit: 64Mi by default, another value, or none (the runtime keeps GOMEMLIMIT).
	for set, want := range map[string]string{"": "--memory-limit=64Mi", "agent.goMemoryLimit=96Mi": "--memory-limit=96Mi",
		"agent.goMemoryLimit=": ""} {
		var sets []string
		if set != "" {
			sets = append(sets, set)
		}
		args := render(t, sets...)["DaemonSet/network-agent"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Args
		got := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--memory-limit") })
		if (want == "" && got >= 0) || (want != "" && (got < 0 || args[got] != want)) {
			t.Errorf("--set %q: agent args %v, want %q", set, args, want)
		}
	}
	// Graceful restart off, or with another time: the agent's flags and zebra's follow.
	for _, tc := range []struct {
		set        []string
		args       []string
		zebraFlags string
	}{
		{[]string{"frr.gracefulRestart.enabled=false"}, []string{"--bgp-graceful-restart=false"}, ""},
		{[]string{"frr.gracefulRestart.restartTime=300"}, []string{"--bgp-graceful-restart=true", "--bgp-restart-time=300s"}, `"-K 300"`},
	} {
		objs := render(t, tc.set...)
		pod := objs["DaemonSet/network-agent"].(*appsv1.DaemonSet).Spec.Template.Spec
		command := strings.Join(objs["DaemonSet/network-frr"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Command, " ")
		for _, a := range tc.args {
			if !slices.Contains(pod.Containers[0].Args, a) {
				t.Errorf("--set %v: agent args %v lack %s", tc.set, pod.Containers[0].Args, a)
			}
		}
		if (tc.zebraFlags == "") == strings.Contains(command, "-K") || (tc.zebraFlags != "" && !strings.Contains(command, tc.zebraFlags)) {
			t.Errorf("--set %v: FRR command %q, want zebra flags %q", tc.set, command, tc.zebraFlags)
		}
	}
	// bfdd runs next to bgpd (sessions with BFD need it), mgmtd next to zebra (FRR 10); the operator's underlay BFD flags follow the values.
	if cmd := strings.Join(render(t)["DaemonSet/network-frr"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "zebra mgmtd bgpd staticd bfdd") {
		t.Errorf("FRR container runs %q, want mgmtd and bfdd too", cmd)
	}
	for _, tc := range []struct {
		set  []string
		want []string
	}{
		{nil, nil},
		{[]string{"operator.underlay.bfd.enabled=true"}, []string{"--underlay-bfd"}},
		{[]string{"operator.underlay.bfd.enabled=true", "operator.underlay.bfd.interval=100ms", "operator.underlay.bfd.detectMultiplier=4",
			"operator.underlay.bfd.echoInterval=50ms"},
			[]string{"--underlay-bfd", "--underlay-bfd-interval=100ms", "--underlay-bfd-detect-multiplier=4", "--underlay-bfd-echo-interval=50ms"}},
	} {
		args := render(t, tc.set...)["Deployment/network-operator"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args
		var got []string
		for _, a := range args {
			if strings.HasPrefix(a, "--underlay-bfd") {
				got = append(got, a)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("--set %v: operator BFD args %v, want %v", tc.set, got, tc.want)
		}
	}
	// An IPv6 or dual-stack underlay: the operator's family and neighbour flags follow the values.
	for _, tc := range []struct {
		set  []string
		want []string
	}{
		{nil, nil},
		{[]string{"operator.underlay.addressFamilies={IPv6}", "operator.underlay.neighbors={2001:db8:255::1,fe80::1%eth1}"},
			[]string{"--underlay-neighbors=2001:db8:255::1,fe80::1%eth1", "--underlay-address-families=IPv6"}},
		{[]string{"operator.underlay.addressFamilies={IPv4,IPv6}", "operator.underlay.vtepFamily=IPv4"},
			[]string{"--underlay-address-families=IPv4,IPv6", "--underlay-vtep-family=IPv4"}},
	} {
		args := render(t, tc.set...)["Deployment/network-operator"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args
		var got []string
		for _, a := range args {
			for _, f := range []string{"--underlay-neighbors", "--underlay-address-families", "--underlay-vtep-family"} {
				if strings.HasPrefix(a, f+"=") {
					got = append(got, a)
				}
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("--set %v: operator underlay args %v, want %v", tc.set, got, tc.want)
		}
	}
	// The health gate: the agent's bound, and the operator's probes as flags.
	if args := render(t)["DaemonSet/network-agent"].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--health-gate-timeout=60s") {
		t.Errorf("agent args %v lack the default health gate", args)
	}
	probes := render(t, "operator.healthProbes[0].name=dns", "operator.healthProbes[0].address=192.0.2.53:53",
		"operator.healthProbes[1].name=gw6", "operator.healthProbes[1].address=[2001:db8::1]:179")
	opArgs := probes["Deployment/network-operator"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(opArgs, "--health-probe=dns=192.0.2.53:53") || !slices.Contains(opArgs, "--health-probe=gw6=[2001:db8::1]:179") {
		t.Errorf("operator args %v lack the health probes", opArgs)
	}
	cm := render(t, "webhook.certMode=certManager")
	if cm["Certificate/network-operator-webhook"] == nil || cm["Issuer/network-operator-selfsigned"] == nil {
		t.Error("webhook.certMode=certManager renders no Certificate/Issuer")
	}
	op := cm["Deployment/network-operator"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	if !slices.Contains(op.Args, "--webhook-cert-mode=files") {
		t.Errorf("certManager: operator args %v", op.Args)
	}
	if a := cm["ValidatingWebhookConfiguration/network-operator-validating"].(*admissionregistrationv1.ValidatingWebhookConfiguration); a.Annotations["cert-manager.io/inject-ca-from"] == "" {
		t.Error("certManager: no CA injection annotation on the webhook configuration")
	}
}

func TestBadValues(t *testing.T) {
	bin, chart := helm(t)
	for _, tc := range []struct{ set, want string }{
		{"frr.mode=bogus", "frr.mode"},
		{"agent.capabilities={NET_RAW}", "agent.capabilities"},
		{"agent.maxUnavailable=-1", "agent.maxUnavailable"},
		{"agent.maxUnavailable=0", "agent.maxUnavailable"},
		{"webhook.certMode=vault", "webhook.certMode"},
		{"operator.underlay.asn=4294967295", "operator.underlay.asn"},
		{"operator.underlay.vtepFamily=IPv5", "operator.underlay.vtepFamily"},
		{"operator.underlay.addressFamilies={IPv4,IPv4}", "operator.underlay.addressFamilies"},
		{"frr.capabilities={NET_ADMIN}", "frr.capabilities"},
		{"image.pullPolicy=Sometimes", "image.pullPolicy"},
		{"agent.unknown=1", "agent"},
		{"agent.frrScratchIdle=ten minutes", "agent.frrScratchIdle"},
		{"agent.goMemoryLimit=64MB", "agent.goMemoryLimit"},
		{"frr.gracefulRestart.restartTime=5000", "frr.gracefulRestart.restartTime"},
		{"operator.underlay.bfd.detectMultiplier=1", "operator.underlay.bfd.detectMultiplier"},
		{"operator.underlay.bfd.interval=fast", "operator.underlay.bfd.interval"},
		{"operator.healthProbes[0].name=dns,operator.healthProbes[0].address=dns.example:53", "operator.healthProbes.0.address"},
		{"agent.healthGateTimeout=1 minute", "agent.healthGateTimeout"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			out, err := run(t, bin, "template", "x", chart, "--set", tc.set)
			if err == nil {
				t.Fatalf("--set %s rendered", tc.set)
			}
			// The schema names a value by its JSON pointer (/agent/maxUnavailable), the templates by its path.
			if !strings.Contains(out, tc.want) && !strings.Contains(out, "/"+strings.ReplaceAll(tc.want, ".", "/")) {
				t.Errorf("--set %s: message does not name %s:\n%s", tc.set, tc.want, out)
			}
			t.Logf("--set %s: %s", tc.set, strings.TrimSpace(out))
		})
	}
}

// TestKustomizeMatchesChart: `kustomize build config/default` gives the chart's default objects (without the
// helm-only uninstall hook) plus the Namespace, field for field.
func TestKustomizeMatchesChart(t *testing.T) {
	bin, chart := helm(t)
	kustomize := filepath.Join(filepath.Dir(bin), "kustomize")
	_, err := os.Stat(kustomize)
	testreq.Available(t, "kustomize (make chart-tools)", err)
	fromHelm, err := run(t, bin, "template", "network-operator", chart, "--namespace", "network-operator", "--no-hooks")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, fromHelm)
	}
	fromKustomize, err := run(t, kustomize, "build", filepath.Join(filepath.Dir(filepath.Dir(chart)), "config", "default"))
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, fromKustomize)
	}
	h, k := objects(t, fromHelm), objects(t, fromKustomize)
	if k["Namespace/network-operator"] == "" {
		t.Error("kustomize: no Namespace network-operator")
	}
	delete(k, "Namespace/network-operator")
	for key, want := range h {
		got, ok := k[key]
		switch {
		case !ok:
			t.Errorf("%s: rendered by helm, missing from kustomize", key)
		case got != want:
			t.Errorf("%s differs (make generate renews config/default):\nhelm:\n%s\nkustomize:\n%s", key, want, got)
		}
	}
	for key := range k {
		if _, ok := h[key]; !ok {
			t.Errorf("%s: from kustomize only", key)
		}
	}
}

// objects maps kind/name to the object in canonical YAML.
func objects(t *testing.T, stream string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, doc := range strings.Split(stream, "\n---") {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("document: %v\n%s", err, doc)
		}
		if u.Object == nil {
			continue
		}
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		out[u.GetKind()+"/"+u.GetName()] = string(data)
	}
	return out
}
