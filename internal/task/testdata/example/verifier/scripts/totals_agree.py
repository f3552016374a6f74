"""The CSV's quantities sum to the ledger's "open orders" amount."""
from _verify_sdk import db, read_csv, result

rows = read_csv("reports/open-orders.csv")
total = sum(int(r["qty"]) for r in rows)
got = db("ledger").execute("SELECT amount FROM entries WHERE memo = 'open orders'").fetchall()
amounts = [r[0] for r in got]
result(amounts == [total], f"csv total {total}, ledger amounts {amounts}")
