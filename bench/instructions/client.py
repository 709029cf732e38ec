# bench/instructions/measure.sh: sends exactly N requests of one kind, in turn,
# on one keep-alive connection, and says how many were not 200.
# Sends exactly N requests of one kind, sequentially, on one keep-alive connection
# (purchase-workers: purchases, then waits for the workers to fulfil them).
import http.client, json, sys
host, port, key, kind, n, run = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
c = http.client.HTTPConnection(host, port)
h = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
bad = 0
for i in range(n):
    if kind == "balance":
        c.request("GET", "/v1/wallet/balance", headers=h)
    elif kind == "status":
        c.request("GET", "/v1/transaction/status?reference=purchase-w-%06d" % (i % 500), headers=h)
    else:
        body = json.dumps({"provider_id": "mtn", "phone": "08031234567", "amount": 50, "reference": "purchase-%s-%06d" % (run, i)})
        c.request("POST", "/v1/airtime/purchase", body=body, headers=h)
    r = c.getresponse(); r.read()
    if r.status != 200: bad += 1
if kind == "purchase-workers":
    # With the workers: wait until the last purchase is no longer processing
    # (they are claimed oldest first), so the run holds each one's fulfilment.
    import time
    last = "purchase-%s-%06d" % (run, n - 1)
    while True:
        c.request("GET", "/v1/transaction/status?reference=" + last, headers=h)
        r = c.getresponse(); status = json.loads(r.read())["data"]["status"]
        if status != "processing": break
        time.sleep(0.2)
print("sent", n, "non-200", bad)
