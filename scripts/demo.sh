#!/usr/bin/env bash
# `make demo`: crypto costs, then a protect/verify round on an R-GOOSE capture that libiec61850 (the
# reference stack) published, libiec61850's own receiver accepting what gander protected, and
# finally the main job: `gander run` (the RSE paper's matrix, quick) ending with the report path.
set -euo pipefail
cd "$(dirname "$0")/.."

GANDER=${GANDER:-target/release/gander}
PY=${PY:-.venv/bin/python}
OUT=${OUT:-out/demo}
rm -rf "$OUT"
mkdir -p "$OUT"

step() { printf '\n== %s\n' "$*"; }

step "gander bench crypto --quick"
"$GANDER" bench crypto --quick

step "libiec61850 1.6.1 publishes 12 unsecured R-GOOSE messages -> $OUT/none.pcap"
"$PY" interop/rgoose_publish.py --mode none --count 12 --out "$OUT"
KEYS="$OUT/none.keys.toml" # every harness key; id 1 = AES-128-GCM, key "0123456789ABCDEF"

step "gander frame protect (AES-128-GCM, key id 1, profile libiec61850)"
"$GANDER" frame protect --keys "$KEYS" --key-id 1 --profile libiec61850 "$OUT/none.pcap" "$OUT/protected.pcap"

step "gander frame verify"
"$GANDER" frame verify --keys "$KEYS" --profile libiec61850 "$OUT/protected.pcap"

step "libiec61850's R-GOOSE receiver on gander's output"
"$PY" interop/rgoose_receive.py --keys "$KEYS" "$OUT/protected.pcap" >"$OUT/libiec61850-receiver.json"
"$PY" - "$OUT/libiec61850-receiver.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"libiec61850 accepted {r['accepted']} of {r['sent']} frames")
for f in r["frames"][:4]:
    print(f"  frame {f['index']}: accepted={f['accepted']} stNum={f.get('st_num')} sqNum={f.get('sq_num')} values={f.get('values')}")
sys.exit(0 if r["accepted"] == r["sent"] else 1)
PY

step "gander run: the RSE paper's matrix (rse2019 --quick) on loopback"
"$GANDER" run --out "$OUT/run" | tee "$OUT/run.log"
echo
echo "demo: captures and results in $OUT/"
grep '^report:' "$OUT/run.log"
