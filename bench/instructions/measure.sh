#!/usr/bin/env bash
# Server instructions for N requests of one kind (callgrind counts instructions,
# not seconds: repeatable on a busy machine). Per request = (I(2N) - I(N)) / N.
#   bench/instructions/measure.sh DIR_WITH_BILLPAY balance|purchase|purchase-workers|status N
# A warm-up run (outside valgrind) funds the --demo account and places 500
# purchases for the status lookups; the measured server runs --no-worker,
# except for purchase-workers: the workers fulfil each purchase (sandbox
# supplier, no latency) and the run ends when the last one is done.
set -euo pipefail
bin=$1/billpay; kind=$2; n=$3
work=$(mktemp -d)
db=sqlite://$work/b.db
port=$((20000 + RANDOM % 20000))
# warm DB outside valgrind: demo account with money and 500 purchases for status lookups
$bin --database-url $db serve --demo --no-worker --listen 127.0.0.1:$port --sandbox-latency-ms 0 \
  --rate-limit-per-second 1000000 --rate-limit-burst 1000000 > $work/warm.log 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q 'listening on' $work/warm.log && break; sleep 0.1; done
key=$(grep -o 'bp_live_[0-9a-f]*' $work/warm.log | head -1)
account=$(grep -o 'Demo account [0-9a-f-]*' $work/warm.log | cut -d' ' -f3)
$bin --database-url $db wallet credit --account $account --amount 100000000 --reference perf >/dev/null
# (none for purchase-workers: the measured workers would fulfil them too)
warm=500; [[ $kind == purchase-workers ]] && warm=0
python3 "$(dirname "$0")/client.py" 127.0.0.1 $port $key warm $warm w >/dev/null
kill $pid; wait $pid 2>/dev/null || true
workers=--no-worker; [[ $kind == purchase-workers ]] && workers=
valgrind --tool=callgrind --callgrind-out-file=$work/cg.out $bin --database-url $db serve $workers \
  --listen 127.0.0.1:$port --sandbox-latency-ms 0 --rate-limit-per-second 1000000 --rate-limit-burst 1000000 > $work/serve.log 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q 'listening on' $work/serve.log && break; sleep 0.2; done
python3 "$(dirname "$0")/client.py" 127.0.0.1 $port $key $kind $n r$RANDOM >&2
kill -INT $pid; wait $pid 2>/dev/null || true
total=$(grep -E '^(summary|totals):' $work/cg.out | head -1 | awk '{print $2}')
echo "$kind $n $total"
cp $work/cg.out "${CALLGRIND_KEEP:-$work}/cg-$(basename $1)-$kind-$n.out" 2>/dev/null || true
rm -rf $work
