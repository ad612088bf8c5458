package mirror

import (
	"testing"

	"github.com/network-operator/network-operator/test/harness/lab"
	"github.com/network-operator/network-operator/test/harness/testreq"
)

// TestObserveWatch: with WatchChanges, an observation given the same links is reused until a qdisc or filter
// changes; other links, or a stopped watch, observe again.
func TestObserveWatch(t *testing.T) {
	testreq.Root(t)
	l := lab.New(t)
	l.MustBuild(t.Context(), lab.Topology{Namespaces: []lab.Namespace{{Name: "node"}, {Name: "peer"}},
		Veths: []lab.Veth{{A: lab.Port{NS: "node", Name: "src"}, B: lab.Port{NS: "peer", Name: "eth0"}}}})
	node := l.NS("node")
	m := New(node.Handle(), node.NsHandle())
	stop, err := m.WatchChanges()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	nl, err := node.Handle().LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var links []Link
	for _, k := range nl {
		links = append(links, Link{Name: k.Attrs().Name, Alias: k.Attrs().Alias, Index: k.Attrs().Index})
	}
	observe := func() *Observed {
		t.Helper()
		o, err := m.observe(t.Context(), links)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	first := observe()
	if again := observe(); again != first {
		t.Fatal("nothing changed: observed again")
	}
	if _, err := node.Output(t.Context(), "tc", "qdisc", "add", "dev", "src", "clsact"); err != nil {
		t.Fatal(err)
	}
	changed := observe()
	if changed == first || !changed.Clsact["src"] {
		t.Fatalf("after adding a clsact qdisc: reused %v, clsact %v", changed == first, changed.Clsact)
	}
	if again := observe(); again != changed {
		t.Fatal("nothing changed since: observed again")
	}
	links = append(links, Link{Name: "gone", Index: 999})
	if other := observe(); other == changed {
		t.Fatal("other links: the observation of the old ones was reused")
	}
	stop()
	a, b := observe(), observe()
	if a == b {
		t.Fatal("without the watch: an observation was reused")
	}
}
