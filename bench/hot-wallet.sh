#!/usr/bin/env bash
# bench/hot-wallet.sh BIN [SECONDS]: scripts/bench's hot-wallet row (16 keys, the workers on,
# wrk -t2 -c64) for any billpay binary, to compare two builds by alternating runs (one run's
# figures scatter). Prints purchases placed/s under load, how long the backlog took to drain
# after it, purchases fulfilled/s over both, and the server's CPU (utime + stime) per
# fulfilled purchase and its peak RSS. Needs wrk, sqlite3, curl and python3; EXTRA adds `serve` flags.
set -euo pipefail
bin=$1; secs=${2:-10}
work=$(mktemp -d); db=sqlite://$work/b.db
export BILLPAY_MASTER_KEY=6b1f0c7a9d2e4f3b8a5c6d7e8f90123456789abcdef0123456789abcdef01234
export BILLPAY_SANDBOX_LATENCY_MS=0 BILLPAY_RATE_LIMIT_PER_SECOND=100000000 BILLPAY_RATE_LIMIT_BURST=100000000 BILLPAY_LOG=error
port=$((20000 + RANDOM % 20000))
$bin serve --listen 127.0.0.1:$port --database-url $db ${EXTRA:-} > $work/serve.log 2>&1 &
pid=$!
for _ in $(seq 1 100); do curl -s 127.0.0.1:$port/health >/dev/null 2>&1 && break; sleep 0.1; done
acc=$($bin account create --name Bench --email b@example.com --json --database-url $db | python3 -c 'import json,sys; print(json.load(sys.stdin)["account_id"])')
$bin wallet credit --account $acc --amount 100000000 --reference f --json --database-url $db >/dev/null
keys=""
for i in $(seq 1 16); do k=$($bin key create --account $acc --json --database-url $db | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])'); keys="$keys,$k"; done
keys=${keys#,}
cpu0=$(awk '{print $14+$15}' /proc/$pid/stat)
start=$(date +%s.%N)
out=$(BENCH_KIND=purchase BENCH_PATH=/v1/airtime/purchase BENCH_KEYS=$keys BENCH_RUN=$RANDOM BENCH_DELAY_MS=0 wrk -t2 -c64 -d${secs}s --timeout 10s -s "$(dirname "$0")/wrk/billpay.lua" http://127.0.0.1:$port/v1/airtime/purchase)
loaded=$(date +%s.%N)
while [[ $(sqlite3 $work/b.db "SELECT COUNT(*) FROM transactions WHERE status = 'processing'" 2>/dev/null || echo 1) != 0 ]]; do sleep 0.05; done
drained=$(date +%s.%N)
cpu1=$(awk '{print $14+$15}' /proc/$pid/stat)
rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
total=$(sqlite3 $work/b.db "SELECT COUNT(*) FROM transactions WHERE status = 'successful'")
kill $pid; wait $pid 2>/dev/null || true
echo "$out" | grep BENCH_RESULT | sed 's/BENCH_RESULT //' | python3 -c "
import json,sys; d=json.load(sys.stdin)
load=$loaded-$start; drain=$drained-$loaded
errs=sum(d[k] for k in ('connect_errors','read_errors','write_errors','status_errors','timeouts'))
print('placed/s %6.0f  drain %4.1f s  fulfilled/s %6.0f  cpu_us/purchase %5.1f  successful %d  errors %d  p99 %d us  peak RSS %d MB' % (d['requests']/load, drain, $total/(load+drain), ($cpu1-$cpu0)*10000/$total, $total, errs, d['p99_us'], $rss / 1024))"
rm -rf $work
