#!/bin/bash
# measure.sh PORT PID THREADS [USER] [WORKLOAD]
# One 10 s sysbench run against PORT while reading the proxy PID's CPU and
# context switches from /proc: user and system CPU µs per query (utime and
# stime of /proc/PID/stat; they agree with the per-thread schedstat sums on
# this kernel to 0.1 µs/q), context switches per query (all threads,
# voluntary and involuntary).
PORT=$1; PID=$2; T=$3; U=${4:-root}; WL=${5:-oltp_point_select}
ut() { awk '{print $14" "$15}' /proc/$PID/stat; }
cs() { cat /proc/$PID/task/*/status | awk '/^voluntary_ctxt/{v+=$2} /^nonvoluntary_ctxt/{n+=$2} END{print v" "n}'; }
read u0 s0 < <(ut); read v0 n0 < <(cs)
out=$(sysbench $WL --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=$U --tables=8 --table-size=10000 \
  --threads=$T --time=10 --db-ps-mode=auto run 2>&1)
read u1 s1 < <(ut); read v1 n1 < <(cs)
q=$(echo "$out" | awk '/queries:/{print $2}')
qps=$(echo "$out" | awk '/queries:/{gsub("\\(","",$3); print $3}')
printf "port=%s threads=%s qps=%s user=%.1f sys=%.1f us/q voluntary=%.3f involuntary=%.3f /q\n" $PORT $T $qps \
  $(echo "($u1-$u0)*10000/$q" | bc -l) $(echo "($s1-$s0)*10000/$q" | bc -l) \
  $(echo "($v1-$v0)/$q" | bc -l) $(echo "($n1-$n0)/$q" | bc -l)
