"""An independent reference of iSLIP under uniform Bernoulli traffic, written from the paper
(McKeown 1999) without looking at hwsim's code, to check hwsim's mean delays.

Same definitions as hwsim's voq_switch: a cell born at slot t (its input got it at t) can cross
the crossbar from slot t + 1; delay = departure slot - birth slot; cells born before the warm-up
(T / 11) are not measured.

    python3 docs/islip_ref.py LOAD ITERATIONS SLOTS     e.g. python3 docs/islip_ref.py 0.9 1 30000
"""
import random, collections, sys
N=16; load=float(sys.argv[1]); iters=int(sys.argv[2]); T=int(sys.argv[3]); W=T//11
random.seed(1)
voq=[[collections.deque() for _ in range(N)] for _ in range(N)]
g=[0]*N; a=[0]*N
dsum=0; dn=0
for t in range(T):
    # arrivals born at t, eligible at t+1: so allocate first, then arrive
    fin=set(range(N)); fout=set(range(N))
    match={}
    for it in range(iters):
        reqs={o:[i for i in fin if voq[i][o]] for o in fout}
        grants=collections.defaultdict(list)
        for o,ins in reqs.items():
            if not ins: continue
            i=min(ins,key=lambda i:(i-g[o])%N); grants[i].append(o)
        if not grants: break
        for i,outs in grants.items():
            o=min(outs,key=lambda o:(o-a[i])%N)
            match[i]=o; fin.discard(i); fout.discard(o)
            if it==0: g[o]=(i+1)%N; a[i]=(o+1)%N
    for i,o in match.items():
        b=voq[i][o].popleft()
        if b>=W: dsum+=t-b; dn+=1
    for i in range(N):
        if random.random()<load: voq[i][random.randrange(N)].append(t)
print(load, iters, dsum/dn)
