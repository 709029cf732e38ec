# bench/instructions/measure.sh: sends exactly N requests of one kind, in turn,
# on one keep-alive connection, and says how many were not 200.
# Sends exactly N requests of one kind, sequentially, on one keep-alive connection.
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
print("sent", n, "non-200", bad)
