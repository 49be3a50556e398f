import random, sys
random.seed(int(sys.argv[1]))
N=int(sys.argv[2])
words=["a","b","c","KSTREAM-SOURCE-0000000000","KSTREAM-MAP-0000000001","proc","Proc","x1","x10","x2","zz","alpha","beta","gamma","delta","node","Sink","Source","KTABLE-AGG","m","n","q"]
def name(used):
    while True:
        w=random.choice(words)+("" if random.random()<0.3 else "-"+str(random.randint(0,99)))
        if w not in used:
            used.add(w); return w
for i in range(N):
    used=set(); topics=set(); stores=[]
    procs=[]; nonsink=[]; lines=[]
    for step in range(random.randint(2,int(sys.argv[3]))):
        r=random.random()
        if r<0.15 or not nonsink:
            n=name(used); k=random.randint(1,6)
            ts=[]
            for _ in range(k):
                t="t"+str(random.randint(0,200))
                if t not in topics: topics.add(t); ts.append(t)
            if not ts: continue
            lines.append("source %s %s"%(n,",".join(ts))); nonsink.append(n)
        elif r<0.55:
            n=name(used); ps=random.sample(nonsink,min(len(nonsink),random.choice([1,1,1,2,3])))
            lines.append("processor %s %s"%(n,",".join(ps))); nonsink.append(n); procs.append(n)
        elif r<0.7:
            n=name(used); ps=random.sample(nonsink,min(len(nonsink),random.choice([1,1,2])))
            lines.append("sink %s out%d %s"%(n,random.randint(0,9),",".join(ps)))
        elif r<0.85 and procs:
            s="s"+str(random.randint(0,30))
            if s in stores: continue
            stores.append(s)
            ps=random.sample(procs,min(len(procs),random.choice([0,1,1,2])))
            lines.append("store %s %s"%(s,",".join(ps) if ps else "-"))
        elif r<0.92 and procs and stores:
            lines.append("connect %s %s"%(random.choice(procs),",".join(random.sample(stores,min(len(stores),random.randint(1,3)))) if random.random()<0.1 else ",".join(random.sample([x for x in stores if x[0]=="s"] or stores,min(len([x for x in stores if x[0]=="s"] or stores),random.randint(1,3))))))
        else:
            s="g"+str(random.randint(0,30))
            if s in stores: continue
            stores.append(s)
            t="gt"+str(random.randint(0,99))
            if t in topics: continue
            topics.add(t)
            lines.append("global %s %s %s %s"%(s,name(used),t,name(used)))
    open("rand/r%03d.spec"%i,"w").write("\n".join(lines)+"\n")
