#!/usr/bin/env python3
"""Writes per purchase: the statements (and which are writes) and the server
instructions that live purchases cost from POST to webhook delivered
(docs/benchmarks.md, "Writes per purchase").

    bench/instructions/writes.py DIR_WITH_BILLPAY sqlite|postgres N trace|callgrind

A release `billpay serve` with its workers (sandbox supplier, no latency) on a
fresh database; one account, one key whose webhook URL is a receiver here on
loopback; N airtime purchases sent one after another on one connection; the
run ends when the receiver has had N webhooks.

trace: SQLite's statements are logged by the store (`RUST_LOG` target
`billpay_store::sql`, each connection's `sqlite3_trace_v2`); PostgreSQL's by
the server (`log_statement = all` set on the scratch database only, read back
from its log), with the rows each table gained, changed or lost and the
commits (`pg_stat_user_tables`, `pg_stat_database`). Printed: each statement
with its count per purchase, whether it writes, where it ran.

callgrind: the server under `valgrind --tool=callgrind`, for N and 2N on fresh
databases; per purchase = (I(2N) - I(N)) / N (start-up cancels out).
"""
import collections, http.client, http.server, json, os, re, signal, socket
import subprocess, sys, tempfile, threading, time

MASTER_KEY = "6b1f0c7a9d2e4f3b8a5c6d7e8f90123456789abcdef0123456789abcdef01234"
PG = os.environ.get("BILLPAY_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
PG_LOG = "/var/log/postgresql/postgresql-15-main.log"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Receiver(http.server.BaseHTTPRequestHandler):
    count = 0
    lock = threading.Lock()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
        with Receiver.lock:
            Receiver.count += 1

    def log_message(self, *args):
        pass


def psql(sql, db="postgres"):
    url = PG.rsplit("/", 1)[0] + "/" + db
    out = subprocess.run(["psql", url, "-Atqc", sql], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def env():
    e = dict(os.environ)
    e.update({
        "BILLPAY_MASTER_KEY": MASTER_KEY,
        "BILLPAY_SANDBOX_LATENCY_MS": "0",
        "BILLPAY_RATE_LIMIT_PER_SECOND": "100000000",
        "BILLPAY_RATE_LIMIT_BURST": "100000000",
        "BILLPAY_WEBHOOK_ALLOW_PRIVATE": "true",
        "BILLPAY_LOG": "warn",
    })
    return e


def cli(binary, db, *args):
    out = subprocess.run([binary, "--database-url", db, *args, "--json"], env=env(),
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def run(binary, backend, n, mode, receiver_port):
    work = tempfile.mkdtemp()
    if backend == "sqlite":
        db = "sqlite://%s/b.db" % work
        name = None
    else:
        name = "billpay_writes_%d" % (os.getpid() * 1000 + int(time.time()) % 1000)
        psql("CREATE DATABASE %s" % name)
        db = PG.rsplit("/", 1)[0] + "/" + name
    account = cli(binary, db, "account", "create", "--name", "Writes", "--email", "writes@example.com")["account_id"]
    cli(binary, db, "wallet", "credit", "--account", account, "--amount", "10000000", "--reference", "writes")
    key = cli(binary, db, "key", "create", "--account", account)
    cli(binary, db, "key", "webhook", key["key_id"], "--url", "http://127.0.0.1:%d/hook" % receiver_port)
    if name:
        psql("ALTER DATABASE %s SET log_statement = 'all'" % name)
    port = free_port()
    e = env()
    cmd = [binary, "--database-url", db, "serve", "--listen", "127.0.0.1:%d" % port]
    if mode == "trace":
        if backend == "sqlite":
            e["BILLPAY_LOG"] = "warn,billpay_store::sql=trace"
            e["BILLPAY_LOG_FORMAT"] = "json"
    else:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s/cg.out" % work] + cmd
    log = open("%s/serve.log" % work, "w+")
    server = subprocess.Popen(cmd, env=e, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(1200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(2)  # the workers' first passes at start
    log.flush()
    start_line = sum(1 for _ in open("%s/serve.log" % work))
    pg_start = os.path.getsize(PG_LOG) if name else 0
    stats_before = table_stats(name) if name else None
    before = Receiver.count
    started = time.time()
    c = http.client.HTTPConnection("127.0.0.1", port)
    h = {"Authorization": "Bearer " + key["api_key"], "Content-Type": "application/json"}
    bad = 0
    for i in range(n):
        body = json.dumps({"provider_id": "mtn", "phone": "08031234567", "amount": 50,
                           "reference": "writes-%06d" % i})
        c.request("POST", "/v1/airtime/purchase", body=body, headers=h)
        r = c.getresponse()
        r.read()
        bad += r.status != 200
    while Receiver.count - before < n - bad and time.time() - started < 600:
        time.sleep(0.05)
    elapsed = time.time() - started
    # The last delivery's attempt is recorded after the receiver answers.
    time.sleep(0.5)
    end_line = sum(1 for _ in open("%s/serve.log" % work))
    pg_end = os.path.getsize(PG_LOG) if name else 0
    server.send_signal(signal.SIGINT)
    server.wait()
    result = {"n": n, "non_200": bad, "webhooks": Receiver.count - before, "seconds": round(elapsed, 2)}
    if mode == "trace":
        if backend == "sqlite":
            lines = open("%s/serve.log" % work).read().splitlines()[start_line:end_line]
            statements = sqlite_statements(lines)
        else:
            time.sleep(1.5)  # statistics are flushed within a second
            result["rows"] = diff_stats(stats_before, table_stats(name))
            with open(PG_LOG, errors="replace") as f:
                f.seek(pg_start)
                statements = pg_statements(f.read(pg_end - pg_start), name)
        result["statements"] = statements
    else:
        total = None
        for line in open("%s/cg.out" % work):
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
                break
        result["instructions"] = total
    if name:
        psql("DROP DATABASE %s WITH (FORCE)" % name)
    subprocess.run(["rm", "-rf", work])
    return result


def normal(sql):
    return re.sub(r"\s+", " ", sql).strip()


def sqlite_statements(lines):
    counted = collections.Counter()
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("target") != "billpay_store::sql":
            continue
        fields = entry["fields"]
        thread = fields.get("thread", "-")
        where = "writer" if "writer" in thread else "reader" if "reader" in thread else "request"
        counted[(where, normal(fields["sql"]))] += 1
    return counted


def pg_statements(text, name):
    counted = collections.Counter()
    entry = None
    prefix = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
    kept = re.compile(r"@%s LOG:  (?:statement|execute [^:]*): (.*)$" % re.escape(name))
    for line in text.splitlines():
        if prefix.match(line):
            if entry is not None:
                counted[("pg", normal(entry))] += 1
            m = kept.search(line)
            entry = m.group(1) if m else None
        elif entry is not None:
            entry += " " + line
    if entry is not None:
        counted[("pg", normal(entry))] += 1
    return counted


def table_stats(name):
    rows = psql("SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables "
                "UNION ALL SELECT '(commits)', xact_commit, xact_rollback, 0 FROM pg_stat_database "
                "WHERE datname = current_database()", name)
    return {r.split("|")[0]: [int(x) for x in r.split("|")[1:]] for r in rows.splitlines()}


def diff_stats(a, b):
    out = {}
    for table, after in b.items():
        d = [x - y for x, y in zip(after, a.get(table, [0, 0, 0]))]
        if any(d):
            out[table] = d
    return out


WRITE = re.compile(r"^(INSERT|UPDATE|DELETE|REPLACE|WITH .* (INSERT|UPDATE|DELETE))", re.I)


def kind(sql):
    s = sql.upper()
    if WRITE.match(sql) or s.startswith("SELECT BILLPAY_PLACE"):
        return "write"
    if s.startswith(("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK")):
        return "tx"
    return "read"


def main():
    binary, backend, n, mode = sys.argv[1] + "/billpay", sys.argv[2], int(sys.argv[3]), sys.argv[4]
    rport = free_port()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", rport), Receiver)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    if mode == "callgrind":
        small = run(binary, backend, n, mode, rport)
        large = run(binary, backend, 2 * n, mode, rport)
        per = (large["instructions"] - small["instructions"]) / n
        print(json.dumps({"small": small, "large": large, "per_purchase": round(per)}))
        return
    result = run(binary, backend, n, mode, rport)
    statements = result.pop("statements")
    print(json.dumps(result))
    totals = collections.Counter()
    for (where, sql), count in sorted(statements.items(), key=lambda kv: -kv[1]):
        k = kind(sql)
        totals[k] += count
        print("%8.3f  %-5s  %-7s  %s" % (count / n, k, where, sql[:150]))
    print("per purchase: " + ", ".join("%s %.2f" % (k, v / n) for k, v in sorted(totals.items())))


if __name__ == "__main__":
    main()
