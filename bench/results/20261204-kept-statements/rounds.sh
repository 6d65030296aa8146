#!/bin/bash
# interleaved rounds: new obgate (23883), base obgate (13883), haproxy-rr (3309)
cd /work/main
PN=$(pgrep -f "obgate -N -p 23883"); PB=$(pgrep -f "obgate -N -p 13883"); PH=$(pgrep -f "haproxy -db -f .*haproxy-rr.cfg")
for r in 1 2 3; do for t in ${THREADS:-1 8}; do
  for tg in keep keep0 haproxy; do
    case $tg in keep) a=23883; u='root@test#sbtest'; p=$PN;; keep0) a=13883; u='root@test#sbtest'; p=$PB;; haproxy) a=3309; u=root@test; p=$PH;; esac
    echo "round=$r target=$tg $(bin/driverbench --addr 127.0.0.1:$a --user "$u" --threads $t --duration ${DUR:-8s} --pattern ${PAT:-args} --pid $p)"
  done; done; done
