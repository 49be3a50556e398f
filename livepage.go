package kstreams

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/processor"
)

// LivePage returns a read-only page that shows the instance as it runs, refreshing itself
// every second: the instance's and threads' states, every task (active, restoring with a
// progress bar, standby) with its partitions, lag, rate, dropped records and dead letters,
// the topology drawn from Describe(), and the recent errors (thread failures and records a
// handler decided about). Everything is embedded (no script or style is fetched from the
// network); it shows no configuration, so no credentials. Mount it like net/http/pprof, at a
// path ending in "/":
//
//	http.Handle("/kstreams/", app.LivePage())
//
// The page lists the topology's stores and looks a string key up in one of them through
// interactive queries (StateQuery with a KeyQuery, active tasks only), showing each local
// task's value as JSON when it is JSON or marshals to it, else as text. The lookup shows the
// application's data: mount the page only where those who may read that data reach it.
//
// Under that path, "state.json" serves the snapshot the page polls (Metrics, the stores and
// the recent errors), "topology.svg" the drawing, and "lookup.json?store=NAME&key=KEY" a key
// lookup: 200 with each local active task's answer; 400 without store or key, for a global
// store, a store of other than string keys or not a key-value store; 404 for a store the
// topology lacks; 503 when no local active task can answer yet; the JSON's Error field says
// why. Every resource answers GET and HEAD only. No Java counterpart.
func (k *KafkaStreams) LivePage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		switch {
		case strings.HasSuffix(r.URL.Path, "/state.json"):
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(k.liveState())
		case strings.HasSuffix(r.URL.Path, "/lookup.json"):
			q := r.URL.Query()
			_, haveKey := q["key"]
			res, status := k.lookupKey(q.Get("store"), q.Get("key"), haveKey)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(res)
		case strings.HasSuffix(r.URL.Path, "/topology.svg"):
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write([]byte(topologySVG(k.topology.Describe())))
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(livePageHTML))
		}
	})
}

type liveError struct {
	Time                           time.Time
	Kind, Where, Response, Message string
}

type liveState struct {
	ApplicationID string
	Metrics       Metrics
	State         string
	Errors        []liveError
	Stores        []liveStore
	Topology      string
}

func (k *KafkaStreams) liveState() liveState {
	m := k.Metrics()
	s := liveState{ApplicationID: k.cfg.ApplicationID, Metrics: m, State: m.State.String(), Topology: k.topology.Describe().String(),
		Stores: k.liveStores()}
	for _, e := range k.obs.Snapshot().Errors {
		s.Errors = append(s.Errors, liveError{Time: e.Time, Kind: e.Kind, Where: e.Where, Response: e.Response, Message: e.Message})
	}
	return s
}

// topologySVG draws each sub-topology as a column of layers (a node one layer below its
// deepest predecessor), boxes joined by arrows.
func topologySVG(d *processor.TopologyDescription) string {
	const boxW, boxH, gapX, gapY, pad = 230, 34, 30, 26, 16
	var b strings.Builder
	type pos struct{ x, y int }
	var body strings.Builder
	x0, height := pad, 0
	for _, st := range d.Subtopologies {
		depth := map[string]int{}
		var walk func(n processor.NodeDescription, dd int)
		walk = func(n processor.NodeDescription, dd int) {
			if old, ok := depth[n.Name()]; ok && old >= dd {
				return
			}
			depth[n.Name()] = dd
			for _, s := range n.Successors() {
				walk(s, dd+1)
			}
		}
		for _, n := range st.Nodes {
			if len(n.Predecessors()) == 0 {
				walk(n, 0)
			}
		}
		perLayer := map[int]int{}
		at := map[string]pos{}
		cols := 1
		for _, n := range st.Nodes {
			dd := depth[n.Name()]
			i := perLayer[dd]
			perLayer[dd]++
			cols = max(cols, i+1)
			at[n.Name()] = pos{x0 + i*(boxW+gapX), pad + 24 + dd*(boxH+gapY)}
		}
		fmt.Fprintf(&body, `<text x="%d" y="%d" class="st">Sub-topology %d</text>`, x0, pad+12, st.ID)
		for _, n := range st.Nodes {
			p := at[n.Name()]
			for _, s := range n.Successors() {
				q := at[s.Name()]
				fmt.Fprintf(&body, `<line x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#arrow)"/>`, p.x+boxW/2, p.y+boxH, q.x+boxW/2, q.y)
			}
		}
		for _, n := range st.Nodes {
			p := at[n.Name()]
			kind := "proc"
			switch n.(type) {
			case *processor.SourceDescription:
				kind = "source"
			case *processor.SinkDescription:
				kind = "sink"
			}
			fmt.Fprintf(&body, `<g class="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="6"/><text x="%d" y="%d">%s</text></g>`,
				kind, p.x, p.y, boxW, boxH, p.x+8, p.y+21, html.EscapeString(n.Name()))
			height = max(height, p.y+boxH+pad)
		}
		x0 += cols*(boxW+gapX) + gapX
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="monospace" font-size="12">`, max(x0, 200), max(height, 60))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z"/></marker></defs>`)
	b.WriteString(`<style>line{stroke:#555}rect{fill:#eef;stroke:#447}.source rect{fill:#dfd}.sink rect{fill:#fdd}.st{font-weight:bold}</style>`)
	b.WriteString(body.String())
	b.WriteString(`</svg>`)
	return b.String()
}

const livePageHTML = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>kstreams live</title>
<style>
body{font-family:sans-serif;margin:1em 2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}
th{background:#f4f4f4}
.bar{width:140px;height:12px;background:#eee;border:1px solid #999;display:inline-block}
.bar span{display:block;height:100%;background:#4a4}
.state{font-weight:bold}
#errors td{font-family:monospace;font-size:12px}
#lookup{margin:.5em 0}
#lk-result pre{margin:0;font-size:12px}
.err{color:#a00}
</style></head><body>
<h1>kstreams: <span id="app"></span></h1>
<p>Instance <span id="state" class="state"></span>, <span id="threads"></span>; updated <span id="time"></span></p>
<h2>Threads</h2>
<table id="threadtab"><thead><tr><th>Thread</th><th>State</th><th>Processed</th><th>Rate/s</th><th>Commits</th><th>Restored</th><th>Dead letters</th></tr></thead><tbody></tbody></table>
<h2>Tasks</h2>
<table id="tasks"><thead><tr><th>Task</th><th>Kind</th><th>Thread</th><th>Partitions</th><th>Processed</th><th>Rate/s</th><th>Lag</th><th>Buffered</th><th>Dropped</th><th>Dead letters</th><th>Restore</th></tr></thead><tbody></tbody></table>
<h2>Stores</h2>
<table id="stores"><thead><tr><th>Store</th><th>Kind</th><th>Keys</th><th>Values</th><th>Local tasks</th></tr></thead><tbody></tbody></table>
<form id="lookup" method="get" action="">
<label>Store <select id="lk-store" name="store"></select></label>
<label>Key <input id="lk-key" name="key" autocomplete="off" size="30"></label>
<button id="lk-go" type="submit">Look up</button>
</form>
<div id="lk-result"></div>
<h2>Topology</h2>
<div id="topology" data-src="topology.svg"></div>
<h2>Recent errors</h2>
<table id="errors"><thead><tr><th>Time</th><th>Kind</th><th>Where</th><th>Response</th><th>Message</th></tr></thead><tbody></tbody></table>
<script>
function esc(s){return String(s).replace(/[&<>"]/g,function(c){return {"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]})}
function tid(x){return x&&typeof x==="object"?x.Subtopology+"_"+x.Partition:String(x)}
function row(cells){return "<tr>"+cells.map(function(c){return "<td>"+c+"</td>"}).join("")+"</tr>"}
function refresh(){
 fetch("state.json",{cache:"no-store"}).then(function(r){return r.json()}).then(function(s){
  var m=s.Metrics;
  document.getElementById("app").textContent=s.ApplicationID;
  document.getElementById("state").textContent=s.State;
  document.getElementById("threads").textContent=m.AliveStreamThreads+" threads alive, "+m.FailedStreamThreads+" failed";
  document.getElementById("time").textContent=new Date(m.Time).toLocaleTimeString();
  var th="",tk="";
  (m.Threads||[]).forEach(function(t){
   var dl=t.DeadLetters;
   (t.Tasks||[]).forEach(function(k){
    dl+=k.DeadLetters;
    var parts=(k.Partitions||[]).map(function(p){return esc(p.Topic)+"-"+p.Partition}).join(", ");
    var restore="";
    if(k.RestoredRecords>0||k.RestoreRemainingRecords>0){
     var tot=k.RestoredRecords+k.RestoreRemainingRecords, pct=tot?Math.round(100*k.RestoredRecords/tot):100;
     restore='<span class="bar" title="'+pct+'%"><span style="width:'+pct+'%"></span></span> <span class="restored">'+k.RestoredRecords+"/"+tot+"</span>";
    }
    tk+=row([esc(tid(k.TaskID)),esc(k.Kind),esc(t.Name),parts,k.ProcessedRecords,k.ProcessRate.toFixed(1),k.Lag<0?"?":k.Lag,k.BufferedRecords,k.DroppedRecords,k.DeadLetters,restore]);
   });
   th+=row([esc(t.Name),esc(t.State),t.Process.Total,t.Process.Rate.toFixed(1),t.Commit.Total,t.RestoredRecords,dl]);
  });
  document.querySelector("#threadtab tbody").innerHTML=th;
  document.querySelector("#tasks tbody").innerHTML=tk;
  fillStores(s.Stores||[]);
  document.querySelector("#errors tbody").innerHTML=(s.Errors||[]).slice().reverse().map(function(e){
   return row([esc(new Date(e.Time).toLocaleTimeString()),esc(e.Kind),esc(e.Where),esc(e.Response),esc(e.Message)])}).join("");
 }).catch(function(){document.getElementById("state").textContent="unreachable"});
}
var storeNames=null, params=new URLSearchParams(location.search), wantStore=params.get("store");
function fillStores(stores){
 document.querySelector("#stores tbody").innerHTML=stores.map(function(st){
  var tasks=(st.Tasks||[]).map(function(t){return esc(t.Task)+(t.State=="running"?"":" ("+esc(t.State)+")")}).join(", ");
  return row([esc(st.Name),esc(st.Global?"global":(st.Kind||"?")),esc(st.KeyType||""),esc(st.ValueType||""),tasks]);
 }).join("");
 var names=stores.filter(function(st){return !st.Global}).map(function(st){return st.Name});
 if(storeNames!==null&&names.join("\n")===storeNames.join("\n"))return;
 storeNames=names;
 var sel=document.getElementById("lk-store"), cur=sel.value||wantStore;
 sel.innerHTML=names.map(function(n){return '<option value="'+esc(n)+'">'+esc(n)+"</option>"}).join("");
 if(names.indexOf(cur)>=0)sel.value=cur;
}
function lookup(store,key){
 var out=document.getElementById("lk-result");
 out.innerHTML="<p>looking up…</p>";
 fetch("lookup.json?store="+encodeURIComponent(store)+"&key="+encodeURIComponent(key),{cache:"no-store"}).then(function(r){return r.json()}).then(function(res){
  var h="<p>Store <b>"+esc(res.Store)+"</b>, key <b>"+esc(res.Key)+"</b></p>";
  if(res.Error)h+='<p class="err" id="lk-error">'+esc(res.Error)+"</p>";
  if(res.Answers){
   h+="<table><thead><tr><th>Task</th><th>Partition</th><th>Type</th><th>Value</th></tr></thead><tbody>";
   res.Answers.forEach(function(a){
    var v=a.Failure?'<span class="err">'+esc(a.Failure)+"</span>":!a.Found?"<i>no value here</i>":
     a.JSON!==undefined?'<pre class="value">'+esc(JSON.stringify(a.JSON,null,2))+"</pre>":'<pre class="value">'+esc(a.Text)+"</pre>";
    h+='<tr data-task="'+esc(a.Task)+'"><td>'+esc(a.Task)+"</td><td>"+a.Partition+"</td><td>"+esc(a.Type||"")+"</td><td>"+v+"</td></tr>";
   });
   h+="</tbody></table>";
  }
  out.innerHTML=h;
 }).catch(function(e){out.innerHTML='<p class="err">'+esc(e)+"</p>"});
}
document.getElementById("lookup").addEventListener("submit",function(ev){
 ev.preventDefault();
 var store=document.getElementById("lk-store").value, key=document.getElementById("lk-key").value;
 history.replaceState(null,"","?store="+encodeURIComponent(store)+"&key="+encodeURIComponent(key));
 lookup(store,key);
});
if(wantStore!==null&&params.has("key")){document.getElementById("lk-key").value=params.get("key");lookup(wantStore,params.get("key"))}
var topo=document.getElementById("topology");
fetch(topo.dataset.src).then(function(r){return r.text()}).then(function(t){topo.innerHTML=t});
refresh();setInterval(refresh,1000);
</script></body></html>
`
