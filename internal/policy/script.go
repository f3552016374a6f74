package policy

import "fmt"

// shortlistPy joins the BOM (markdown), the inventory (CSV) and the spec
// sheet (PDF, through pdftotext) into the ranked shortlist CSV. It is the
// "script whose result informs a later decision" of the task family.
const shortlistPy = `
import csv, re, subprocess, sys
bom, inv, specs, out = sys.argv[1:5]
text = open(bom).read()
units = int(re.search(r'(\d+)U rack', text).group(1))
outlets = int(re.search(r'Outlets: at least (\d+)', text).group(1))
joules = int(re.search(r'at least (\d+) joules', text).group(1))
stocked = {r['sku'] for r in csv.DictReader(open(inv))}
toks = subprocess.run(['pdftotext', '-layout', specs, '-'], capture_output=True, text=True, check=True).stdout.split()
sku = re.compile(r'^[A-Z]{1,5}\d*-\d{3,5}$')
num = re.compile(r'^\d+$')
price = re.compile(r'^\d+\.\d{2}$')
rows = []
for i, t in enumerate(toks):
    if not sku.match(t):
        continue
    for k in range(i + 1, min(i + 40, len(toks) - 3)):
        a, b, c, d = toks[k:k + 4]
        if num.match(a) and num.match(b) and num.match(c) and price.match(d):
            rows.append((t, int(a), int(b), int(c), float(d)))
            break
seen = set()
keep = []
for s, j, o, u, p in rows:
    if s in seen or s in stocked:
        continue
    seen.add(s)
    if u == units and o >= outlets and j >= joules:
        keep.append((s, j, o, p))
keep.sort(key=lambda r: (-r[1], r[3], r[0]))
with open(out, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['rank', 'sku', 'joules', 'outlets', 'price_usd'])
    for n, (s, j, o, p) in enumerate(keep, 1):
        w.writerow([n, s, j, o, '%.2f' % p])
print(open(out).read(), end='')
`

func shortlistScript(p *Plan) string {
	return fmt.Sprintf("mkdir -p %s && cat > /tmp/shortlist.py <<'PY'\n%sPY\npython3 /tmp/shortlist.py %s %s %s %s",
		shellDir(p.Shortlist), shortlistPy, p.BOM, p.Inventory, p.Specs, p.Shortlist)
}

// ShortlistCommand is the shell command that joins the BOM, the inventory
// and the spec sheet into the ranked shortlist at out (home-relative paths).
func ShortlistCommand(bom, inventory, specs, out string) string {
	return shortlistScript(&Plan{BOM: bom, Inventory: inventory, Specs: specs, Shortlist: out})
}
