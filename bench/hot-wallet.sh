#!/usr/bin/env bash
# bench/hot-wallet.sh BIN [SECONDS]: scripts/bench's hot-wallet row (16 keys, the workers on,
# wrk -t2 -c64) for any billpay binary, to compare two builds by alternating runs (one run's
# figures scatter). Prints purchases placed/s under load and their p99, how long the backlog
# took to drain after it, purchases fulfilled/s over both, and the server's CPU (utime + stime)
# per fulfilled purchase and its peak RSS. Needs wrk, sqlite3, curl and python3; EXTRA adds
# `serve` flags.
#   WALLETS=64           the 64-wallet row instead (64 accounts of one key each)
#   POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres
#                        on a scratch database of that PostgreSQL server (dropped after), also
#                        printing its backends' CPU per fulfilled purchase and the mean size of
#                        the group-commit batches of each queue (`billpay_db_batch_size`); needs psql
set -euo pipefail
bin=$1; secs=${2:-10}; wallets=${WALLETS:-1}
work=$(mktemp -d)
if [[ -n ${POSTGRES_URL:-} ]]; then
  name=hot_wallet_$RANDOM$RANDOM
  psql -q "$POSTGRES_URL" -c "CREATE DATABASE $name" >/dev/null
  db=${POSTGRES_URL%/*}/$name
  count() { psql -Atq "$db" -c "SELECT COUNT(*) FROM transactions WHERE status = '$1'"; }
  dbcpu() { for p in $(pgrep -f "postgres: .* $name "); do awk '{print $14+$15}' /proc/$p/stat 2>/dev/null; done | awk '{s+=$1} END {print s+0}'; }
else
  db=sqlite://$work/b.db
  count() { sqlite3 "$work/b.db" "SELECT COUNT(*) FROM transactions WHERE status = '$1'" 2>/dev/null || echo 1; }
  dbcpu() { echo 0; }
fi
export BILLPAY_MASTER_KEY=6b1f0c7a9d2e4f3b8a5c6d7e8f90123456789abcdef0123456789abcdef01234
export BILLPAY_SANDBOX_LATENCY_MS=0 BILLPAY_RATE_LIMIT_PER_SECOND=100000000 BILLPAY_RATE_LIMIT_BURST=100000000 BILLPAY_LOG=error
port=$((20000 + RANDOM % 20000))
$bin serve --listen 127.0.0.1:$port --database-url $db ${EXTRA:-} > $work/serve.log 2>&1 &
pid=$!
for _ in $(seq 1 200); do curl -s 127.0.0.1:$port/health >/dev/null 2>&1 && break; sleep 0.1; done
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
keys=""
for w in $(seq 1 "$wallets"); do
  acc=$($bin account create --name Bench$w --email b$w@example.com --json --database-url $db | field account_id)
  $bin wallet credit --account $acc --amount 100000000 --reference f --json --database-url $db >/dev/null
  for _ in $(seq 1 $(( wallets == 1 ? 16 : 1 ))); do keys="$keys,$($bin key create --account $acc --json --database-url $db | field api_key)"; done
done
keys=${keys#,}
cpu0=$(awk '{print $14+$15}' /proc/$pid/stat); db0=$(dbcpu)
start=$(date +%s.%N)
out=$(BENCH_KIND=purchase BENCH_PATH=/v1/airtime/purchase BENCH_KEYS=$keys BENCH_RUN=$RANDOM BENCH_DELAY_MS=0 wrk -t2 -c64 -d${secs}s --timeout 10s -s "$(dirname "$0")/wrk/billpay.lua" http://127.0.0.1:$port/v1/airtime/purchase)
loaded=$(date +%s.%N)
while [[ $(count processing) != 0 ]]; do sleep 0.05; done
drained=$(date +%s.%N)
cpu1=$(awk '{print $14+$15}' /proc/$pid/stat); db1=$(dbcpu)
rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
total=$(count successful)
curl -s 127.0.0.1:$port/metrics | grep -E '^billpay_db_batch_size_(sum|count)' > $work/batches || true
kill $pid; wait $pid 2>/dev/null || true
if [[ -n ${POSTGRES_URL:-} ]]; then sleep 0.5; psql -q "$POSTGRES_URL" -c "DROP DATABASE $name WITH (FORCE)" >/dev/null; fi
echo "$out" | grep BENCH_RESULT | sed 's/BENCH_RESULT //' | python3 -c "
import json,re,sys; d=json.load(sys.stdin)
load=$loaded-$start; drain=$drained-$loaded
errs=sum(d[k] for k in ('connect_errors','read_errors','write_errors','status_errors','timeouts'))
line='placed/s %6.0f  p99 %d ms  drain %4.1f s  fulfilled/s %6.0f  cpu_us/purchase %5.1f  successful %d  errors %d  peak RSS %d MB' % (d['requests']/load, d['p99_us']/1000, drain, $total/(load+drain), ($cpu1-$cpu0)*10000/$total, $total, errs, $rss / 1024)
if '${POSTGRES_URL:-}':
    sizes={}
    for l in open('$work/batches'):
        key,value=l.rsplit(' ',1); queue=re.search(r'queue=\"(\w+)\"',key).group(1)
        sizes.setdefault(queue,{})['sum' if '_sum' in key else 'count']=float(value)
    line+='  db_cpu_us/purchase %5.1f  batches %s' % (($db1-$db0)*10000/$total, ', '.join('%s %.1f' % (q,s['sum']/s['count']) for q,s in sorted(sizes.items()) if s.get('count')))
print(line)"
rm -rf $work
