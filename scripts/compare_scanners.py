#!/usr/bin/env python3
"""Compares `gander tls survey` with the scanners security engineers use, testssl.sh and sslyze,
on one local matrix of TLS servers (openssl s_server, gnutls-serv, gander's MMS server), each
configured to show one property. Prints, per server, every fact the three report (versions,
accepted suites per version, groups, Heartbleed, CCS injection, ROBOT, compression,
TLS_FALLBACK_SCSV, extended master secret, 0-RTT, OCSP stapling, renegotiation, certificate
facts) and where they disagree; `--json FILE` writes the normalised facts.

Not part of `make test`: it needs the two scanners. On Debian 12:

    apt-get install -y testssl.sh openssl gnutls-bin          # testssl 3.0.8
    python3 -m venv /tmp/sslyze && /tmp/sslyze/bin/pip install sslyze
    cargo build --release -p gander-cli
    SSLYZE=/tmp/sslyze/bin/sslyze scripts/compare_scanners.py [--only NAME[,NAME]] [--jobs 4] \
        [--json out/compare.json] [--keep out/compare/]

Runs as root in a network namespace of its own (`unshare -n`, loopback only), like
scripts/bench_tls_survey.sh. A fact a tool does not report is `-`; a disagreement is marked
`<>` with the tools that differ. docs/tls-survey.md ("Compared with testssl.sh and sslyze")
says which disagreements were checked by hand with `openssl s_client`, and who was right.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GANDER = os.environ.get("GANDER", str(ROOT / "target/release/gander"))
SSLYZE = os.environ.get("SSLYZE", "sslyze")
TESTSSL = os.environ.get("TESTSSL", "testssl")

# Every sslyze check that maps to a fact here (0-RTT and resumption are not in its default set).
SSLYZE_COMMANDS = ["--certinfo", "--sslv2", "--sslv3", "--tlsv1", "--tlsv1_1", "--tlsv1_2",
                   "--tlsv1_3", "--compression", "--early_data", "--openssl_ccs", "--fallback",
                   "--heartbleed", "--robot", "--reneg", "--elliptic_curves", "--ems", "--resum"]

VERSIONS = ["SSLv2", "SSLv3", "1.0", "1.1", "1.2", "1.3"]


def matrix(w: Path):
    """name -> (port, argv): the bench's matrix (scripts/bench_tls_survey.sh) plus 0-RTT."""
    r, r1, e = w / "pki/rsa2048", w / "pki/rsa1024", w / "pki/p256"
    s = ["openssl", "s_server", "-quiet", "-CAfile", f"{r}/ca.pem"]
    g = ["gnutls-serv", "--quiet", "--x509cafile", f"{r}/ca.pem"]

    def ossl(port, cert, key, *extra):
        return (port, s + ["-accept", f"127.0.0.1:{port}", "-cert", str(cert), "-key", str(key), *extra])

    def gnu(port, prio, *extra):
        return (port, g + ["--port", str(port), "--x509certfile", f"{r}/server.pem",
                           "--x509keyfile", f"{r}/server.key", "--priority", prio, *extra])

    rs, rk = r / "server.pem", r / "server.key"
    return {
        "tls12-3-suites": ossl(4401, rs, rk, "-tls1_2", "-cipher",
                               "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:AES128-SHA256"),
        "tls13-p384-ffdhe2048": ossl(4402, rs, rk, "-tls1_3", "-groups", "P-384:ffdhe2048"),
        "tls10-12-seclevel0": ossl(4403, rs, rk, "-min_protocol", "TLSv1", "-max_protocol", "TLSv1.2",
                                   "-cipher", "ALL:@SECLEVEL=0"),
        "3des": gnu(4404, "NORMAL:-VERS-TLS1.3:+3DES-CBC"),
        "client-cert-required": ossl(4405, rs, rk, "-Verify", "1", "-verify_return_error"),
        "client-cert-optional": ossl(4406, rs, rk, "-verify", "1", "-verify_return_error"),
        "no-tickets": ossl(4407, rs, rk, "-no_ticket"),
        "rsa-1024": ossl(4408, r1 / "server.pem", r1 / "server.key", "-cipher", "DEFAULT:@SECLEVEL=0"),
        "ecdsa-p256": ossl(4409, e / "server.pem", e / "server.key"),
        "expired": ossl(4410, r / "expired.pem", r / "client.key"),
        "untrusted-ca": ossl(4411, r / "other.pem", r / "client.key"),
        "no-rfc5746": gnu(4412, "NORMAL:-VERS-TLS1.3:%DISABLE_SAFE_RENEGOTIATION"),
        "client-renegotiation": ossl(4413, rs, rk, "-tls1_2", "-client_renegotiation"),
        "gnutls-required": gnu(4414, "NORMAL", "-r", "--verify-client-cert"),
        "tls13-early-data": ossl(4415, rs, rk, "-tls1_3", "-early_data"),
        "gander-mms": (3782, [GANDER, "mms", "server", "--config", str(w / "mms.toml")]),
    }


# ---------------------------------------------------------------- normalisation

CURVE_NAMES = {"prime256v1": "secp256r1", "x25519": "x25519", "x448": "x448",
               "secp192r1": "secp192r1", "prime192v1": "secp192r1"}


def curve(n: str) -> str:
    n = n.strip().lower()
    return CURVE_NAMES.get(n, n)


def sig_hash(s) -> str:
    if not s:
        return "-"
    m = re.search(r"(sha-?(1|224|256|384|512)|md5)", str(s).lower())
    return m.group(1).replace("-", "") if m else str(s).lower()


def yes_no(v):
    return "-" if v is None else ("yes" if v else "no")


# ---------------------------------------------------------------- gander

def gander_facts(j: dict) -> dict:
    f = {}
    scan = j.get("scan") or {}
    for v in scan.get("versions", []):
        f[f"version {v['version']}"] = yes_no(v["accepted"])
        if v["accepted"]:
            f[f"suites {v['version']}"] = sorted(s["name"] for s in v["suites"])
            if v["version"] in ("1.2", "1.3") and v.get("groups"):
                f[f"groups {v['version']}"] = sorted(curve(g["name"]) for g in v["groups"])
    order = [v.get("server_order") for v in scan.get("versions", [])
             if v["accepted"] and v["version"] in ("1.0", "1.1", "1.2") and v.get("server_order") is not None]
    if order:
        f["server cipher order"] = yes_no(order[-1])
    if "sslv2" in scan:
        f["version SSLv2"] = yes_no(scan["sslv2"]["accepted"])
    weak = {w["id"]: w for w in scan.get("weaknesses", [])}

    def state(i, vuln="yes", ok="no"):
        w = weak.get(i)
        if not w:
            return "-"
        return {"vulnerable": vuln, "not-vulnerable": ok}.get(w["state"], "-")

    f["heartbleed"] = state("heartbleed")
    f["ccs-injection"] = state("ccs-injection")
    f["compression"] = state("compression")
    f["fallback-scsv"] = state("fallback-scsv", "no", "yes")
    f["extended-master-secret"] = state("extended-master-secret", "no", "yes")
    f["ocsp-stapling"] = state("ocsp-stapling", "no", "yes")
    rb = scan.get("robot") or {}
    f["robot"] = {"vulnerable": "vulnerable", "weak-oracle": "weak-oracle",
                  "not-vulnerable": "not-vulnerable", "not-applicable": "not-applicable"}.get(
        rb.get("verdict"), "-")
    ed = scan.get("early_data") or {}
    f["0-rtt"] = {"accepted": "yes", "advertised-rejected": "no", "not-advertised": "no",
                  "no-ticket": "no", "not-applicable": "no"}.get(ed.get("verdict"), "-")
    ren = j.get("renegotiation") or {}
    f["secure-renegotiation"] = yes_no(ren.get("secure_renegotiation"))
    ci = (ren.get("client_initiated") or {}).get("ok")
    f["client-renegotiation"] = yes_no(ci)
    res = j.get("resumption") or {}
    f["resumption 1.2 session id"] = yes_no((res.get("tls12_session_id") or {}).get("ok"))
    f["resumption 1.2 ticket"] = yes_no((res.get("tls12_ticket") or {}).get("ok"))
    chain = j.get("chain") or []
    if chain:
        c = chain[0]
        f["cert key"] = f"{c.get('key_type', '-')} {c.get('key_bits', '-')}".upper().replace("ECDSA", "EC")
        f["cert signature"] = sig_hash(c.get("signature_algorithm"))
        f["cert not after"] = (c.get("not_after") or "-")[:10]
    return f


# ---------------------------------------------------------------- sslyze

def sslyze_facts(j: dict) -> dict:
    f = {}
    res = (j.get("server_scan_results") or [{}])[0]
    sr = res.get("scan_result") or {}

    def get(k):
        a = sr.get(k) or {}
        return a.get("result") if a.get("status") == "COMPLETED" else None

    names = {"ssl_2_0_cipher_suites": "SSLv2", "ssl_3_0_cipher_suites": "SSLv3",
             "tls_1_0_cipher_suites": "1.0", "tls_1_1_cipher_suites": "1.1",
             "tls_1_2_cipher_suites": "1.2", "tls_1_3_cipher_suites": "1.3"}
    for k, v in names.items():
        r = get(k)
        if r is None:
            continue
        acc = sorted(c["cipher_suite"]["name"] for c in r.get("accepted_cipher_suites", []))
        f[f"version {v}"] = yes_no(bool(acc))
        if acc and v != "SSLv2":
            f[f"suites {v}"] = acc
    ec = get("elliptic_curves")
    if ec and ec.get("supported_curves"):
        # sslyze asks with the newest version; it does not tell 1.2 from 1.3 groups.
        f["groups any"] = sorted(curve(c["name"]) for c in ec["supported_curves"])
    r = get("heartbleed")
    f["heartbleed"] = yes_no(r and r.get("is_vulnerable_to_heartbleed"))
    r = get("openssl_ccs_injection")
    f["ccs-injection"] = yes_no(r and r.get("is_vulnerable_to_ccs_injection"))
    r = get("tls_compression")
    f["compression"] = yes_no(r and r.get("supports_compression"))
    r = get("tls_fallback_scsv")
    f["fallback-scsv"] = yes_no(r and r.get("supports_fallback_scsv"))
    r = get("tls_extended_master_secret")
    f["extended-master-secret"] = yes_no(r.get("supports_ems_extension")) if r else "-"
    r = get("tls_1_3_early_data")
    f["0-rtt"] = yes_no(r.get("supports_early_data")) if r else "-"
    r = get("robot")
    if r:
        f["robot"] = {"NOT_VULNERABLE_NO_ORACLE": "not-vulnerable",
                      "NOT_VULNERABLE_RSA_NOT_SUPPORTED": "not-applicable",
                      "VULNERABLE_WEAK_ORACLE": "weak-oracle",
                      "VULNERABLE_STRONG_ORACLE": "vulnerable"}.get(r.get("robot_result"), "-")
    r = get("session_renegotiation")
    if r:
        f["secure-renegotiation"] = yes_no(r.get("supports_secure_renegotiation"))
        f["client-renegotiation"] = yes_no(r.get("is_vulnerable_to_client_renegotiation_dos"))
    r = get("session_resumption")
    if r:
        sid = r.get("session_id_resumption_result")
        f["resumption 1.2 session id"] = {"FULLY_SUPPORTED": "yes", "PARTIALLY_SUPPORTED": "yes",
                                          "NOT_SUPPORTED": "no"}.get(sid, "-")
        t = r.get("tls_ticket_resumption_result")
        f["resumption 1.2 ticket"] = ("yes" if t == "SUCCEEDED" else
                                      "no" if t and t.startswith("FAILED_TICKET") else "-")
    r = get("certificate_info")
    if r and r.get("certificate_deployments"):
        d = r["certificate_deployments"][0]
        f["ocsp-stapling"] = yes_no(d.get("ocsp_response") is not None)
        chain = d.get("received_certificate_chain") or []
        if chain:
            c = chain[0]
            pk = c.get("public_key") or {}
            alg = pk.get("algorithm", "-").lstrip("_")
            alg = {"RSAPublicKey": "RSA", "EllipticCurvePublicKey": "EC",
                   "ECPublicKey": "EC"}.get(alg, alg)
            f["cert key"] = f"{alg} {pk.get('key_size', '-')}".upper()
            f["cert signature"] = sig_hash((c.get("signature_hash_algorithm") or {}).get("name"))
            f["cert not after"] = (c.get("not_valid_after") or "-")[:10]
    return f


# ---------------------------------------------------------------- testssl.sh

def testssl_facts(rows: list) -> dict:
    f = {}
    by = {}
    for r in rows:
        x = r.get("finding", "")
        # testssl.sh says so when it could not test (e.g. "client x509-based authentication
        # prevents this from being tested"): no fact.
        if re.search(r"prevents this from being tested|not tested|test failed", x, re.I):
            continue
        by.setdefault(r.get("id", ""), []).append(x)

    def one(i):
        return (by.get(i) or [None])[0]

    for i, v in [("SSLv2", "SSLv2"), ("SSLv3", "SSLv3"), ("TLS1", "1.0"), ("TLS1_1", "1.1"),
                 ("TLS1_2", "1.2"), ("TLS1_3", "1.3")]:
        x = one(i)
        if x is not None:
            f[f"version {v}"] = "no" if "not offered" in x.lower() else "yes"
    vmap = {"ssl3": "SSLv3", "tls1": "1.0", "tls1_1": "1.1", "tls1_2": "1.2", "tls1_3": "1.3"}
    suites = {}
    for i, fs in by.items():
        m = re.match(r"cipher-(ssl3|tls1|tls1_1|tls1_2|tls1_3)_x[0-9a-f]+$", i)
        if m:
            for x in fs:
                suites.setdefault(vmap[m.group(1)], set()).add(x.split()[-1])
    for v, s in suites.items():
        f[f"suites {v}"] = sorted(s)
    curves = one("FS_ECDHE_curves") or one("PFS_ECDHE_curves")
    groups = set(curve(c) for c in curves.split()) if curves else set()
    dh = one("DH_groups")
    if dh:
        groups |= set(curve(c) for c in re.findall(r"ffdhe\d+", dh))
    if groups:
        f["groups any"] = sorted(groups)

    def vul(i):
        x = one(i)
        if x is None:
            return "-"
        x = x.lower()
        if "not vulnerable" in x or x.startswith("no ") or "not offered" in x:
            return "no"
        if "vulnerable" in x or "potentially" in x:
            return "yes"
        return "-"

    f["heartbleed"] = vul("heartbleed")
    f["ccs-injection"] = vul("CCS")
    f["compression"] = vul("CRIME_TLS")
    x = one("fallback_SCSV")
    if x:
        x = x.lower()
        f["fallback-scsv"] = ("-" if "not needed" in x or "no protocol below" in x
                              else "yes" if "supported" in x and "not supported" not in x
                              else "no" if "not supported" in x or "downgrade attack" in x else "-")
    x = one("ROBOT")
    if x:
        x = x.lower()
        f["robot"] = ("not-applicable" if "does not support" in x or "no rsa" in x
                      else "not-vulnerable" if "not vulnerable" in x
                      else "weak-oracle" if "weak" in x
                      else "vulnerable" if "vulnerable" in x else "-")
    x = one("TLS_extensions")
    if x is not None:
        f["extended-master-secret"] = "yes" if "extended master secret" in x.lower() else "no"
    x = one("OCSP_stapling")
    if x:
        f["ocsp-stapling"] = "no" if "not offered" in x.lower() else "yes"
    x = one("secure_renego")
    if x:
        f["secure-renegotiation"] = "yes" if "supported" in x.lower() and "not" not in x.lower() else "no"
    x = one("secure_client_renego")
    if x:
        f["client-renegotiation"] = "no" if "not vulnerable" in x.lower() else "yes"
    x = one("cipher_order")
    if x:
        f["server cipher order"] = "no" if x.lower().startswith("not") else "yes" if "server" in x.lower() else "-"
    x = one("sessionresumption_ID")
    if x:
        f["resumption 1.2 session id"] = "no" if "not supported" in x.lower() else (
            "yes" if "supported" in x.lower() else "-")
    x = one("sessionresumption_ticket")
    if x:
        f["resumption 1.2 ticket"] = "no" if "not supported" in x.lower() else (
            "yes" if "supported" in x.lower() else "-")
    x = one("cert_keySize")
    if x:
        m = re.match(r"(\w+)\s+(\d+)", x)
        if m:
            f["cert key"] = f"{m.group(1).replace('ECDSA', 'EC')} {m.group(2)}".upper()
    x = one("cert_signatureAlgorithm")
    if x:
        f["cert signature"] = sig_hash(x)
    x = one("cert_notAfter")
    if x:
        f["cert not after"] = x[:10]
    return f


# ---------------------------------------------------------------- running

def wait_port(port, t=10.0):
    end = time.time() + t
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def run(cmd, timeout, **kw):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
        return p, time.time() - t0
    except subprocess.TimeoutExpired:
        return None, time.time() - t0


def show(v):
    if isinstance(v, list):
        return ", ".join(v) if v else "(none)"
    return str(v)


def compare(name, facts, times, out):
    tools = ["gander", "sslyze", "testssl"]
    keys = []
    for t in tools:
        for k in facts[t]:
            if k not in keys:
                keys.append(k)
    order = {k: i for i, k in enumerate(
        [f"version {v}" for v in VERSIONS] + [f"suites {v}" for v in VERSIONS])}
    keys.sort(key=lambda k: (order.get(k, 100), k))
    # gander's per-version groups against the others' "any version" list.
    g_any = sorted(set(sum((facts["gander"].get(f"groups {v}", []) for v in ("1.2", "1.3")), [])))
    if g_any:
        facts["gander"]["groups any"] = g_any
    print(f"\n== {name}   (gander {times['gander']:.1f} s, sslyze {times['sslyze']:.1f} s, "
          f"testssl {times['testssl']:.1f} s)")
    disagreements = []
    for k in keys:
        vals = {t: facts[t].get(k, "-") for t in tools}
        known = {t: v for t, v in vals.items() if v != "-"}
        differ = len({json.dumps(v) for v in known.values()}) > 1
        mark = "<>" if differ else "  "
        if isinstance(vals["gander"], list) or any(isinstance(v, list) for v in vals.values()):
            print(f"{mark} {k}")
            for t in tools:
                print(f"     {t:<8} {show(vals[t])}")
            if differ:
                sets = {t: set(v) for t, v in known.items() if isinstance(v, list)}
                allv = set().union(*sets.values()) if sets else set()
                for s in sorted(allv):
                    has = [t for t in sets if s in sets[t]]
                    if len(has) != len(sets):
                        print(f"       {s}: only {', '.join(has)}")
        else:
            print(f"{mark} {k:<26} " + "  ".join(f"{t}={vals[t]}" for t in tools))
        if differ:
            disagreements.append(k)
    out[name] = {"facts": facts, "disagreements": disagreements, "times_s": times}
    print(f"   disagreements: {', '.join(disagreements) if disagreements else 'none'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated server names")
    ap.add_argument("--json", help="write the normalised facts here")
    ap.add_argument("--keep", help="keep every tool's raw output in this directory")
    ap.add_argument("--jobs", type=int, default=1,
                    help="servers compared at once (testssl.sh takes minutes per server)")
    a = ap.parse_args()
    if not os.environ.get("GANDER_COMPARE_NETNS"):
        os.execvp("unshare", ["unshare", "-n", "env", "GANDER_COMPARE_NETNS=1",
                              sys.executable, *sys.argv])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for tool in ["openssl", "gnutls-serv", TESTSSL, SSLYZE]:
        if not shutil.which(tool) and not Path(tool).exists():
            sys.exit(f"compare_scanners: {tool} missing (see the docstring)")
    if not Path(GANDER).exists():
        sys.exit(f"compare_scanners: {GANDER} missing (cargo build --release -p gander-cli)")
    w = Path(tempfile.mkdtemp(prefix="gander-compare-"))
    procs = []
    try:
        subprocess.run([GANDER, "pki", "init", "--dir", str(w / "pki"), "--rsa", "1024,2048",
                        "--ecdsa", "p256"], check=True, capture_output=True)
        r = w / "pki/rsa2048"
        (w / "client.toml").write_text(
            f'[tls]\nca = ["{r}/ca.pem", "{w}/pki/p256/ca.pem", "{w}/pki/rsa1024/ca.pem"]\n'
            f'cert = "{r}/client.pem"\nkey = "{r}/client.key"\n')
        (w / "mms.toml").write_text(
            f'listen = "127.0.0.1:3782"\n[tls]\nca = "{r}/ca.pem"\ncert = "{r}/server.pem"\n'
            f'key = "{r}/server.key"\nversions = ["1.2", "1.3"]\n')
        m = matrix(w)
        only = set(a.only.split(",")) if a.only else None
        names = [n for n in m if not only or n in only]
        for n in names:
            port, argv = m[n]
            p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
            procs.append(p)
            if not wait_port(port):
                print(f"{n}: server did not start", file=sys.stderr)
        results = {}
        lock = threading.Lock()

        def one(n):
            port = m[n][0]
            target = f"127.0.0.1:{port}"
            facts, times = {}, {}
            p, times["gander"] = run([GANDER, "tls", "survey", target, "--tls",
                                      str(w / "client.toml"), "--json"], 300)
            try:
                gj = json.loads(p.stdout) if p else {}
            except json.JSONDecodeError:
                gj = {}
            facts["gander"] = gander_facts(gj)
            sj_path = w / f"{n}.sslyze.json"
            _, times["sslyze"] = run([SSLYZE, "--json_out", str(sj_path), "--cert",
                                      f"{r}/client.pem", "--key", f"{r}/client.key",
                                      *SSLYZE_COMMANDS, target], 600)
            try:
                sj = json.loads(sj_path.read_text())
            except (OSError, json.JSONDecodeError):
                sj = {}
            facts["sslyze"] = sslyze_facts(sj)
            tj_path = w / f"{n}.testssl.json"
            _, times["testssl"] = run([TESTSSL, "--jsonfile", str(tj_path), "--warnings", "batch",
                                       "--color", "0", "--nodns", "min", "-p", "-E", "-S", "-P",
                                       "-U", "-f", target], 900)
            try:
                tj = json.loads(tj_path.read_text())
            except (OSError, json.JSONDecodeError):
                tj = []
            facts["testssl"] = testssl_facts(tj if isinstance(tj, list) else [])
            if a.keep:
                k = Path(a.keep)
                k.mkdir(parents=True, exist_ok=True)
                (k / f"{n}.gander.json").write_text(json.dumps(gj, indent=1))
                for src in (sj_path, tj_path):
                    if src.exists():
                        shutil.copy(src, k / src.name)
            with lock:
                compare(n, facts, times, results)
                sys.stdout.flush()

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            list(ex.map(one, names))
        if a.json:
            Path(a.json).write_text(json.dumps(results, indent=1))
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except OSError:
                pass
            p.wait()
        shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    main()
