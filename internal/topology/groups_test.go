package topology

import (
	"os"
	"reflect"
	"testing"
)

// The expected groups are read off Java's describe output for the same specs
// (testdata/describe/diamond.describe.txt and globalfirst.describe.txt, from Java 4.4.0).
func TestNodeGroupsAsJava(t *testing.T) {
	cases := []struct {
		spec string
		want []NodeGroup
	}{
		{"diamond", []NodeGroup{
			// A and E share store s1, so src2/E join sub-topology 0.
			{ID: 0, Nodes: []string{"src", "A", "B", "C", "D", "out1", "out2", "src2", "E"}},
			{ID: 1, Nodes: []string{"gsrc", "gproc"}, Global: true},
			{ID: 2, Nodes: []string{"src3", "out3"}},
		}},
		{"globalfirst", []NodeGroup{
			{ID: 0, Nodes: []string{"gs1", "gp1"}, Global: true},
			{ID: 1, Nodes: []string{"gs2", "gp2"}, Global: true},
			{ID: 2, Nodes: []string{"s1", "k1"}},
			{ID: 3, Nodes: []string{"gs3", "gp3"}, Global: true},
			{ID: 4, Nodes: []string{"ps", "pp"}},
		}},
	}
	for _, c := range cases {
		spec, err := os.ReadFile("testdata/describe/" + c.spec + ".spec")
		if err != nil {
			t.Fatal(err)
		}
		b, err := buildSpec(t, string(spec))
		if err != nil {
			t.Fatal(err)
		}
		if got := b.NodeGroups(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: groups\n got %+v\nwant %+v", c.spec, got, c.want)
		}
	}
}

// A store connected later merges groups that were apart (Java prints one sub-topology for
// this graph: testdata/describe/merge-later.describe.txt); groups are recomputed on every call,
// as Java's makeNodeGroups runs on every describe.
func TestNodeGroupsMergeByLaterStore(t *testing.T) {
	b := New()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.AddSource("s1", []string{"a"}, nil, "", ResetDefault, nil, nil, nil))
	must(b.AddSource("s2", []string{"b"}, nil, "", ResetDefault, nil, nil, nil))
	must(b.AddProcessor("p2", fakeSupplier{}, "s2"))
	must(b.AddProcessor("p1", fakeSupplier{}, "s1"))
	if g := b.NodeGroups(); len(g) != 2 || g[0].Nodes[0] != "s1" || g[1].Nodes[0] != "s2" {
		t.Fatalf("before: %+v", g)
	}
	must(b.AddStateStore(&fakeStore{name: "st"}, "p1"))
	must(b.ConnectProcessorAndStateStores("p2", "st"))
	want := []NodeGroup{{ID: 0, Nodes: []string{"s1", "s2", "p2", "p1"}}}
	if g := b.NodeGroups(); !reflect.DeepEqual(g, want) {
		t.Fatalf("after: %+v", g)
	}
}

func TestNodeChildrenInAddOrder(t *testing.T) {
	b := New()
	_ = b.AddSource("s", []string{"a"}, nil, "", ResetDefault, nil, nil, nil)
	_ = b.AddProcessor("z", fakeSupplier{}, "s")
	_ = b.AddSink("a", "out", nil, "", nil, nil, nil, "s")
	_ = b.AddProcessor("m", fakeSupplier{}, "s", "z")
	if got := b.Node("s").Children; !reflect.DeepEqual(got, []string{"z", "a", "m"}) {
		t.Fatalf("children of s: %v", got)
	}
	if got := b.Node("z").Children; !reflect.DeepEqual(got, []string{"m"}) {
		t.Fatalf("children of z: %v", got)
	}
}

// Java's ProcessorNode.addChild runs once per predecessor entry, so a parent named twice has
// the child twice (records reach it twice); describe still lists it once
// (testdata/describe/dup-parents.describe.txt).
func TestDuplicateParentGivesChildTwice(t *testing.T) {
	b := New()
	_ = b.AddSource("s", []string{"a"}, nil, "", ResetDefault, nil, nil, nil)
	if err := b.AddProcessor("p", fakeSupplier{}, "s", "s"); err != nil {
		t.Fatal(err)
	}
	if got := b.Node("s").Children; !reflect.DeepEqual(got, []string{"p", "p"}) {
		t.Fatalf("children %v", got)
	}
}
